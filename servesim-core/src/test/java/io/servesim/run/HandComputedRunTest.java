package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.report.Summaries;
import io.servesim.report.Summary;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Whole runs on one worker with fixed timing (prefill step 20 ms, decode step 10 ms, mixed 30 ms), by hand. */
class HandComputedRunTest {
    private static final long MS = 1_000_000L;

    private static RunResult run(String... sets) {
        return Simulation.run(config(sets));
    }

    /** The fixed-timing settings above, then {@code sets} (a later setting of the same key wins). */
    private static io.servesim.config.SimConfig config(String... sets) {
        List<String> all = new ArrayList<>(List.of(
                "timing.type=fixed",
                "engine.scheduler.async_scheduling=false", // these hand-computed times follow the synchronous loop
                "timing.fixed.prefill_ms=20",
                "timing.fixed.decode_ms=10",
                "workload.type=synthetic",
                "workload.synthetic.input_tokens={type: fixed, value: 10}",
                "workload.synthetic.output_tokens={type: fixed, value: 3}",
                "workload.arrival.type=constant"));
        all.addAll(List.of(sets));
        return ConfigLoader.fromYaml("", "test", all);
    }

    @Test
    void singleRequest_ttftIsThePrefillStep_tpotAndItlAreDecodeSteps() {
        RunResult r = run("workload.synthetic.requests=1", "workload.arrival.rate=1");
        RequestLog log = r.log();
        assertThat(log.firstTokenNanos(0)).isEqualTo(20 * MS);
        assertThat(log.lastTokenNanos(0)).isEqualTo(40 * MS);
        Summary s = Summaries.of(r);
        assertThat(s.ttftMs().mean()).isEqualTo(20.0);
        assertThat(s.tpotMs().mean()).isEqualTo(10.0);
        assertThat(s.e2eMs().mean()).isEqualTo(40.0);
        assertThat(s.itlMs().count()).isEqualTo(2);
        assertThat(s.itlMs().max()).isEqualTo(10.0);
        assertThat(s.durationMs()).isEqualTo(40.0);
        assertThat(s.steps()).isEqualTo(3);
    }

    @Test
    void arrivalDuringAStep_waitsForItsEnd_thenRunsInAMixedStep() {
        // A at 0, B at 10 ms. Step 1 [0,20): A prefill. Step 2 [20,50): A decode + B prefill (20 + 10 ms).
        // Step 3 [50,60): both decode, A done. Step 4 [60,70): B's last decode.
        RunResult r = run("workload.synthetic.requests=2", "workload.arrival.rate=100");
        RequestLog log = r.log();
        int[] byId = log.indicesByRequestId();
        int a = byId[0];
        int b = byId[1];
        assertThat(log.firstTokenNanos(a)).isEqualTo(20 * MS);
        assertThat(log.lastTokenNanos(a)).isEqualTo(60 * MS);
        assertThat(log.firstTokenNanos(b)).isEqualTo(50 * MS);
        assertThat(log.lastTokenNanos(b)).isEqualTo(70 * MS);
        Summary s = Summaries.of(r);
        assertThat(s.ttftMs().mean()).isEqualTo(30.0); // (20 + 40) / 2
        assertThat(s.tpotMs().max()).isEqualTo(20.0); // A: (60 - 20) / 2
        assertThat(s.tpotMs().min()).isEqualTo(10.0); // B: (70 - 50) / 2
        // ITL pools every gap: A 30, 10; B 10, 10
        assertThat(s.itlMs().count()).isEqualTo(4);
        assertThat(s.itlMs().mean()).isEqualTo(15.0);
        assertThat(s.itlMs().p50()).isEqualTo(10.0);
        assertThat(s.itlMs().max()).isEqualTo(30.0);
        assertThat(s.queueMs().max()).isEqualTo(10.0); // B first scheduled at 20, arrived at 10
    }

    @Test
    void requestArrivingExactlyWhenAStepEnds_joinsTheStepStartingThen() {
        // B arrives at 20 ms, the instant A's prefill step ends: completions, then arrivals, then step starts,
        // so B is in the step [20, 50) and its TTFT is 30 ms, not 40 ms.
        RunResult r = run("workload.synthetic.requests=2", "workload.arrival.rate=50");
        int b = r.log().indicesByRequestId()[1];
        assertThat(r.log().firstTokenNanos(b) - r.log().arrivalNanos(b)).isEqualTo(30 * MS);
    }

    @Test
    void promptLongerThanMaxModelLen_isRejectedOnce_withAReason() {
        RunResult r = run("workload.synthetic.requests=1", "workload.arrival.rate=1", "engine.max_model_len=10");
        assertThat(r.log().size()).isEqualTo(1);
        assertThat(r.log().status(0).status()).isEqualTo("rejected");
        assertThat(r.log().status(0).reason()).isEqualTo("prompt_too_long");
        Summary s = Summaries.of(r);
        assertThat(s.completed()).isZero();
        assertThat(s.rejected()).isEqualTo(1);
        assertThat(s.steps()).isZero();
    }

