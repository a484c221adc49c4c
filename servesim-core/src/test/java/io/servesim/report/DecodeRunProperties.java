package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import org.junit.jupiter.api.Test;

/**
 * Scheduling decode runs (VllmScheduler's shortcut for steps in which every running request only decodes) changes
 * nothing: the canonical output and the time series are identical to scheduling every step through the full path,
 * for random open-loop clusters with either engine loop, with and without prefix caching, tight pools that preempt,
 * attention DP, drains, failures, time limits, G2 host tiers and KV-event routers, for session workloads with G2 and
 * KVCR pulls, and for disaggregated prefill/decode clusters; and the runs really used them.
 */
class DecodeRunProperties {

    @Property(tries = 100)
    void decodeRuns_changeNoOutput(@ForAll("openLoopConfigs") List<String> overrides) throws IOException {
        // not vacuous: at least half the tries use decode runs (a saturated rank never does)
        sameRunWithDecodeRunsOrNot(ConfigLoader.fromYaml("", "property", overrides), 50, 0);
    }

    @Property(tries = 100)
    void decodeRuns_advancedInOneLoop_changeNoOutput(@ForAll("asyncSingleRankConfigs") List<String> overrides)
            throws IOException {
        // vLLM's async loop on ranks stepped alone, with run-ahead on: where AsyncWorker.advanceDecodeRun applies
        sameRunWithDecodeRunsOrNot(ConfigLoader.fromYaml("", "property", overrides), 50, 30);
    }

