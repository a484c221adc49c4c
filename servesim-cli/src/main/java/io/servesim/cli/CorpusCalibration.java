package io.servesim.cli;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.AtomicFiles;
import io.servesim.validate.CorpusFit;
import io.servesim.validate.RunFolder;
import io.servesim.validate.Validation;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** {@code servesim calibrate --corpus}: one global profile fitted on a corpus, scored in and out of sample. */
final class CorpusCalibration {
    private static final List<String> KINDS = List.of("run", "gpu", "model");

    private CorpusCalibration() {}

    static int run(CalibrateCommand c, PrintWriter o, PrintWriter err) {
        for (String k : c.leaveOut) {
            if (!KINDS.contains(k) && !k.equals("none")) {
                err.println("error: --leave-out: unknown kind '" + k + "' (run, gpu, model or none)");
                return Main.USAGE;
            }
        }
        if (c.threads < 1 || c.maxIterations < 1) {
            err.println("error: --threads and --max-iterations must be >= 1");
            return Main.USAGE;
        }
        if (!(c.priorWeight >= 0) || !Double.isFinite(c.priorWeight)) {
            err.println("error: --prior-weight must be a finite number >= 0, got " + c.priorWeight);
            return Main.USAGE;
        }
        // as validate --corpus: a run that cannot be read or built is reported and left out of the fit, and the exit
        // code says so after everything is written
        java.util.Map<String, String> skipped = new java.util.TreeMap<>();
        List<CorpusFit.Case> cases = ValidateCommand.reportingUserErrors(err, () -> {
            List<CorpusFit.Case> out = new ArrayList<>();
            for (RunFolder r : RunFolder.corpus(
                    c.corpus,
                    ValidateCommand.facts(c.meta),
                    (name, e) -> skipped.put(name, ValidateCommand.message(e)))) {
                try {
                    out.add(CorpusFit.caseOf(r, c.config, c.overrides));
                } catch (RuntimeException e) {
                    if (!RunFolder.isInputError(e)) {
                        throw e;
                    }
                    skipped.put(r.name(), ValidateCommand.message(e));
                }
            }
            return out;
        });
        if (cases == null) {
            return Main.USAGE;
        }
        skipped.forEach((run, why) -> err.println("not fitted " + run + ": " + why));
        if (cases.isEmpty()) {
            err.println("error: corpus " + c.corpus + ": no run could be read and built");
            return Main.USAGE;
        }
        SimConfig base = c.config == null
                ? ValidateCommand.reportingUserErrors(err, () -> ConfigLoader.fromYaml("{}", "defaults", c.overrides))
                : ValidateCommand.reportingUserErrors(err, () -> ConfigLoader.load(c.config, c.overrides));
        if (base == null) {
            return Main.USAGE;
        }
        // every fit starts from the literature prior and the kernel-efficiency start, not from the defaults (they are
        // the last fit: a held-out run would inform its own fold)
        CorpusFit fit = new CorpusFit(cases, c.threads, c.maxIterations).priorWeight(c.priorWeight);
        try {
            fit.hold(List.copyOf(c.hold)); // names a fitted coefficient each, and leaves one to fit
        } catch (IllegalArgumentException e) {
            err.println("error: --hold: " + e.getMessage());
            return Main.USAGE;
        }
        // held coefficients keep the base config's values (defaults or --set) in every start, fit and fold
        List<CorpusFit.Profile> start =
                CorpusFit.starts(base.timing().roofline(), CorpusFit.clientFrontend(base), List.copyOf(c.hold));
        fit.onProgress(line -> {
            err.println("calibrate: " + line);
            err.flush();
        });
        o.printf(Locale.ROOT, "fitting %s on %d runs (%s)%n", fit.fitted(), cases.size(), c.corpus);
        if (!c.hold.isEmpty()) {
            StringBuilder held = new StringBuilder("held:");
            for (String k : c.hold) {
                held.append(
                        String.format(Locale.ROOT, "  %s %.4g", k, start.get(0).get(k)));
            }
            o.println(held);
        }
        CorpusFit.Profile p = fit.fit(start, x -> true);
        printProfile(o, p, fit.fitted());
        List<CorpusFit.Score> inSample = fit.score(p, x -> true);
        o.println("in sample (all runs fitted together, each replayed whole):");
        o.print(table(inSample));
        List<CorpusFit.Fold> folds = new ArrayList<>();
        for (String kind : KINDS) {
            if (!c.leaveOut.contains(kind)) {
                continue;
            }
            Function<CorpusFit.Case, String> key = switch (kind) {
                case "run" -> CorpusFit.Case::name;
                case "gpu" -> CorpusFit.Case::gpu;
                default -> CorpusFit.Case::model;
            };
            List<CorpusFit.Fold> these = fit.leaveOneOut(kind, start, key);
            folds.addAll(these);
            List<CorpusFit.Score> held = new ArrayList<>();
            these.forEach(f -> held.addAll(f.scores()));
            o.printf(Locale.ROOT, "leave one %s out (each row scored with a profile fitted without it):%n", kind);
            o.print(table(held));
            o.print(foldSpread(these, fit.fitted(), p));
        }
        AtomicFiles.writeString(
                c.out, CorpusFit.profileYaml(p, fit.fitted(), c.corpus.toString(), c.priorWeight, inSample, folds));
        AtomicFiles.writeString(c.out.resolveSibling(c.out.getFileName() + ".folds.csv"), foldsCsv(p, inSample, folds));
        o.printf(
                Locale.ROOT,
                "%d simulations; wrote %s (use it with --set timing.calibration=%s) and %s.folds.csv%n",
                fit.simulations(),
                c.out.toAbsolutePath().normalize(),
                c.out,
                c.out.getFileName());
        o.flush();
        if (!skipped.isEmpty()) {
            err.println(skipped.size() + " of " + (cases.size() + skipped.size())
                    + " runs not fitted (their errors above); the profile is fitted on the others");
            err.flush();
            return Main.USAGE;
        }
        return Main.OK;
    }

