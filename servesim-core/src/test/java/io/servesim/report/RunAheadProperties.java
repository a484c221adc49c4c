package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
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
import org.junit.jupiter.api.Test;

/**
 * Running engine steps ahead of the event queue (EventQueue's run-ahead) changes nothing: the canonical output
 * (every request row, the summary, per-worker totals) and the time series are identical with it and without it, for
 * random open-loop clusters with the async engine loop (attention DP, drains and failures, time limits, fine
 * telemetry ticks, every router that reads no KV events), and the run really did run ahead.
 */
class RunAheadProperties {

    @Property(tries = 60)
    void runningAhead_changesNoOutput(@ForAll("openLoopConfigs") List<String> overrides) throws IOException {
        SimConfig config = ConfigLoader.fromYaml("", "property", overrides);
        Simulation queued = new Simulation(config).withoutRunAhead();
        String expected = canonical(queued.run());
        Simulation ahead = new Simulation(config);
        RunResult result = ahead.run();
        assertThat(canonical(result)).isEqualTo(expected);
        assertThat(queued.ranAhead()).isZero();
        Statistics.label("ran ahead").collect(ahead.ranAhead() > 0);
        Statistics.label("ran ahead")
                .coverage(c -> c.check(true).percentage(p -> p >= 80)); // the property is not vacuous
    }

    @Test
    void aDecodeHeavyOpenLoopRun_runsMostStepsAhead_andMatchesTheQueuedRun() throws IOException {
        List<String> overrides = OpenLoopClusters.decodeHeavy();
        overrides.add("output.timeseries_tick_s=0.5");
        SimConfig config = ConfigLoader.fromYaml("", "decode-heavy", overrides);
        Simulation queued = new Simulation(config).withoutRunAhead();
        String expected = canonical(queued.run());
        Simulation ahead = new Simulation(config);
        RunResult result = ahead.run();
        assertThat(canonical(result)).isEqualTo(expected);
        assertThat(result.counters().steps()).isPositive();
        // two engine events per decode step (CPU, output); most of them run ahead between arrivals and finishes
        assertThat(ahead.ranAhead()).isGreaterThan(result.counters().steps());
    }

    @Test
    void kvEventRouters_runOnlyQuietDecodeRunStepsAhead_andMatchTheQueuedRun() throws IOException {
        // a router that hears KV events keeps every step that may change blocks in the queue, but a decode run's
        // steps change none (AsyncWorker.advanceDecodeRun)
        List<String> overrides = OpenLoopClusters.decodeHeavy();
        overrides.add("cluster.router.policy=kv_aware");
        overrides.add("cluster.router.kv.mode=exact");
        SimConfig config = ConfigLoader.fromYaml("", "kv-events", overrides);
        String expected = canonical(new Simulation(config).withoutRunAhead().run());
        Simulation quiet = new Simulation(config);
        RunResult result = quiet.run();
        assertThat(canonical(result)).isEqualTo(expected);
        assertThat(quiet.advancedRunSteps()).isGreaterThan(result.counters().steps() / 4);
        assertThat(quiet.ranAhead()).isGreaterThanOrEqualTo(quiet.advancedRunSteps());
    }

    @Test
    void sessionWorkloads_neverRunAhead() {
        SimConfig config = ConfigLoader.fromYaml(
                "", "sessions", List.of("workload.type=sessions", "workload.sessions.sessions=20"));
        Simulation sim = new Simulation(config);
        sim.run();
        assertThat(sim.ranAhead()).isZero();
    }

    private static String canonical(RunResult r) throws IOException {
        return OpenLoopClusters.canonicalWithTimeSeries(r);
    }

    @Provide
    Arbitrary<List<String>> openLoopConfigs() {
        Arbitrary<Integer> workers = Arbitraries.integers().between(1, 4);
        Arbitrary<Integer> dp = Arbitraries.integers().between(1, 2);
        Arbitrary<Integer> blocks = Arbitraries.integers().between(8, 200);
        Arbitrary<Integer> maxSeqs = Arbitraries.integers().between(1, 12);
        Arbitrary<String> router =
                Arbitraries.of("round_robin", "least_loaded", "random", "session_affinity", "kv_aware");
        Arbitrary<String> dpMode = Arbitraries.of("lockstep", "independent");
        Arbitrary<Long> seed = Arbitraries.longs().between(0, 1000);
        Arbitrary<Double> tick = Arbitraries.of(0.0, 0.05, 1.0);
        return Combinators.combine(workers, dp, blocks, maxSeqs, router, dpMode, seed, tick)
                .as((w, d, nb, ms, r, mode, s, t) -> OpenLoopClusters.overrides(new OpenLoopClusters.Shape(
                        w,
                        d,
                        mode,
                        nb,
                        8,
                        ms,
                        r,
                        "approximate", // exact mode publishes KV events: no run-ahead
                        s,
                        t,
                        s % 2 == 0 ? 20 : 200)));
    }
}
