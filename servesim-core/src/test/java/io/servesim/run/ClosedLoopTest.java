package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs that used to spin or grow without bound: a closed loop (arrival type concurrency) ends or says why it cannot;
 * a fleet event far in the future or a tiny time-series tick does not fill memory with samples.
 */
class ClosedLoopTest {
    private static List<String> loop(int inputTokens) {
        return List.of(
                "workload.synthetic.requests=null",
                "workload.synthetic.duration_s=5",
                "workload.synthetic.input_tokens={type: fixed, value: " + inputTokens + "}",
                "workload.synthetic.output_tokens={type: fixed, value: 4}",
                "workload.arrival.type=concurrency",
                "workload.arrival.concurrency=4",
                "engine.max_model_len=100",
                "timing.type=fixed");
    }

    @Test
    @Timeout(60) // it used to re-issue rejected requests at one instant until the heap ran out
    void everyRequestRejected_isAConfigErrorSayingWhy() {
        assertThatThrownBy(() -> Simulation.run(ConfigLoader.fromYaml("", "t", loop(200))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("workload.arrival")
                .hasMessageContaining("cannot progress")
                .hasMessageContaining("max_model_len");
    }

    @Test
    @Timeout(60)
    void acceptedRequests_advanceTime_andTheLoopEndsAtItsDuration() {
        RunResult r = Simulation.run(ConfigLoader.fromYaml("", "t", loop(50)));
        assertThat(r.log().size()).isGreaterThan(100);
        assertThat(r.endNanos()).isGreaterThan(5_000_000_000L);
    }

    @Test
    @Timeout(60) // a drain at 1e12 ms used to keep the 1 s sampler ticking for 31 years of virtual time
    void aFleetEventFarInTheFuture_doesNotKeepTheTimeSeriesTicking() {
        RunResult r = Simulation.run(ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "workload.synthetic.requests=50",
                        "workload.arrival.rate=10",
                        "timing.type=fixed",
                        "cluster.workers=2",
                        "cluster.events=[{at_ms: 1e12, worker: 0, action: drain}]")));
        assertThat(r.log().size()).isEqualTo(50);
        assertThat(r.timeSeries().size()).isBetween(1, 100); // about the workload's few seconds, one row per second
    }

    @Test
    void rampS_startsTheClosedLoopsClientsEvenlyOverTheRamp_thenEachFinishReleasesTheNext() {
        // 4 clients over a 20 ms ramp: first requests at 0, 5, 10 and 15 ms; a request takes a 12 ms prefill step and
        // 3 decode steps of 8 ms, so none has finished by 15 ms, and the fifth request is released at the first finish
        RunResult r = Simulation.run(
                ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of(
                                "workload.synthetic.requests=5",
                                "workload.synthetic.input_tokens={type: fixed, value: 16}",
                                "workload.synthetic.output_tokens={type: fixed, value: 4}",
                                "workload.arrival.type=concurrency",
                                "workload.arrival.concurrency=4",
                                "workload.arrival.ramp_s=0.02",
                                "timing.type=fixed",
                                "timing.fixed={prefill_ms: 12, decode_ms: 8, prefill_per_token_ms: 0, decode_per_token_ms: 0}")));
        long[] arrivals = new long[5];
        long firstFinish = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            arrivals[r.log().requestId(i)] = r.log().arrivalNanos(i);
            if (r.log().requestId(i) < 4) {
                firstFinish = Math.min(firstFinish, r.log().lastTokenNanos(i));
            }
        }
        assertThat(firstFinish).isGreaterThan(15_000_000L);
        assertThat(arrivals).containsExactly(0L, 5_000_000L, 10_000_000L, 15_000_000L, firstFinish);
        // without the ramp every client starts at t = 0
        RunResult together = Simulation.run(ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "workload.synthetic.requests=4",
                        "workload.arrival.type=concurrency",
                        "workload.arrival.concurrency=4",
                        "timing.type=fixed")));
        for (int i = 0; i < 4; i++) {
            assertThat(together.log().arrivalNanos(i)).isZero();
        }
    }

    @Test
    void rampS_startsTheSessionsOfAClosedSessionLoopEvenlyOverTheRamp() {
        // 4 one-turn sessions kept 4 at a time over a 2 s ramp; each lasts 10 s (100 output tokens, 100 ms steps), so
        // none ends (and releases the next) before the ramp is over: the turns arrive at 0, 0.5, 1 and 1.5 s
        RunResult r = Simulation.run(
                ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of(
                                "workload.type=sessions",
                                "workload.sessions={sessions: 4, turns: 1, output_tokens: {type: fixed, value: 100}}",
                                "workload.arrival.type=concurrency",
                                "workload.arrival.concurrency=4",
                                "workload.arrival.ramp_s=2",
                                "timing.type=fixed",
                                "timing.fixed={prefill_ms: 100, decode_ms: 100, prefill_per_token_ms: 0, decode_per_token_ms: 0}")));
        long[] arrivals = new long[4];
        for (int i = 0; i < 4; i++) {
            arrivals[i] = r.log().arrivalNanos(i);
        }
        java.util.Arrays.sort(arrivals);
        assertThat(arrivals).containsExactly(0L, 500_000_000L, 1_000_000_000L, 1_500_000_000L);
    }

    @Test
    void rampS_isRefusedForOpenLoopArrivals_andWhenNegative() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("workload.arrival.ramp_s=1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("workload.arrival.ramp_s")
                .hasMessageContaining("only to type: concurrency");
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of(
                                "workload.arrival.type=concurrency",
                                "workload.arrival.concurrency=2",
                                "workload.arrival.ramp_s=-1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("workload.arrival.ramp_s");
    }

    @Test
    void aTimeSeriesTickBelowOneMillisecond_isRefusedNamingTheKey() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("output.timeseries_tick_s=1e-9")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("output.timeseries_tick_s")
                .hasMessageContaining("at least 0.001");
        assertThat(ConfigLoader.fromYaml("", "t", List.of("output.timeseries_tick_s=0"))
                        .output()
                        .timeseriesTickS())
                .isZero();
    }

    @Test
    void aClusterWhoseEmptyRanksCannotFitTheHeap_isRefusedWithTheEstimate() {
        var huge = ConfigLoader.fromYaml("", "t", List.of("cluster.workers=16777216"));
        assertThatThrownBy(() -> Simulation.checkClusterFits(huge, 6L << 30))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.workers")
                .hasMessageContaining("16777216 workers x 1 ranks need about 128.0 GiB of heap")
                .hasMessageContaining("this JVM has 6.0 GiB");
        Simulation.checkClusterFits(ConfigLoader.fromYaml("", "t", List.of("cluster.workers=2048")), 6L << 30);
    }

    @Test
    void syntheticLengthsBeyondAnyContext_areConfigErrorsNamingTheKey() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "", "t", List.of("workload.synthetic.input_tokens={type: fixed, value: 1e18}")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("workload.synthetic.input_tokens.value")
                .hasMessageContaining("at most 10000000");
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of(
                                "workload.type=sessions",
                                "workload.sessions.new_input_tokens={type: uniform, min: 1, max: 1e12}")))
                .hasMessageContaining("workload.sessions.new_input_tokens.max");
    }
}
