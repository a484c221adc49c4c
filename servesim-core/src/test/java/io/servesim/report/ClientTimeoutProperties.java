package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/**
 * Client timeouts ({@code workload.client_timeout_s}) on random vLLM, SGLang and TensorRT-LLM clusters (attention DP in both
 * modes, both engine loops, every router, drains, failing workers (whose requests' clients send them again under new
 * deadlines), time limits, roofline timing, the hybrid KV cache, vLLM's G2 tier and
 * KVCR pulls, SGLang's HiCache, and disaggregated prefill/decode
 * clusters whose clients give up before, during and after the pull): the engine invariants hold after every step (block
 * conservation, queues, no request lost: each ends completed, rejected, timed out or, under a time limit,
 * incomplete), and aborting requests is as deterministic as the rest — the output is the same with decode runs and
 * run-ahead as without them.
 */
class ClientTimeoutProperties {

    @Property(tries = 60)
    void timeouts_keepTheEngineInvariants_andLoseNoRequest(@ForAll("configs") List<String> overrides) {
        RunResult result = io.servesim.run.CheckedRuns.run(ConfigLoader.fromYaml("", "property", overrides));
        RequestLog log = result.log();
        long timedOut = 0;
        long restarted = 0;
        for (int i = 0; i < log.size(); i++) {
            String st = log.status(i).status();
            assertThat(st).isIn("completed", "rejected", "timed_out", "incomplete");
            if (st.equals("timed_out")) {
                timedOut++;
                // it ended at its client's deadline, with what it had received by then: the timeout after it was
                // sent, or after it was sent again when its worker failed
                long sent = log.restarts(i) > 0 ? failNanos(overrides) : log.arrivalNanos(i);
                assertThat(log.lastTokenNanos(i)).isLessThanOrEqualTo(sent + timeoutNanos(overrides));
            }
            restarted += log.restarts(i) > 0 ? 1 : 0;
        }
        assertThat(Summaries.of(result).timedOut()).isEqualTo(timedOut);
        assertThat(Summaries.of(result).restarts()).isGreaterThanOrEqualTo(restarted);
        Statistics.label("some timed out").collect(timedOut > 0);
        Statistics.label("some restarted").collect(restarted > 0);
        Statistics.label("some timed out").coverage(c -> c.check(true).percentage(p -> p >= 50));
    }

    @Property(tries = 40)
    void timeouts_changeNoOutput_withDecodeRunsAndRunAheadOrWithout(@ForAll("configs") List<String> overrides)
            throws IOException {
        SimConfig config = ConfigLoader.fromYaml("", "property", overrides);
        String plain = OpenLoopClusters.canonicalWithTimeSeries(
                new Simulation(config).withoutDecodeRuns().withoutRunAhead().run());
        assertThat(OpenLoopClusters.canonicalWithTimeSeries(new Simulation(config).run()))
                .isEqualTo(plain);
    }

    @Property(tries = 40)
    void timeouts_inDisaggregatedClusters_keepTheInvariants_andChangeNoOutputWithTheShortcuts(
            @ForAll("disaggregated") List<String> overrides) throws IOException {
        long timedOut = checkedAndShortcutNeutral(ConfigLoader.fromYaml("", "property", overrides));
        Statistics.label("some timed out").collect(timedOut > 0);
        Statistics.label("some timed out").coverage(c -> c.check(true).percentage(p -> p >= 50));
    }

    /**
     * Runs {@code config} under the engine invariants, checks that every request ended as a request can, and that the
     * output is the same with decode runs and run-ahead as without them.
     *
     * @return the requests that timed out
     */
    private static long checkedAndShortcutNeutral(SimConfig config) throws IOException {
        RunResult result = io.servesim.run.CheckedRuns.run(config);
        long timedOut = 0;
        for (int i = 0; i < result.log().size(); i++) {
            String st = result.log().status(i).status();
            assertThat(st).isIn("completed", "rejected", "timed_out", "abandoned", "incomplete");
            timedOut += st.equals("timed_out") ? 1 : 0;
        }
        assertThat(OpenLoopClusters.canonicalWithTimeSeries(new Simulation(config).run()))
                .isEqualTo(OpenLoopClusters.canonicalWithTimeSeries(new Simulation(config)
                        .withoutDecodeRuns()
                        .withoutRunAhead()
                        .run()));
        return timedOut;
    }

