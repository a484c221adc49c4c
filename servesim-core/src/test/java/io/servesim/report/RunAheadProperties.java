package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.TimeSeries;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.io.StringWriter;
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
        List<String> overrides = List.of(
                "cluster.workers=4",
                "workload.seed=3",
                "workload.synthetic.requests=200",
                "workload.synthetic.input_tokens={type: uniform, min: 16, max: 200}",
                "workload.synthetic.output_tokens={type: uniform, min: 100, max: 300}",
                "workload.arrival.rate=5",
                "output.timeseries_tick_s=0.5");
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
    void sessionWorkloads_neverRunAhead() {
        SimConfig config = ConfigLoader.fromYaml(
                "", "sessions", List.of("workload.type=sessions", "workload.sessions.sessions=20"));
        Simulation sim = new Simulation(config);
        sim.run();
        assertThat(sim.ranAhead()).isZero();
    }

    private static String canonical(RunResult r) throws IOException {
        StringWriter w = new StringWriter();
        ReportWriter.writeCanonical(r, Summaries.of(r), w);
        TimeSeries ts = r.timeSeries();
        w.write("\ntimeseries rows " + ts.size() + "\n");
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < ts.size(); i++) {
            ts.appendRow(i, rows);
            rows.append('\n');
        }
        w.write(rows.toString());
        return w.toString();
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
                .as((w, d, nb, ms, r, mode, s, t) -> {
                    List<String> all = new ArrayList<>(List.of(
                            "cluster.workers=" + w,
                            "cluster.attention_dp=" + d,
                            "cluster.dp_mode=" + mode,
                            "engine.kv_cache.block_size=8",
                            "engine.kv_cache.num_gpu_blocks=" + nb,
                            "engine.scheduler.max_num_seqs=" + ms,
                            "engine.scheduler.max_num_batched_tokens=" + Math.max(64, ms),
                            "engine.max_model_len=" + Math.min((nb - 1) * 8, 400),
                            "cluster.router.policy=" + r,
                            "cluster.router.kv.mode=approximate", // exact mode publishes KV events: no run-ahead
                            "workload.seed=" + s,
                            "workload.synthetic.requests=60",
                            "workload.synthetic.input_tokens={type: uniform, min: 1, max: 200}",
                            "workload.synthetic.output_tokens={type: uniform, min: 1, max: 120}",
                            "workload.synthetic.shared_prefix_tokens=24",
                            "workload.synthetic.prefix_groups=3",
                            "workload.arrival.rate=" + (s % 2 == 0 ? 20 : 200),
                            "output.timeseries_tick_s=" + t));
                    if (s % 3 == 0) {
                        all.add("cluster.events=[{at_ms: 300, worker: 0, action: drain}]");
                    } else if (s % 3 == 1) {
                        all.add("cluster.events=[{at_ms: " + (s % 400) + ", worker: 0, action: fail}]");
                    }
                    if (s % 4 == 0) {
                        all.add("limits.time_limit_s=" + (0.5 + s % 7 * 0.3)); // stops mid-run: incomplete rows
                    }
                    if (s % 5 == 0) {
                        all.add("timing.type=roofline");
                        all.add("timing.model=llama-3.1-8b");
                        all.add("timing.gpu=a100-sxm-80gb");
                    }
                    return all;
                });
    }
}