    @Test
    void sessionTurn_arrivesAfterThinkTime_andHitsThePreviousTurnsCachedBlocks() {
        // turn 0: prompt 10, 2 outputs -> tokens at 20 and 30 ms. Blocks of 8: 1 full block cached.
        // turn 1 arrives at 30 + 100 = 130 ms with 10 + 2 + 5 = 17 tokens: 8 hit, 9 computed in one prefill step.
        RunResult r = run(
                "workload.type=sessions",
                "workload.sessions.sessions=1",
                "workload.sessions.turns=2",
                "workload.sessions.first_input_tokens={type: fixed, value: 10}",
                "workload.sessions.new_input_tokens={type: fixed, value: 5}",
                "workload.sessions.output_tokens={type: fixed, value: 2}",
                "workload.sessions.think_time_ms={type: fixed, value: 100}",
                "engine.kv_cache.block_size=8");
        RequestLog log = r.log();
        int[] byId = log.indicesByRequestId();
        int t1 = byId[1];
        assertThat(log.arrivalNanos(t1)).isEqualTo(130 * MS);
        assertThat(log.turn(t1)).isEqualTo(1);
        assertThat(log.inputTokens(t1)).isEqualTo(17);
        assertThat(log.cachedTokens(t1)).isEqualTo(8);
        assertThat(log.firstTokenNanos(t1)).isEqualTo(150 * MS);
        assertThat(Summaries.of(r).firstAdmissionPrefixReuseRatio()).isEqualTo(8.0 / 27);
    }

    @Test
    void lengthCappedRequest_completesWithReasonMaxModelLen() {
        RunResult r = run("workload.synthetic.requests=1", "workload.arrival.rate=1", "engine.max_model_len=12");
        assertThat(r.log().status(0).status()).isEqualTo("completed");
        assertThat(r.log().status(0).reason()).isEqualTo("max_model_len");
        assertThat(r.log().outputTokens(0)).isEqualTo(2);
    }

    /**
     * vLLM's async loop on one request, 10 prompt tokens and 40 outputs, CPU part {@code cpuMs} per step: the CPU
     * schedules step k + 1 while the GPU runs step k, so a step reaches the GPU at max(previous step's end, CPU done)
     * and the outputs come every max(decode, CPU) ms. Most decode steps lie between block boundaries and are advanced
     * in one loop (AsyncWorker.advanceDecodeRun); each token keeps its own time.
     */
    private static Simulation asyncRun(int cpuMs) {
        return new Simulation(config(
                "engine.scheduler.async_scheduling=true",
                "timing.fixed.cpu_ms=" + cpuMs,
                "workload.synthetic.requests=1",
                "workload.synthetic.output_tokens={type: fixed, value: 40}",
                "workload.arrival.rate=1"));
    }

    /** Runs {@code sim} and checks its one request's first and last token times and the range of its 39 gaps. */
    private static void assertTokens(Simulation sim, long firstMs, long lastMs, double minGapMs, double maxGapMs) {
        RunResult r = sim.run();
        assertThat(r.log().firstTokenNanos(0)).isEqualTo(firstMs * MS);
        assertThat(r.log().lastTokenNanos(0)).isEqualTo(lastMs * MS);
        Summary s = Summaries.of(r);
        assertThat(s.itlMs().count()).isEqualTo(39);
        assertThat(s.itlMs().min()).isEqualTo(minGapMs);
        assertThat(s.itlMs().max()).isEqualTo(maxGapMs);
        assertThat(sim.advancedRunSteps()).isPositive();
    }

    @Test
    void asyncLoop_gpuBound_tokensEveryDecodeStep_decodeRunsAdvancedInOneLoop() {
        // step 1: CPU [0, 4), GPU [4, 24): token 1 at 24. Step 2 scheduled at 4, CPU done at 8, GPU [24, 34): token 2
        // at 34; from then on the CPU (4 ms) hides behind each 10 ms step: token k at 24 + 10 (k - 1), token 40 at 414
        assertTokens(asyncRun(4), 24, 414, 10.0, 10.0);
    }

    @Test
    void asyncLoop_cpuBound_tokensEveryCpuPart_decodeRunsAdvancedInOneLoop() {
        // step 1: CPU [0, 15), GPU [15, 35): token 1 at 35. Step 2: CPU [15, 30), GPU [35, 45). Step 3: CPU [35, 50)
        // (after token 1), GPU [50, 60); the CPU then blocks on step 2, already done: token 2 at 50. Each later token
        // comes one CPU part (15 ms) after the one before, token 39 at 35 + 38 x 15 = 605, except the last: with step
        // 40 in flight there is nothing left to schedule (an empty step takes no CPU time), so token 40 comes when the
        // GPU ends step 40, which started at 605: 615
        assertTokens(asyncRun(15), 35, 615, 10.0, 15.0);
    }
}
