package io.servesim.api;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.Summaries;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.nio.file.Path;
import java.util.List;

/**
 * The entry point for programs that embed servesim (a capacity planner, a notebook on a JVM kernel, a test): build
 * a config from YAML or in code, run it, read the {@link Result}. Nothing is written to disk unless asked
 * ({@link Result#writeTo}, {@link RunOptions#streamRequestsTo}); runs share no state, so one JVM may run any number,
 * on any threads, each giving the same result as on its own.
 *
 * <pre>{@code
 * SimConfig config = Servesim.config()
 *         .set("cluster.workers", 8)
 *         .set("cluster.router.policy", "kv_aware")
 *         .build();
 * Result result = Servesim.run(config);
 * double p99 = result.summary().ttftMs().p99();
 * long slow = result.requests().filter(r -> r.ttftNanos() > 500_000_000L).count();
 * }</pre>
 *
 * The CLI's {@code replay}, sweeps and {@code validate} run through here.
 */
public final class Servesim {
    private Servesim() {}

    /** A config built in code, starting from the defaults (see {@link ConfigBuilder}). */
    public static ConfigBuilder config() {
        return new ConfigBuilder("{}", "config");
    }

    /** A config file with {@code path=yamlValue} overrides applied in order (as {@code --set}). */
    public static SimConfig config(Path yamlFile, String... overrides) {
        return ConfigLoader.load(yamlFile, List.of(overrides));
    }

    /** A config from YAML text, with {@code path=yamlValue} overrides applied in order. */
    public static SimConfig configFromYaml(String yaml, String... overrides) {
        return ConfigLoader.fromYaml(yaml, "yaml", List.of(overrides));
    }

    /** Starts a config in code from YAML text (for example a base deployment) and then {@link ConfigBuilder#set}. */
    public static ConfigBuilder configFrom(String yaml) {
        return new ConfigBuilder(yaml, "yaml");
    }

    /** Runs {@code config} to completion in memory. */
    public static Result run(SimConfig config) {
        return run(config, RunOptions.defaults());
    }

    /** Runs {@code config} to completion with {@code options} (progress, rows streamed to a file). */
    public static Result run(SimConfig config, RunOptions options) {
        Simulation sim = new Simulation(config);
        if (options.requestsFile() != null) {
            sim.streamRequestsTo(options.requestsFile());
        } else if (config.output().streamRequests()) {
            throw new IllegalArgumentException(
                    "output.stream_requests is on: give RunOptions.streamRequestsTo(file) for the rows");
        }
        if (options.progress() != null) {
            sim.onProgress(options.progress(), options.progressEveryEvents());
        }
        RunResult raw = sim.run();
        return new Result(raw, Summaries.of(raw));
    }
}