    private static void printProfile(PrintWriter o, CorpusFit.Profile p, List<String> fitted) {
        StringBuilder sb = new StringBuilder("fitted:");
        for (String k : fitted) {
            sb.append(String.format(Locale.ROOT, "  %s %.4g", k, p.get(k)));
        }
        o.println(sb);
    }

    /**
     * One line: each fitted coefficient's range over the folds, beside the full fit's value. A coefficient the runs do
     * not pin moves a lot between folds while the errors barely change (docs/accuracy.md, item 17).
     */
    static String foldSpread(List<CorpusFit.Fold> folds, List<String> fitted, CorpusFit.Profile full) {
        StringBuilder sb = new StringBuilder("  fitted in these folds (full fit):");
        for (String k : fitted) {
            double lo = Double.POSITIVE_INFINITY;
            double hi = Double.NEGATIVE_INFINITY;
            for (CorpusFit.Fold f : folds) {
                lo = Math.min(lo, f.profile().get(k));
                hi = Math.max(hi, f.profile().get(k));
            }
            sb.append(String.format(Locale.ROOT, "  %s %.4g-%.4g (%.4g)", k, lo, hi, full.get(k)));
        }
        return sb.append('\n').toString();
    }

    private static final String[] METRICS = {"ttft_ms", "tpot_ms", "e2e_ms"};

    static String table(List<CorpusFit.Score> scores) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT, "  %-44s %9s %9s %9s %9s %9s%n", "run", "TTFT%", "TPOT%", "E2E%", "TTFTp99%", "E2Ep99%"));
        for (CorpusFit.Score s : scores) {
            Validation v = s.validation();
            sb.append(String.format(
                    Locale.ROOT,
                    "  %-44s %+9.1f %+9.1f %+9.1f %+9.1f %+9.1f%n",
                    s.run().name(),
                    v.metrics().get("ttft_ms").errorPct("mean"),
                    v.metrics().get("tpot_ms").errorPct("mean"),
                    v.metrics().get("e2e_ms").errorPct("mean"),
                    v.metrics().get("ttft_ms").errorPct("p99"),
                    v.metrics().get("e2e_ms").errorPct("p99")));
        }
        sb.append(String.format(
                Locale.ROOT,
                "  %-44s %9.1f %9.1f %9.1f %9.1f %9.1f%n",
                "mean |error|",
                CorpusFit.meanAbsErrorPct(scores, METRICS[0], "mean"),
                CorpusFit.meanAbsErrorPct(scores, METRICS[1], "mean"),
                CorpusFit.meanAbsErrorPct(scores, METRICS[2], "mean"),
                CorpusFit.meanAbsErrorPct(scores, METRICS[0], "p99"),
                CorpusFit.meanAbsErrorPct(scores, METRICS[2], "p99")));
        return sb.toString();
    }

    /**
     * One row per run and fold: the held-out run's errors, then the coefficients the fold fitted (the full fit's for
     * the in-sample rows), so a coefficient that drifts between folds shows.
     */
    static String foldsCsv(CorpusFit.Profile full, List<CorpusFit.Score> inSample, List<CorpusFit.Fold> folds) {
        StringBuilder sb = new StringBuilder(
                "fold,held_out,run,ttft_mean_err_pct,tpot_mean_err_pct,e2e_mean_err_pct,ttft_p99_err_pct,"
                        + "tpot_p99_err_pct,e2e_p99_err_pct");
        for (String k : CorpusFit.FITTED) {
            sb.append(',').append(k);
        }
        sb.append('\n');
        for (CorpusFit.Score s : inSample) {
            row(sb, "in_sample", "-", s, full);
        }
        for (CorpusFit.Fold f : folds) {
            for (CorpusFit.Score s : f.scores()) {
                row(sb, "leave_one_" + f.kind() + "_out", f.heldOut(), s, f.profile());
            }
        }
        return sb.toString();
    }

    private static void row(
            StringBuilder sb, String fold, String heldOut, CorpusFit.Score s, CorpusFit.Profile fitted) {
        Validation v = s.validation();
        sb.append(fold).append(',').append(heldOut).append(',').append(s.run().name());
        for (String stat : List.of("mean", "p99")) {
            for (String m : METRICS) {
                sb.append(String.format(Locale.ROOT, ",%.3f", v.metrics().get(m).errorPct(stat)));
            }
        }
        for (String key : CorpusFit.FITTED) {
            sb.append(String.format(Locale.ROOT, ",%.6g", fitted.get(key)));
        }
        sb.append('\n');
    }
}
