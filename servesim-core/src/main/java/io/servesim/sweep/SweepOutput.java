package io.servesim.sweep;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.Numbers;
import io.servesim.report.AtomicFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A sweep's files: {@code results.csv} (one row per point, ordered by point id), {@code pareto.csv} (the points no
 * other point beats on both Pareto axes), {@code best.yaml} (the winning point's full config, runnable by
 * {@code servesim replay}), and for bisect {@code capacity.csv}. Numbers are fixed-decimal, Locale.ROOT: the files
 * are byte-identical whatever engine or parallelism produced them.
 */
public final class SweepOutput {
    private SweepOutput() {}

    /** The results.csv text. */
    public static String resultsCsv(SweepSpec spec, List<PointResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append("point_id,deployment");
        for (SweepSpec.Dimension d : spec.dimensions()) {
            sb.append(',').append(d.path());
        }
        if (spec.search().equals("bisect")) {
            sb.append(',').append(spec.loadPath());
        }
        sb.append(",gpus,completed,duration_s,ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,tpot_p90_ms,tpot_p99_ms,e2e_p90_ms,"
                + "e2e_p99_ms,output_tok_s,goodput_rps,throughput_per_gpu,goodput_per_gpu,cost_per_million_tokens,"
                + "slo_pass,objective,error\n");
        List<PointResult> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparingInt(PointResult::pointId));
        for (PointResult r : sorted) {
            row(sb, r);
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, PointResult r) {
        sb.append(r.pointId()).append(',').append(r.deployment());
        List<String> settings = r.overrides()
                .subList(Sweeps.POINT_DEFAULTS.size(), r.overrides().size());
        for (String s : settings) {
            sb.append(',').append(csv(s.substring(s.indexOf('=') + 1)));
        }
        sb.append(',').append(r.gpus()).append(',').append(r.completed());
        for (double v : new double[] {
            r.durationS(),
            r.ttftP50Ms(),
            r.ttftP90Ms(),
            r.ttftP99Ms(),
            r.tpotP90Ms(),
            r.tpotP99Ms(),
            r.e2eP90Ms(),
            r.e2eP99Ms(),
            r.outputTokS(),
            r.goodputRps(),
            r.throughputPerGpu(),
            r.goodputPerGpu(),
            r.costPerMillionTokens()
        }) {
            sb.append(',').append(num(v));
        }
        sb.append(',').append(r.error() == null && r.sloPass());
        sb.append(',').append(num(r.objective()));
        sb.append(',').append(r.error() == null ? "" : csv(r.error()));
        sb.append('\n');
    }

    static String num(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "" : Numbers.fixedString(v, 6);
    }

    private static String csv(String s) {
        return s.contains(",") || s.contains("\"") || s.contains("\n")
                ? "\"" + s.replace("\"", "\"\"").replace("\n", " ") + "\""
                : s;
    }

    /** Points not dominated on (minimise x, maximise y) among successful points, in point order. */
    public static List<PointResult> pareto(SweepSpec spec, List<PointResult> results) {
        List<PointResult> ok = new ArrayList<>();
        for (PointResult r : results) {
            if (r.error() == null
                    && !Double.isNaN(r.metric(spec.paretoX()))
                    && !Double.isNaN(r.metric(spec.paretoY()))) {
                ok.add(r);
            }
        }
        List<PointResult> front = new ArrayList<>();
        for (PointResult a : ok) {
            boolean dominated = false;
            for (PointResult b : ok) {
                double ax = a.metric(spec.paretoX());
                double ay = a.metric(spec.paretoY());
                double bx = b.metric(spec.paretoX());
                double by = b.metric(spec.paretoY());
                if (bx <= ax && by >= ay && (bx < ax || by > ay)) {
                    dominated = true;
                    break;
                }
            }
            if (!dominated) {
                front.add(a);
            }
        }
        front.sort(Comparator.comparingInt(PointResult::pointId));
        return front;
    }

    /**
     * The best point: among points that meet the SLO (all points when none does), the best objective (highest,
     * or lowest for cost), ties to the lowest point id. Null when every point failed.
     */
    public static PointResult best(SweepSpec spec, List<PointResult> results) {
        boolean anyPass = results.stream().anyMatch(r -> r.error() == null && r.sloPass());
        boolean minimise = spec.objective().equals("cost_per_million_tokens");
        PointResult best = null;
        for (PointResult r : results) {
            if (r.error() != null || (anyPass && !r.sloPass()) || Double.isNaN(r.objective())) {
                continue;
            }
            if (best == null
                    || (minimise ? r.objective() < best.objective() : r.objective() > best.objective())
                    || (r.objective() == best.objective() && r.pointId() < best.pointId())) {
                best = r;
            }
        }
        return best;
    }

    /**
     * Writes results.csv, pareto.csv, best.yaml and (bisect) capacity.csv into {@code dir}, deletes the ones this
     * sweep has not, and returns the names written.
     */
    public static List<String> writeAll(SweepSpec spec, Sweeps.Outcome outcome, Path dir) {
        List<String> written = new java.util.ArrayList<>(List.of("results.csv", "pareto.csv"));
        AtomicFiles.writeString(dir.resolve("results.csv"), resultsCsv(spec, outcome.results()));
        AtomicFiles.writeString(dir.resolve("pareto.csv"), resultsCsv(spec, pareto(spec, outcome.results())));
        PointResult best = best(spec, outcome.results());
        if (best != null) {
            RunSpec rs = new RunSpec(
                    best.pointId(),
                    best.deployment(),
                    spec.baseYaml(),
                    spec.baseSource(),
                    spec.baseDir(),
                    best.overrides()
                            .subList(
                                    Sweeps.POINT_DEFAULTS.size(),
                                    best.overrides().size()));
            AtomicFiles.writeString(
                    dir.resolve("best.yaml"),
                    "# best sweep point " + best.pointId() + " (" + spec.objective() + " " + num(best.objective())
                            + ", SLO " + (best.sloPass() ? "met" : "NOT met by any point") + "): "
                            + String.join(" ", rs.overrides()) + "\n"
                            + ConfigLoader.toYamlWithAbsolutePaths(rs.config()));
            written.add("best.yaml");
        } else {
            AtomicFiles.delete(dir.resolve("best.yaml"));
        }
        if (!outcome.capacities().isEmpty()) {
            StringBuilder sb = new StringBuilder("deployment");
            for (SweepSpec.Dimension d : spec.dimensions()) {
                sb.append(',').append(d.path());
            }
            sb.append(",capacity_").append(spec.loadPath().replace('.', '_')).append('\n');
            for (Sweeps.Capacity c : outcome.capacities()) {
                sb.append(c.deployment());
                for (String s : c.settings()) {
                    sb.append(',').append(csv(s.substring(s.indexOf('=') + 1)));
                }
                sb.append(',').append(num(c.capacity())).append('\n');
            }
            AtomicFiles.writeString(dir.resolve("capacity.csv"), sb.toString());
            written.add("capacity.csv");
        } else {
            AtomicFiles.delete(dir.resolve("capacity.csv")); // not an earlier sweep's capacities beside these results
        }
        return written;
    }
}