    @Property(tries = 40)
    void timeouts_withKvcrPullsInFlight_keepTheInvariants_andChangeNoOutputWithTheShortcuts(
            @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 1000) long seed,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 2, max = 4) int workers,
            @ForAll boolean async,
            @ForAll("kvcrTimeouts") double timeout)
            throws IOException {
        // session turns whose follow-ups migrate and pull their prefix over slow NICs (a pull lasts longer than some
        // clients wait), with a G2 tier: a destination aborted while its pull is in flight keeps its blocks until the
        // bytes land, as for a G2 load or a P/D pull
        SimConfig config = ConfigLoader.fromYaml(
                "",
                "property",
                List.of(
                        "workload.type=sessions",
                        "workload.seed=" + seed,
                        "workload.sessions.sessions=" + (4 + seed % 8),
                        "workload.sessions.turns=4",
                        "workload.sessions.first_input_tokens={type: uniform, min: 16, max: 300}",
                        "workload.sessions.new_input_tokens={type: uniform, min: 1, max: 64}",
                        "workload.sessions.output_tokens={type: uniform, min: 1, max: 60}",
                        "workload.sessions.shared_prefix_tokens=32",
                        "workload.sessions.migrate_fraction=0.5",
                        "workload.client_timeout_s=" + timeout,
                        "cluster.workers=" + workers,
                        "cluster.router.policy=session_affinity",
                        "engine.scheduler.async_scheduling=" + async,
                        "engine.kv_cache.block_size=16",
                        "engine.kv_cache.num_gpu_blocks=" + (40 + seed % 100),
                        "engine.kv_cache.bytes_per_token=100000",
                        "engine.kv_cache.host_offload.num_host_blocks=" + (seed % 2 == 0 ? 128 : 0),
                        "engine.kvcr={enabled: true, bandwidth_gbytes_per_s: 0.05, first_byte_ms: 5}"));
        Statistics.label("some timed out").collect(checkedAndShortcutNeutral(config) > 0);
    }

    @Property(tries = 40)
    void timeouts_withFailingWorkers_retryUnderNewDeadlines_keepTheInvariants_andChangeNoOutputWithTheShortcuts(
            @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 1000) long seed,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 2, max = 4) int workers,
            @ForAll boolean async,
            @ForAll("engines") String engine,
            @ForAll("kvcrTimeouts") double timeout)
            throws IOException {
        // busy workers, two of which fail while requests run and queue on them: those whose clients still wait start
        // over elsewhere under a deadline from the retry; those whose clients gave up are not sent again
        long firstFailMs = 20 + seed % 150;
        SimConfig config = ConfigLoader.fromYaml(
                "",
                "property",
                List.of(
                        "workload.seed=" + seed,
                        "workload.synthetic.requests=50",
                        "workload.synthetic.input_tokens={type: uniform, min: 1, max: 200}",
                        "workload.synthetic.output_tokens={type: uniform, min: 1, max: 80}",
                        "workload.arrival.rate=" + (seed % 2 == 0 ? 400 : 80),
                        "workload.client_timeout_s=" + timeout,
                        "cluster.workers=" + workers,
                        "cluster.router.policy=" + (seed % 3 == 0 ? "least_loaded" : "round_robin"),
                        "cluster.events=[{at_ms: " + firstFailMs + ", worker: 0, action: fail}, {at_ms: "
                                + (firstFailMs + 40) + ", worker: 1, action: fail}]",
                        "engine.kind=" + engine,
                        "engine.scheduler.async_scheduling=" + async,
                        "engine.scheduler.max_num_seqs=" + (1 + seed % 6),
                        "engine.kv_cache.block_size=16",
                        "engine.kv_cache.num_gpu_blocks=" + (20 + seed % 60),
                        "engine.max_model_len=300"));
        RunResult result = io.servesim.run.CheckedRuns.run(config);
        RequestLog log = result.log();
        long restarted = 0;
        for (int i = 0; i < log.size(); i++) {
            if (log.status(i).status().equals("timed_out")) {
                long sent = log.restarts(i) > 0 ? (firstFailMs + 40) * 1_000_000 : log.arrivalNanos(i);
                assertThat(log.lastTokenNanos(i)).isLessThanOrEqualTo(sent + Math.round(timeout * 1e9));
            }
            restarted += log.restarts(i) > 0 ? 1 : 0;
        }
        long timedOut = checkedAndShortcutNeutral(config);
        Statistics.label("some restarted").collect(restarted > 0);
        Statistics.label("some restarted").coverage(c -> c.check(true).percentage(p -> p >= 50));
        Statistics.label("some timed out").collect(timedOut > 0);
    }

    @Provide
    Arbitrary<String> engines() {
        return Arbitraries.of("vllm", "sglang", "trtllm");
    }

    @Provide
    Arbitrary<Double> kvcrTimeouts() {
        return Arbitraries.of(0.03, 0.08, 0.2, 0.6);
    }

    @Provide
    Arbitrary<List<String>> disaggregated() {
        // one prefill worker and 1-3 decode workers (attention DP 1-2) on vLLM, pulls over slow NICs (so requests give
        // up on both sides and in flight), local prefills below 40 missing tokens or never, NIXL leases of 0.2 s
        return Combinators.combine(
                        Arbitraries.integers().between(1, 3),
                        Arbitraries.integers().between(1, 2),
                        Arbitraries.integers().between(12, 120),
                        Arbitraries.longs().between(0, 1000),
                        Arbitraries.of(true, false),
                        Arbitraries.of(0.05, 0.15, 0.4, 1.0))
                .as((decode, dp, blocks, seed, async, timeout) -> new java.util.ArrayList<>(List.of(
                        "workload.seed=" + seed,
                        "workload.synthetic.requests=40",
                        "workload.synthetic.input_tokens={type: uniform, min: 1, max: 150}",
                        "workload.synthetic.output_tokens={type: uniform, min: 1, max: 40}",
                        "workload.synthetic.shared_prefix_tokens=24",
                        "workload.synthetic.prefix_groups=3",
                        "workload.arrival.rate=" + (seed % 2 == 0 ? 200 : 30),
                        "workload.client_timeout_s=" + timeout,
                        "engine.scheduler.async_scheduling=" + async,
                        "engine.scheduler.max_num_seqs=" + (1 + seed % 8),
                        "engine.kv_cache.block_size=" + (seed % 2 == 0 ? 8 : 16),
                        "engine.kv_cache.num_gpu_blocks=" + blocks,
                        "engine.max_model_len=" + Math.min((blocks - 1) * 8, 200),
                        "cluster.mode=disaggregated",
                        "cluster.prefill={workers: 1}",
                        "cluster.decode={workers: " + decode + ", attention_dp: " + dp + "}",
                        "cluster.disagg.max_local_prefill_tokens=" + (seed % 3 == 0 ? 40 : 0),
                        "cluster.disagg.transfer={nic_gbytes_per_s: 0.001, bytes_per_token: 1000, kv_lease_s: 0.2}",
                        "output.timeseries_tick_s=" + (seed % 4 == 0 ? 0.05 : 1.0))));
    }

    /** The instant of the run's worker failure (OpenLoopClusters authors at most one). */
    private static long failNanos(List<String> overrides) {
        for (String o : overrides) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("at_ms: (\\d+), worker: \\d+, action: fail")
                    .matcher(o);
            if (m.find()) {
                return Long.parseLong(m.group(1)) * 1_000_000;
            }
        }
        throw new AssertionError("a request restarted, but no worker fails in " + overrides);
    }

    private static long timeoutNanos(List<String> overrides) {
        for (String o : overrides) {
            if (o.startsWith("workload.client_timeout_s=")) {
                return Math.round(Double.parseDouble(o.substring("workload.client_timeout_s=".length())) * 1e9);
            }
        }
        throw new AssertionError("no timeout in " + overrides);
    }

    @Provide
    Arbitrary<List<String>> configs() {
        // the open-loop clusters of the decode-run and run-ahead properties (a third of them with a worker failing),
        // the G2 tier on vLLM ranks, where a load in flight delays the abort's free, and on SGLang's as HiCache (not on
        // TensorRT-LLM's), on vLLM (sometimes its hybrid KV cache), SGLang or TensorRT-LLM ranks,
        // with clients giving up after 50 ms to 1.5 s
        Arbitrary<Double> timeout = Arbitraries.of(0.05, 0.2, 0.5, 1.5);
        Arbitrary<String> kind = Arbitraries.of(
                "vllm",
                "vllm-g2",
                "hybrid",
                "sglang",
                "sglang-lpm",
                "sglang-hicache",
                "trtllm",
                "trtllm-max-utilization");
        return Combinators.combine(
                        OpenLoopClusters.clusters(
                                Arbitraries.of("lockstep", "independent"), Arbitraries.of(true, false)),
                        timeout,
                        kind)
                .as((all, t, k) -> {
                    all.removeIf(o -> !k.startsWith("vllm")
                            && !k.startsWith("sglang")
                            && o.startsWith("engine.kv_cache.host_offload."));
                    if (k.equals("vllm-g2") || k.equals("sglang-hicache")) {
                        // a small G2 tier over slow copies: loads are in flight when clients give up
                        all.removeIf(o -> o.startsWith("engine.kv_cache.host_offload.")
                                || o.startsWith("engine.kv_cache.prefix_caching="));
                        all.add("engine.kv_cache.prefix_caching=true");
                        all.add("engine.kv_cache.host_offload={num_host_blocks: 48, d2h_gbytes_per_s: 0.0005,"
                                + " h2d_gbytes_per_s: 0.0005}");
                    }
                    if (k.startsWith("trtllm")) {
                        // TensorRT-LLM ranks (the overlap loop or not as the loop says): a canceled request runs the
                        // iteration that fetched the cancel, then is terminated after the next outputs
                        all.add("engine.kind=trtllm");
                        all.add("engine.trtllm={max_batch_size: 6, max_num_tokens: 512, capacity_scheduler_policy: "
                                + (k.equals("trtllm") ? "guaranteed_no_evict" : "max_utilization") + "}");
                    }
                    if (k.startsWith("sglang")) {
                        // SGLang ranks (its overlap scheduler on or off as the loop says): a waiting request is
                        // popped, a running one finishes with its next token
                        all.add("engine.kind=sglang");
                        all.add("engine.sglang={schedule_policy: " + (k.equals("sglang") ? "fcfs" : "lpm") + "}");
                    }
                    if (k.equals("hybrid")) {
                        // a sliding-window group beside the full one, on twice the blocks
                        all.add("engine.kv_cache.hybrid_window=17");
                        all.removeIf(o -> o.startsWith("timing."));
                        all.replaceAll(o -> o.startsWith("engine.kv_cache.num_gpu_blocks=")
                                ? "engine.kv_cache.num_gpu_blocks="
                                        + 2 * Integer.parseInt(o.substring("engine.kv_cache.num_gpu_blocks=".length()))
                                : o);
                    }
                    all.add("workload.client_timeout_s=" + t);
                    return all;
                });
    }
}
