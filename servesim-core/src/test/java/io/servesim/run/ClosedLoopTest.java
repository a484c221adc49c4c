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
