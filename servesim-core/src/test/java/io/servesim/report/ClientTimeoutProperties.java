package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.run.Invariants;
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
 * Client timeouts ({@code workload.client_timeout_s}) on random vLLM clusters (attention DP in both modes, both engine
 * loops, every router, drains, time limits, roofline timing): the engine invariants hold after every step (block
 * conservation, queues, no request lost: each ends completed, rejected, timed out or, under a time limit,
 * incomplete), and aborting requests is as deterministic as the rest — the output is the same with decode runs and
 * run-ahead as without them.
 */
class ClientTimeoutProperties {

    @Property(tries = 60)
    void timeouts_keepTheEngineInvariants_andLoseNoRequest(@ForAll("configs") List<String> overrides) {
        SimConfig config = ConfigLoader.fromYaml("", "property", overrides);
        Simulation sim = new Simulation(config);
        Invariants checks = new Invariants(config).watch(sim);
        RunResult result = sim.run();
        checks.atEnd(sim, result, config);
        assertThat(checks.violations()).isEmpty();
        RequestLog log = result.log();
        long timedOut = 0;
        for (int i = 0; i < log.size(); i++) {
            String st = log.status(i).status();
            assertThat(st).isIn("completed", "rejected", "timed_out", "incomplete");
            if (st.equals("timed_out")) {
                timedOut++;
                // it ended at its client's deadline, with what it had received by then
                assertThat(log.lastTokenNanos(i)).isLessThanOrEqualTo(log.arrivalNanos(i) + timeoutNanos(overrides));
            }
        }
        assertThat(Summaries.of(result).timedOut()).isEqualTo(timedOut);
        Statistics.label("some timed out").collect(timedOut > 0);
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
        Arbitrary<Integer> workers = Arbitraries.integers().between(1, 3);
        Arbitrary<Integer> dp = Arbitraries.integers().between(1, 2);
        Arbitrary<Integer> blocks = Arbitraries.integers().between(8, 200);
        Arbitrary<Integer> maxSeqs = Arbitraries.integers().between(1, 12);
        Arbitrary<String> router = Arbitraries.of("round_robin", "least_loaded", "session_affinity", "kv_aware");
        Arbitrary<String> dpMode = Arbitraries.of("lockstep", "independent");
        Arbitrary<Long> seed = Arbitraries.longs().between(0, 1000);
        Arbitrary<Double> timeout = Arbitraries.of(0.05, 0.2, 0.5, 1.5);
        return Combinators.combine(workers, dp, blocks, maxSeqs, router, dpMode, seed, timeout)
                .as((w, d, nb, ms, r, mode, s, t) -> {
                    List<String> all = OpenLoopClusters.overrides(new OpenLoopClusters.Shape(
                            w,
                            d,
                            mode,
                            nb,
                            s % 2 == 0 ? 8 : 16,
                            ms,
                            r,
                            s % 2 == 0 ? "approximate" : "exact",
                            s,
                            s % 4 == 0 ? 0.05 : 1.0,
                            s % 3 == 0 ? 200 : 40));
                    // failing workers restart their requests, which a timeout does not model (the config refuses it)
                    all.removeIf(o -> o.contains("action: fail"));
                    all.add("engine.scheduler.async_scheduling=" + (s % 5 < 3));
                    all.add("engine.kv_cache.prefix_caching=" + (s % 7 != 0));
                    if (s % 11 == 5) {
                        // vLLM's hybrid KV cache: a sliding-window group beside the full one, on twice the blocks
                        all.add("engine.kv_cache.hybrid_window=" + (2 + s % 40));
                        all.removeIf(o -> o.startsWith("timing."));
                        all.replaceAll(o -> o.startsWith("engine.kv_cache.num_gpu_blocks=")
                                ? "engine.kv_cache.num_gpu_blocks=" + 2 * nb
                                : o);
                    }
                    all.add("workload.client_timeout_s=" + t);
                    return all;
                });
    }
}
