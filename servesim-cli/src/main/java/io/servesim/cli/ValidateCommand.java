package io.servesim.cli;

import io.servesim.api.Servesim;
import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.Numbers;
import io.servesim.report.AtomicFiles;
import io.servesim.run.RunResult;
import io.servesim.validate.MeasuredRun;
import io.servesim.validate.Validation;
import io.servesim.workload.trace.TraceFormatException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/** {@code servesim validate}: replay a workload and compare its latency distributions with a measured run. */
@Command(
        name = "validate",
        mixinStandardHelpOptions = true,
        description = "Replay --workload with --config and compare TTFT, TPOT and E2E with a measured run;"
                + " writes validation.json; exit 1 when a --tolerance is exceeded.")
public final class ValidateCommand implements Callable<Integer> {
    @Option(names = "--config", required = true, paramLabel = "CONFIG", description = "Deployment config (YAML).")
    Path config;

    @Option(
            names = "--workload",
            paramLabel = "FILE",
            description = "The measured run's workload (vllm_bench JSONL with token ids); default: the config's.")
    Path workload;

    @Option(
            names = "--measured",
            required = true,
            paramLabel = "FILE",
            description = "Measured per-request JSONL (queued_ts, first_token_ts, last_token_ts) or CSV"
                    + " request_id,ttft_ms,tpot_ms,e2e_ms.")
    Path measured;

    @Option(
            names = "--tolerance",
            split = ",",
            paramLabel = "METRIC=PCT",
            description = "Largest |mean error| in %, e.g. ttft=25,tpot=15,e2e=15 (or ttft_p99=30).")
    List<String> tolerance = new ArrayList<>();

    @Option(names = "--set", paramLabel = "PATH=VALUE", description = "Override a config key.")
    List<String> overrides = new ArrayList<>();

    @Option(
            names = "--out",
            defaultValue = "out/validate",
            description = "Output directory (default: ${DEFAULT-VALUE}).")
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
            err.println("error: " + e.getMessage());
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
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Map<String, Double> limits;
        try {
            limits = parseTolerance(tolerance);
        } catch (IllegalArgumentException e) {
            err.println("error: --tolerance: " + e.getMessage());
            return Main.USAGE;
        }
        Validation v = reportingUserErrors(err, () -> {
            SimConfig cfg = load(config, workload, overrides, err);
            MeasuredRun m = MeasuredRun.read(measured);
            RunResult r = Servesim.run(cfg).raw();
            return Validation.of(m, r);
        });
        if (v == null) {
            return Main.USAGE;
        }
        o.print(table(v));
        List<String> exceeded = new ArrayList<>();
        for (var e : limits.entrySet()) {
            String[] k = e.getKey().split("_", 2);
            String stat = k.length > 1 ? k[1] : "mean";
            double err2 = Math.abs(v.metrics().get(k[0] + "_ms").errorPct(stat));
            if (err2 > e.getValue()) {
                exceeded.add(String.format(Locale.ROOT, "%s %s error %.1f%% > %.1f%%", k[0], stat, err2, e.getValue()));
            }
        }
        AtomicFiles.writeString(out.resolve("validation.json"), json(v, limits, exceeded));
        o.println("wrote " + out.resolve("validation.json").toAbsolutePath().normalize());
        o.flush();
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

    static String json(Validation v, Map<String, Double> limits, List<String> exceeded) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
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
        ObjectNode tol = root.putObject("tolerance_pct");
        limits.forEach((k, val) -> tol.put(k, val));
        var ex = root.putArray("exceeded");
        exceeded.forEach(ex::add);
        root.put("passed", exceeded.isEmpty());
        return JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    }
}
