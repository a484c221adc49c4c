package io.servesim.cli;

import io.servesim.api.Servesim;
import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.Numbers;
import io.servesim.report.AtomicFiles;
import io.servesim.run.RunResult;
import io.servesim.validate.Corpus;
import io.servesim.validate.MeasuredRun;
import io.servesim.validate.RunFolder;
import io.servesim.validate.Validation;
import io.servesim.workload.trace.TraceFormatException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code servesim validate}: replay a workload and compare its latency distributions with a measured run, given as
 * files ({@code --config}, {@code --measured}), as a run folder ({@code --run}) or as a corpus of them
 * ({@code --corpus}).
 */
@Command(
        name = "validate",
        mixinStandardHelpOptions = true,
        description = "Replay --workload with --config and compare TTFT, TPOT and E2E with a measured run;"
                + " writes validation.json; exit 1 when a --tolerance is exceeded. With --run DIR the run folder"
                + " (meta.json, workload.jsonl, measured.jsonl) gives the deployment, workload and measurement;"
                + " with --corpus DIR every run folder in DIR is validated (OUT/<run>/validation.json,"
                + " OUT/corpus.csv).")
public final class ValidateCommand implements Callable<Integer> {
    /** Default output directory of the single-run modes. */
    static final Path DEFAULT_OUT = Path.of("out/validate");

    @Option(
            names = "--config",
            paramLabel = "CONFIG",
            description = "Deployment config (YAML); with --run or --corpus the base config the run's deployment is"
                    + " applied to (default: servesim's defaults).")
    Path config;

    @Option(
            names = "--workload",
            paramLabel = "FILE",
            description = "The measured run's workload (vllm_bench JSONL with token ids); default: the config's.")
    Path workload;

    @Option(
            names = "--measured",
            paramLabel = "FILE",
            description = "Measured per-request JSONL (queued_ts, first_token_ts, last_token_ts, or a run folder's"
                    + " ttft_ms, tpot_ms, e2e_ms) or CSV request_id,ttft_ms,tpot_ms,e2e_ms.")
    Path measured;

    @Option(
            names = "--run",
            paramLabel = "DIR",
            description = "A measured-run folder: meta.json, workload.jsonl, measured.jsonl (docs/accuracy.md).")
    Path run;

    @Option(names = "--corpus", paramLabel = "DIR", description = "A folder of measured-run folders; needs --out.")
    Path corpus;

    @Option(
            names = "--threads",
            defaultValue = "1",
            paramLabel = "N",
            description = "Runs of a --corpus evaluated at once (default: ${DEFAULT-VALUE}); output is identical.")
    int threads;

    @Option(
            names = "--tolerance",
            split = ",",
            paramLabel = "METRIC=PCT",
            description = "Largest |mean error| in %%, e.g. ttft=25,tpot=15,e2e=15 (or ttft_p99=30).")
    List<String> tolerance = new ArrayList<>();

    @Option(names = "--set", paramLabel = "PATH=VALUE", description = "Override a config key.")
    List<String> overrides = new ArrayList<>();

    /** What {@code --meta} does (validate and calibrate). */
    static final String META_FACT = "a fact a run's meta.json lacks, read in place of its FIELD, for the run named RUN"
            + " (or every run whose name starts with RUN's text before a final *), e.g."
            + " 'blis_*:vllm_version=0.15.1' (repeatable).";

    @Option(names = "--meta", paramLabel = "RUN:FIELD=VALUE", description = "With --run or --corpus: " + META_FACT)
    List<String> meta = new ArrayList<>();

    /** {@code --meta} parsed (a malformed one is a config error naming the option). */
    static List<RunFolder.MetaFact> facts(List<String> meta) {
        return meta.stream().map(RunFolder.MetaFact::parse).toList();
    }