    @Property(tries = 30)
    void decodeRuns_changeNoOutput_withSessionsG2AndKvcr(
            @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 1000) long seed,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 4) int workers,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 2) int dp,
            @ForAll boolean async)
            throws IOException {
        // the KVCR fixture's shape, small: session turns with shared prefixes, a rank-local G2 tier, migrating
        // follow-ups pulled over KVCR (a KV connector with stores, loads and pulls around the runs)
        List<String> overrides = List.of(
                "workload.type=sessions",
                "workload.seed=" + seed,
                "workload.sessions.sessions=" + (4 + seed % 8),
                "workload.sessions.turns=5",
                "workload.sessions.first_input_tokens={type: uniform, min: 16, max: 300}",
                "workload.sessions.new_input_tokens={type: uniform, min: 1, max: 64}",
                "workload.sessions.output_tokens={type: uniform, min: 1, max: 80}",
                "workload.sessions.think_time_ms={type: fixed, value: " + (seed % 3 * 20) + "}",
                "workload.sessions.shared_prefix_tokens=32",
                "workload.sessions.migrate_fraction=0.3",
                "cluster.workers=" + workers,
                "cluster.attention_dp=" + dp,
                "cluster.router.policy=session_affinity",
                "engine.scheduler.async_scheduling=" + async,
                "engine.kv_cache.block_size=" + (seed % 2 == 0 ? 8 : 16),
                "engine.kv_cache.num_gpu_blocks=" + (40 + seed % 100),
                "engine.max_model_len=" + Math.min(600, (39 + seed % 100) * (seed % 2 == 0 ? 8 : 16)),
                "engine.kv_cache.host_offload.num_host_blocks=128",
                "engine.kvcr.enabled=" + (seed % 3 != 0));
        sameRunWithDecodeRunsOrNot(ConfigLoader.fromYaml("", "property", overrides), 50, 0);
    }

    @Property(tries = 30)
    void decodeRuns_changeNoOutput_inDisaggregatedClusters(
            @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 1000) long seed,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 3) int decodeWorkers,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 2) int decodeDp,
            @ForAll boolean async)
            throws IOException {
        // vLLM on both sides: prefill-only requests hold their blocks for the pull, decode requests wait for their KV
        // (P/D's KV connector), then decode; sometimes local prefills, a failing prefill worker or a fabric cap
        List<String> overrides = new ArrayList<>(List.of(
                "cluster.mode=disaggregated",
                "cluster.prefill={workers: 1, router: {policy: least_loaded}}",
                "cluster.decode={workers: " + decodeWorkers + ", attention_dp: " + decodeDp
                        + ", router: {policy: least_loaded}}",
                "cluster.disagg.max_local_prefill_tokens=" + (seed % 3 == 0 ? 40 : 0),
                "cluster.disagg.transfer.first_byte_ms=1.0",
                "cluster.disagg.transfer.nic_gbytes_per_s=" + (seed % 2 == 0 ? 5.0 : 50.0),
                "engine.scheduler.async_scheduling=" + async,
                "engine.kv_cache.block_size=" + (seed % 2 == 0 ? 8 : 16),
                "engine.kv_cache.num_gpu_blocks=" + (60 + seed % 150),
                "engine.max_model_len=400",
                "engine.scheduler.max_num_seqs=" + (2 + seed % 10),
                "engine.scheduler.max_num_batched_tokens=128",
                "workload.seed=" + seed,
                "workload.synthetic.requests=50",
                "workload.synthetic.input_tokens={type: uniform, min: 1, max: 200}",
                "workload.synthetic.output_tokens={type: uniform, min: 1, max: 120}",
                "workload.arrival.rate=" + (seed % 3 == 1 ? 100 : 10)));
        if (seed % 5 == 0) {
            overrides.add("cluster.events=[{at_ms: " + (seed % 300) + ", worker: 0, action: fail}]");
        }
        sameRunWithDecodeRunsOrNot(ConfigLoader.fromYaml("", "property", overrides), 50, 0);
    }

    @Property(tries = 60)
    void decodeRuns_changeNoOutput_withTheHybridKvCache(@ForAll("hybridConfigs") List<String> overrides)
            throws IOException {
        // vLLM's hybrid KV cache (gpt-oss): runs must end before a window-group block leaves the window
        sameRunWithDecodeRunsOrNot(ConfigLoader.fromYaml("", "property", overrides), 40, 0);
    }

    @Test
    void aDecodeHeavyRun_schedulesMostStepsAsDecodeRuns_andMatchesTheFullPath() throws IOException {
        SimConfig config = ConfigLoader.fromYaml("", "decode-heavy", OpenLoopClusters.decodeHeavy());
        String expected = canonical(new Simulation(config).withoutDecodeRuns().run());
        Simulation runs = new Simulation(config);
        RunResult result = runs.run();
        assertThat(canonical(result)).isEqualTo(expected);
        // few requests per worker at a time, 16-token blocks: most steps lie between block boundaries
        assertThat(runs.decodeRunSteps()).isGreaterThan(result.counters().steps() / 2);
        // and in vLLM's default async loop most of those are advanced without events (AsyncWorker.advanceDecodeRun)
        assertThat(runs.advancedRunSteps()).isGreaterThan(runs.decodeRunSteps() / 2);
    }

    private static String canonical(RunResult r) throws IOException {
        return OpenLoopClusters.canonicalWithTimeSeries(r);
    }

    /**
     * Runs {@code config} with decode runs off and on, requires identical output, and labels whether runs happened
     * and whether the async loop advanced some in one loop (never with sessions or a KV connector: no run-ahead).
     */
    private static void sameRunWithDecodeRunsOrNot(SimConfig config, int minPercent, int minAdvancedPercent)
            throws IOException {
        Simulation full = new Simulation(config).withoutDecodeRuns();
        String expected = canonical(full.run());
        Simulation runs = new Simulation(config);
        assertThat(canonical(runs.run())).isEqualTo(expected);
        assertThat(full.decodeRunSteps()).isZero();
        Statistics.label("decode runs").collect(runs.decodeRunSteps() > 0);
        Statistics.label("decode runs").coverage(c -> c.check(true).percentage(p -> p >= minPercent));
        Statistics.label("advanced in one loop").collect(runs.advancedRunSteps() > 0);
        Statistics.label("advanced in one loop").coverage(c -> c.check(true).percentage(p -> p >= minAdvancedPercent));
    }

    @Provide
    Arbitrary<List<String>> asyncSingleRankConfigs() {
        // CPU-bound, GPU-bound and no CPU part (with fixed timing)
        return Combinators.combine(
                        OpenLoopClusters.clusters(Arbitraries.of("independent"), Arbitraries.of(true)),
                        Arbitraries.of(0, 2, 15))
                .as((all, cpuMs) -> {
                    if (!all.contains("timing.type=roofline")) {
                        all.add("timing.fixed.cpu_ms=" + cpuMs);
                    }
                    return all;
                });
    }

    @Provide
    Arbitrary<List<String>> openLoopConfigs() {
        return OpenLoopClusters.clusters(Arbitraries.of("lockstep", "independent"), Arbitraries.of(true, false));
    }

    @Provide
    Arbitrary<List<String>> hybridConfigs() {
        // the open-loop clusters without a KV connector, with a sliding-window group of 2 to 60 tokens on twice the
        // blocks (so max_model_len fits both groups, as vLLM's start-up check requires)
        return Combinators.combine(
                        OpenLoopClusters.clusters(
                                Arbitraries.of("lockstep", "independent"), Arbitraries.of(true, false)),
                        Arbitraries.integers().between(2, 60))
                .as((all, window) -> {
                    all.removeIf(o -> o.startsWith("engine.kv_cache.host_offload."));
                    for (int k = 0; k < all.size(); k++) {
                        String o = all.get(k);
                        if (o.equals("timing.model=llama-3.1-8b")) {
                            all.set(k, "timing.model=gpt-oss-20b"); // roofline timing: a model with such layers
                        }
                        if (o.startsWith("engine.kv_cache.num_gpu_blocks=")) {
                            int n = Integer.parseInt(o.substring("engine.kv_cache.num_gpu_blocks=".length()));
                            all.set(k, "engine.kv_cache.num_gpu_blocks=" + 2 * n);
                        }
                    }
                    all.add("engine.kv_cache.hybrid_window=" + window);
                    return all;
                });
    }
}