    @Option(
            names = "--window-s",
            paramLabel = "SECONDS",
            description = "Also compare the means of each window of this many seconds of arrivals (a table, and"
                    + " windows in validation.json): where in a run the error arises. Needs arrival times: --run,"
                    + " --corpus, or vLLM's per-request JSONL as --measured.")
    Double windowS;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            description = "Output directory (default: out/validate; required with --corpus).")
    Path out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** Work that reads configs and measured files: its user errors become a message and exit code 2. */
    @FunctionalInterface
    interface Body<T> {
        /** Runs the work. */
        T run();
    }

    /** Runs {@code body}; config, input and I/O errors are printed to {@code err} and give null (exit 2). */
    static <T> T reportingUserErrors(PrintWriter err, Body<T> body) {
        try {
            return body.run();
        } catch (ConfigException e) {
            err.println("config error: " + e.getMessage());
        } catch (TraceFormatException e) {
            err.println("input error: " + e.getMessage());
        } catch (UncheckedIOException e) {
            err.println("error: " + Main.describe(e));
        }
        err.flush();
        return null;
    }

    /**
     * Loads the config with the workload pointed at {@code workload} (vllm_bench) when given; the loader's warnings
     * go to {@code err}.
     */
    static SimConfig load(Path config, Path workload, List<String> overrides, PrintWriter err) {
        List<String> sets = new ArrayList<>();
        if (workload != null) {
            sets.add("workload.type=trace");
            sets.add("workload.trace.format=vllm_bench");
            sets.add("workload.trace.path=" + workload);
        }
        sets.addAll(overrides);
        ConfigLoader.Loaded loaded = ConfigLoader.loadWithWarnings(config, sets);
        Main.warn(err, loaded.warnings());
        return loaded.config();
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        Map<String, Double> limits;
        try {
            limits = parseTolerance(tolerance);
        } catch (IllegalArgumentException e) {
            err.println("error: --tolerance: " + e.getMessage());
            return Main.USAGE;
        }
        checkModes();
        if (corpus != null) {
            return corpus(limits);
        }
        if (run != null) {
            return run(limits);
        }
        return files(limits);
    }

    /** Rejects option combinations that mix the modes, naming what to give instead. */
    private void checkModes() {
        CommandLine cl = spec.commandLine();
        if (run != null && corpus != null) {
            throw new ParameterException(
                    cl, "--run and --corpus are mutually exclusive (one run folder, or a folder" + " of them)");
        }
        if ((run != null || corpus != null) && (measured != null || workload != null)) {
            throw new ParameterException(
                    cl,
                    (run != null ? "--run" : "--corpus") + " reads each run folder's workload.jsonl and measured.jsonl;"
                            + " leave out " + (measured != null ? "--measured" : "--workload"));
        }
        if (corpus != null && out == null) {
            throw new ParameterException(
                    cl, "--corpus needs --out DIR (it writes DIR/<run>/validation.json and DIR/corpus.csv)");
        }
        if (threads < 1) {
            throw new ParameterException(cl, "--threads must be >= 1, got " + threads);
        }
        if (windowS != null && (!(windowS > 0) || Double.isInfinite(windowS))) {
            throw new ParameterException(cl, "--window-s must be a positive number of seconds, got " + windowS);
        }
        if (windowS != null && measured != null && measured.toString().endsWith(".csv")) {
            throw new ParameterException(
                    cl,
                    "--window-s needs arrival times: a CSV measurement has none (use vLLM's per-request JSONL with"
                            + " queued_ts, or --run / --corpus)");
        }
        if (run == null && corpus == null && (config == null || measured == null)) {
            throw new ParameterException(
                    cl,
                    "missing " + (config == null ? "--config" : "--measured")
                            + " (give --config and --measured, or --run DIR, or --corpus DIR --out OUT)");
        }
    }

    /** {@code --config C --measured M [--workload W]}: today's single-file mode. */
    private int files(Map<String, Double> limits) {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<Corpus.Window> windows = new ArrayList<>();
        Validation v = reportingUserErrors(err, () -> {
            SimConfig cfg = load(config, workload, overrides, err);
            MeasuredRun m = MeasuredRun.read(measured);
            RunResult r = Servesim.run(cfg).raw();
            if (windowS != null) {
                windows.addAll(Corpus.windows(measured, r, windowS));
            }
            return Validation.of(m, r);
        });
        if (v == null) {
            return Main.USAGE;
        }
        o.print(table(v));
        o.print(windowTable(windows));
        List<String> exceeded = exceeded(v, limits);
        Path dir = out == null ? DEFAULT_OUT : out;
        AtomicFiles.writeString(dir.resolve("validation.json"), json(v, limits, exceeded, null, windows));
        o.println("wrote " + dir.resolve("validation.json").toAbsolutePath().normalize());
        o.flush();
        return verdict(err, exceeded);
    }

    /** {@code --run DIR}: one run folder. */
    private int run(Map<String, Double> limits) {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Corpus.Result r = reportingUserErrors(err, () -> {
            List<RunFolder.MetaFact> facts = facts(meta);
            RunFolder folder = RunFolder.read(run, facts);
            for (RunFolder.MetaFact f : facts) {
                if (!f.matches(folder.name())) {
                    throw new io.servesim.config.ConfigException(
                            "--meta", "the run is " + folder.name() + ", not " + f.run() + " (" + f.field() + ")");
                }
            }
            return Corpus.evaluate(folder, config, overrides, windowS == null ? 0 : windowS);
        });
        if (r == null) {
            return Main.USAGE;
        }
        Main.warn(err, r.warnings());
        o.print(CorpusOutput.describe(r));
        o.print(table(r.validation()));
        o.print(windowTable(r.windows()));
        List<String> exceeded = exceeded(r.validation(), limits);
        Path dir = out == null ? DEFAULT_OUT : out;
        AtomicFiles.writeString(dir.resolve("validation.json"), json(r.validation(), limits, exceeded, r));
        AtomicFiles.writeString(dir.resolve("requests.csv"), r.requestsCsv());
        o.println("wrote " + dir.resolve("validation.json").toAbsolutePath().normalize() + " and requests.csv");
        o.flush();
        return verdict(err, exceeded);
    }

    /** {@code --corpus DIR --out OUT}: every run folder of DIR, one table row each. */
    private int corpus(Map<String, Double> limits) {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // a run that cannot be read or replayed is reported and skipped, so one unsupported deployment does not cost
        // the others their validation; the exit code still says so
        Map<String, String> notValidated = new TreeMap<>();
        List<RunFolder> runs = reportingUserErrors(
                err,
                () -> RunFolder.corpus(corpus, facts(meta), (name, e) -> {
                    notValidated.put(name, message(e));
                    err.println("not validated " + name + ": " + message(e));
                    err.flush();
                }));
        if (runs == null) {
            return Main.USAGE;
        }
        Set<String> warned = new LinkedHashSet<>();
        List<String> exceeded = new ArrayList<>();
        int[] done = {0};
        // manifest.json last (report.RunDirectory): a killed or failed validation leaves a directory that says so
        io.servesim.report.RunDirectory.CORPUS.begin(out);
        List<Corpus.Result> results = reportingUserErrors(
                err,
                () -> Corpus.evaluate(
                        runs,
                        config,
                        overrides,
                        threads,
                        windowS == null ? 0 : windowS,
                        r -> {
                            List<String> ex = exceeded(r.validation(), limits);
                            ex.forEach(e -> exceeded.add(r.run().name() + ": " + e));
                            AtomicFiles.writeString(
                                    out.resolve(r.run().name()).resolve("validation.json"),
                                    json(r.validation(), limits, ex, r));
                            AtomicFiles.writeString(
                                    out.resolve(r.run().name()).resolve("requests.csv"), r.requestsCsv());
                            for (String w : r.warnings()) {
                                if (warned.add(w)) {
                                    Main.warn(err, List.of(w));
                                }
                            }
                            err.printf(
                                    Locale.ROOT,
                                    "validated %s (%d/%d)%n",
                                    r.run().name(),
                                    ++done[0],
                                    runs.size());
                            err.flush();
                        },
                        (run, e) -> {
                            notValidated.put(run.name(), message(e));
                            err.printf(
                                    Locale.ROOT,
                                    "not validated %s (%d/%d): %s%n",
                                    run.name(),
                                    ++done[0],
                                    runs.size(),
                                    message(e));
                            err.flush();
                        }));
        if (results == null) {
            return Main.USAGE;
        }
        o.print(CorpusOutput.corpusTable(results));
        if (!notValidated.isEmpty()) {
            o.println("not validated (" + notValidated.size() + "):");
            notValidated.forEach((run, why) -> o.println("  " + run + ": " + why));
        }
        AtomicFiles.writeString(out.resolve("corpus.csv"), CorpusOutput.corpusCsv(results, notValidated));
        List<String> written = new ArrayList<>(List.of("corpus.csv"));
        for (Corpus.Result r : results) {
            written.add(r.run().name() + "/validation.json");
            written.add(r.run().name() + "/requests.csv");
        }
        // run folders validated before but not now lose their stale validation.json
        io.servesim.report.RunDirectory.CORPUS.finish(out, written);
        o.println("wrote " + out.resolve("corpus.csv").toAbsolutePath().normalize() + " and " + results.size()
                + " validation.json and requests.csv files (listed in " + io.servesim.report.RunDirectory.MANIFEST
                + ")");
        o.flush();
        int verdict = verdict(err, exceeded);
        if (!notValidated.isEmpty()) {
            err.println(notValidated.size() + " of " + (results.size() + notValidated.size())
                    + " runs not validated (their errors above and in corpus.csv's error column)");
            err.flush();
            return Main.USAGE;
        }
        return verdict;
    }

    /** A skipped run's error as one line: the message the user would get from validating it alone. */
    static String message(RuntimeException e) {
        String m = e instanceof UncheckedIOException u ? Main.describe(u) : e.getMessage();
        return m == null ? e.getClass().getSimpleName() : m.replace('\n', ' ');
    }

    private static List<String> exceeded(Validation v, Map<String, Double> limits) {
        List<String> exceeded = new ArrayList<>();
        for (var e : limits.entrySet()) {
            String[] k = e.getKey().split("_", 2);
            String stat = k.length > 1 ? k[1] : "mean";
            double err2 = Math.abs(v.metrics().get(k[0] + "_ms").errorPct(stat));
            if (err2 > e.getValue()) {
                exceeded.add(String.format(Locale.ROOT, "%s %s error %.1f%% > %.1f%%", k[0], stat, err2, e.getValue()));
            }
        }
        return exceeded;
    }

    private static int verdict(PrintWriter err, List<String> exceeded) {
        if (!exceeded.isEmpty()) {
            err.println("tolerance exceeded: " + String.join("; ", exceeded));
            err.flush();
            return Main.FAILURE;
        }
        return Main.OK;
    }

    static Map<String, Double> parseTolerance(List<String> specs) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String s : specs) {
            String[] kv = s.split("=", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException("expected METRIC=PCT, got '" + s + "'");
            }
            String key = kv[0].strip();
            String metric = key.split("_", 2)[0];
            String stat = key.contains("_") ? key.split("_", 2)[1] : "mean";
            if (!List.of("ttft", "tpot", "e2e").contains(metric) || !Validation.STATS.contains(stat)) {
                throw new IllegalArgumentException(
                        "unknown metric '" + key + "' (ttft, tpot, e2e, optionally _p50/_p90/_p95/_p99)");
            }
            try {
                double pct = Double.parseDouble(kv[1].strip());
                if (!(pct >= 0)) {
                    throw new NumberFormatException();
                }
                out.put(key, pct);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + kv[1] + "' is not a percentage >= 0");
            }
        }
        return out;
    }

    /** The comparison as an aligned console table. */
    static String table(Validation v) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-14s %12s %12s %8s%n", "metric", "measured", "simulated", "diff%"));
        for (var e : v.metrics().entrySet()) {
            for (String stat : Validation.STATS) {
                Validation.Metric m = e.getValue();
                sb.append(String.format(
                        Locale.ROOT,
                        "%-14s %12.1f %12.1f %+7.1f%%%n",
                        e.getKey().replace("_ms", "") + " " + stat,
                        Validation.Metric.value(m.measured(), stat),
                        Validation.Metric.value(m.simulated(), stat),
                        m.errorPct(stat)));
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "%-14s %12s %12.3f%n",
                    e.getKey().replace("_ms", "") + " KS",
                    "",
                    e.getValue().ks()));
        }
        if (!Double.isNaN(v.measuredOutputTokS())) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%-14s %12.1f %12.1f %+7.1f%%%n",
                    "output tok/s",
                    v.measuredOutputTokS(),
                    v.simulatedOutputTokS(),
                    (v.simulatedOutputTokS() - v.measuredOutputTokS()) / v.measuredOutputTokS() * 100));
        }
        return sb.toString();
    }

    /** The per-window means (empty when no windows were asked for). */
    static String windowTable(List<Corpus.Window> rows) {
        if (rows.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%n%-17s %6s  %-25s %-25s %-25s%n",
                "arrivals (s)",
                "req",
                "TTFT mean meas/sim diff%",
                "TPOT mean meas/sim diff%",
                "E2E mean meas/sim diff%"));
        for (Corpus.Window w : rows) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%-17s %6d ",
                    String.format(Locale.ROOT, "%.0f-%.0f", w.fromS(), w.toS()),
                    w.validation().metrics().get("ttft_ms").measured().count()));
            for (String metric : List.of("ttft_ms", "tpot_ms", "e2e_ms")) {
                Validation.Metric m = w.validation().metrics().get(metric);
                sb.append(String.format(
                        Locale.ROOT,
                        " %9.1f %9.1f %+5.1f%%",
                        m.measured().mean(),
                        m.simulated().mean(),
                        m.errorPct("mean")));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    static String json(Validation v, Map<String, Double> limits, List<String> exceeded) {
        return json(v, limits, exceeded, null);
    }

    /** validation.json: the comparison, and with a run folder ({@code r} non-null) a {@code run} object first. */
    static String json(Validation v, Map<String, Double> limits, List<String> exceeded, Corpus.Result r) {
        return json(v, limits, exceeded, r, r == null ? List.of() : r.windows());
    }

    /** As {@link #json(Validation, Map, List, Corpus.Result)}, with the arrival windows to write. */
    static String json(
            Validation v,
            Map<String, Double> limits,
            List<String> exceeded,
            Corpus.Result r,
            List<Corpus.Window> arrivalWindows) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        if (r != null) {
            RunFolder folder = r.run();
            ObjectNode run = root.putObject("run");
            run.put("name", folder.name());
            run.put("gpu", folder.gpu());
            run.put("model", folder.model());
            run.put("tensor_parallel", folder.tensorParallel());
            run.put("data_parallel", folder.dataParallel());
            run.put("expert_parallel", folder.expertParallel());
            run.put("client_side", folder.clientSide());
            run.put("client_overhead_ms", Numbers.fixed(r.client().overheadMs(), 6));
            run.put("client_per_request_us", Numbers.fixed(r.client().perRequestUs(), 6));
            run.put("measured_failed", r.measuredFailed());
            if (r.config().workload().clientTimeoutS() != null) {
                run.put("client_timeout_s", r.config().workload().clientTimeoutS());
                run.put("simulated_timed_out", r.simulatedTimedOut());
            }
            if (folder.sharedPrefix() != null && !folder.tokenIds()) {
                ObjectNode sp = run.putObject("shared_prefix");
                sp.put("tokens", folder.sharedPrefix().tokens());
                sp.put("groups", folder.sharedPrefix().groups());
                if (folder.sharedPrefix().repeatPeriod() == null) {
                    sp.putNull("repeat_period_inferred");
                } else {
                    sp.put("repeat_period_inferred", folder.sharedPrefix().repeatPeriod());
                }
            } else {
                run.putNull("shared_prefix");
            }
            RunFolder.NumGpuBlocksCheck b = r.numGpuBlocks();
            ObjectNode blocks = run.putObject("num_gpu_blocks");
            if (b.stated() == null) {
                blocks.putNull("stated");
            } else {
                blocks.put("stated", b.stated());
            }
            if (b.derived() == null) {
                blocks.putNull("derived");
                blocks.put("derived_problem", b.derivedProblem());
            } else {
                blocks.put("derived", b.derived());
            }
            blocks.put("used", b.used());
            if (Double.isNaN(b.derivedVsStatedPct())) {
                blocks.putNull("derived_vs_stated_pct");
            } else {
                blocks.put("derived_vs_stated_pct", Numbers.fixed(b.derivedVsStatedPct(), 3));
            }
        }
        ObjectNode metrics = root.putObject("metrics");
        for (var e : v.metrics().entrySet()) {
            ObjectNode m = metrics.putObject(e.getKey());
            for (String stat : Validation.STATS) {
                ObjectNode s = m.putObject(stat);
                s.put(
                        "measured",
                        Numbers.fixed(Validation.Metric.value(e.getValue().measured(), stat), 6));
                s.put(
                        "simulated",
                        Numbers.fixed(Validation.Metric.value(e.getValue().simulated(), stat), 6));
                s.put("error_pct", Numbers.fixed(e.getValue().errorPct(stat), 6));
            }
            m.put("ks", Numbers.fixed(e.getValue().ks(), 6));
            m.put("measured_count", e.getValue().measured().count());
            m.put("simulated_count", e.getValue().simulated().count());
        }
        ObjectNode t = root.putObject("output_throughput_tok_s");
        if (!Double.isNaN(v.measuredOutputTokS())) {
            t.put("measured", Numbers.fixed(v.measuredOutputTokS(), 6));
        }
        t.put("simulated", Numbers.fixed(v.simulatedOutputTokS(), 6));
        if (!arrivalWindows.isEmpty()) {
            var windows = root.putArray("windows");
            for (Corpus.Window w : arrivalWindows) {
                ObjectNode o = windows.addObject();
                o.put("from_s", Numbers.fixed(w.fromS(), 6));
                o.put("to_s", Numbers.fixed(w.toS(), 6));
                for (var e : w.validation().metrics().entrySet()) {
                    Validation.Metric m = e.getValue();
                    ObjectNode mean = o.putObject(e.getKey());
                    mean.put("measured_mean", Numbers.fixed(m.measured().mean(), 6));
                    mean.put("simulated_mean", Numbers.fixed(m.simulated().mean(), 6));
                    mean.put("error_pct", Numbers.fixed(m.errorPct("mean"), 6));
                    mean.put("measured_count", m.measured().count());
                    mean.put("simulated_count", m.simulated().count());
                }
            }
        }
        ObjectNode tol = root.putObject("tolerance_pct");
        limits.forEach((k, val) -> tol.put(k, val));
        var ex = root.putArray("exceeded");
        exceeded.forEach(ex::add);
        root.put("passed", exceeded.isEmpty());
        return JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    }
}
