package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestStatus;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A client that gives up ({@code workload.client_timeout_s}): the request ends {@code timed_out} at its deadline with
 * what it had received, and vLLM aborts it before its next schedule ({@code finish_requests(FINISHED_ABORTED)}): it
 * leaves the queues, its blocks are freed, and the output of a step in flight that included it is dropped.
 *
 * <p>Every case by hand on one rank with constant 10 ms steps, one request running at a time ({@code max_num_seqs}
 * 1): request 0 (100 prompt tokens, 10 output tokens) arrives at 0, request 1 (100 prompt tokens, 3 output tokens)
 * at 45 ms; the client timeout is 50 ms.
 */
class ClientTimeoutTest {
    private static final long MS = 1_000_000;

    private static final String TWO = """
            {"arrival_ms": 0, "input_length": 100, "output_length": 10}
            {"arrival_ms": 45, "input_length": 100, "output_length": 3}
            """;

    private static SimConfig config(boolean async, String timeoutS, String... more) {
        return config(TWO, async, timeoutS, more);
    }

    private static SimConfig config(String rows, boolean async, String timeoutS, String... more) {
        List<String> sets = FixedStepTraces.sets(rows);
        sets.addAll(List.of(
                "engine.scheduler.max_num_seqs=1",
                "engine.scheduler.async_scheduling=" + async,
                "output.timeseries_tick_s=0.01"));
        if (timeoutS != null) {
            sets.add("workload.client_timeout_s=" + timeoutS);
        }
        sets.addAll(List.of(more));
        return ConfigLoader.fromYaml("", "t", sets);
    }

    private static int row(RequestLog log, int id) {
        return FixedStepTraces.row(log, id);
    }

    /** Request 0 timed out with the 5 tokens its client had at 50 ms; request 1 completed with these token times. */
    private static void assertFirstGaveUpWithFiveTokens_secondCompleted(
            RequestLog log, long firstTokenMs, long lastTokenMs) {
        assertThat(log.status(row(log, 0))).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(log.outputTokens(row(log, 0))).isEqualTo(5);
        int b = row(log, 1);
        assertThat(log.status(b)).isEqualTo(RequestStatus.COMPLETED);
        assertThat(log.firstTokenNanos(b)).isEqualTo(firstTokenMs * MS);
        assertThat(log.lastTokenNanos(b)).isEqualTo(lastTokenMs * MS);
    }

    @Test
    void synchronousLoop_aRunningRequestPastItsDeadline_endsTimedOut_andTheNextStepAdmitsTheWaitingOne() {
        // request 0: prefill 0-10 (token 1 at 10), decodes to 20, 30, 40, 50; its deadline is 50, after that instant's
        // outputs: 5 tokens. The step at 50 aborts it first, so request 1 (waiting since 45) prefills 50-60 and decodes
        // to 70 and 80: TTFT 15 ms, E2E 35 ms, inside its deadline (95)
        RunResult r = CheckedRuns.run(config(false, "0.05"));
        RequestLog log = r.log();
        int a = row(log, 0);
        assertThat(log.status(a)).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(log.outputTokens(a)).isEqualTo(5);
        assertThat(log.firstTokenNanos(a)).isEqualTo(10 * MS);
        assertThat(log.lastTokenNanos(a)).isEqualTo(50 * MS);
        int b = row(log, 1);
        assertThat(log.status(b)).isEqualTo(RequestStatus.COMPLETED);
        assertThat(log.firstTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(15 * MS);
        assertThat(log.lastTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(35 * MS);
        // the run ends with its last request (80 ms), not at the later deadline of request 1 (95 ms)
        assertThat(r.endNanos()).isEqualTo(80 * MS);
        var summary = io.servesim.report.Summaries.of(r);
        assertThat(summary.timedOut()).isEqualTo(1L);
        assertThat(summary.completed()).isEqualTo(1L);
        assertThat(summary.incomplete()).isZero();
        assertThat(r.timeSeries().size()).isLessThanOrEqualTo(9); // ticks to 80 ms, none toward the stale deadline
    }

    @Test
    void withoutATimeout_theSameRequestsComplete_andTheSecondWaitsForTheFirst() {
        RunResult r = CheckedRuns.run(config(false, null));
        RequestLog log = r.log();
        assertThat(log.status(row(log, 0))).isEqualTo(RequestStatus.COMPLETED);
        int b = row(log, 1);
        // request 0 ends at 100 ms; request 1 prefills 100-110
        assertThat(log.firstTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(65 * MS);
        assertThat(io.servesim.report.Summaries.of(r).timedOut()).isNull(); // summary.json then has no timed_out
    }

    @Test
    void asyncLoop_theStepInFlightAtTheAbort_runsButItsTokenForTheAbortedRequestIsDropped() {
        // vLLM's async loop schedules a step while the one before runs: request 0's tokens come at 10 ... 50 as
        // above, and the step 50-60 (scheduled at 40) holds its sixth decode. At 50 the loop schedules the step after
        // it, aborting request 0 first: request 1 is admitted into 60-70 (token at 70), decodes at 80 and 90. The
        // step 50-60 still runs; its token for request 0 is dropped (the client has 5)
        RunResult r = CheckedRuns.run(config(true, "0.05"));
        RequestLog log = r.log();
        assertFirstGaveUpWithFiveTokens_secondCompleted(log, 70, 90);
        // request 1's first token at 70 shows the step 50-60 ran; its token for request 0 is not counted either, as
        // update_from_output skips a request no longer in self.requests
        assertThat(r.counters().generatedTokens()).isEqualTo(5 + 3);
        assertThat(r.counters().steps()).isEqualTo(6 + 3); // request 0's six steps (the last one dropped), request 1's
    }

    @Test
    void sglang_popsAWaitingRequest_butARunningOneRunsOneMoreForwardBeforeItsPagesAreFreed() {
        // SGLang's abort_request: request 0 (running) is marked to_finish at 50 ms, so the decode batch 50-60 still
        // runs it and frees its pages when its result comes back at 60; request 1 then prefills 60-70 and decodes at
        // 80 and 90 (vLLM, above, admits it at 50)
        RunResult r =
                CheckedRuns.run(config(false, "0.05", "engine.kind=sglang", "engine.sglang={max_running_requests: 1}"));
        RequestLog log = r.log();
        assertFirstGaveUpWithFiveTokens_secondCompleted(log, 70, 90); // what its client had at 50 ms
        // request 0: its prefill, 4 decodes to 50 ms and the one more forward; request 1: its prefill and 2 decodes
        assertThat(r.counters().steps()).isEqualTo(6 + 3);
        // a waiting request is popped at once: both arriving at 0, request 1 never runs
        RunResult both = CheckedRuns.run(
                config("""
                {"arrival_ms": 0, "input_length": 100, "output_length": 10}
                {"arrival_ms": 0, "input_length": 100, "output_length": 3}
                """, false, "0.05", "engine.kind=sglang", "engine.sglang={max_running_requests: 1}"));
        assertThat(both.log().firstScheduledNanos(row(both.log(), 1))).isEqualTo(-1);
        assertThat(both.counters().steps()).isEqualTo(6);
    }

    @Test
    void trtllm_synchronousLoop_aCanceledRequestRunsTheIterationThatFetchedTheCancel_thenIsTerminated() {
        // TensorRT-LLM fetches the cancel at the start of the iteration at 50 ms; request 0 is still active, so that
        // iteration (50-60) schedules it, and _handle_canceled_requests terminates it after its outputs, at 60.
        // Request 1 (waiting since 45) then runs its context 60-70 and decodes at 80 and 90 (vLLM admits it at 50)
        RunResult r = CheckedRuns.run(config(false, "0.05", TRTLLM_ONE_AT_A_TIME));
        RequestLog log = r.log();
        assertFirstGaveUpWithFiveTokens_secondCompleted(log, 70, 90); // what its client had at 50 ms
        // request 0: its context, five decodes (the last one after the deadline, its token generated and discarded)
        assertThat(r.counters().steps()).isEqualTo(6 + 3);
        assertThat(r.counters().generatedTokens()).isEqualTo(6 + 3);
        // a request waiting behind it is terminated at the same point without ever running
        RunResult both = CheckedRuns.run(config("""
                {"arrival_ms": 0, "input_length": 100, "output_length": 10}
                {"arrival_ms": 0, "input_length": 100, "output_length": 3}
                """, false, "0.05", TRTLLM_ONE_AT_A_TIME));
        assertThat(both.log().status(row(both.log(), 1))).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(both.log().firstScheduledNanos(row(both.log(), 1))).isEqualTo(-1);
        assertThat(both.counters().steps()).isEqualTo(6); // the iteration 50-60 ran (the run ends with its requests)
    }

    @Test
    void trtllm_overlapLoop_theCancelIsHandledAfterThePreviousIterationsOutputs_whileItsNextBatchIsInFlight() {
        // the overlap loop schedules an iteration while the one before runs: at 50 ms (the outputs of 40-50 handled,
        // the client gone with 5 tokens) it fetches the cancel and schedules 60-70, which still holds request 0 (50-60
        // does too). Handling the outputs of 50-60 at 60 terminates it; the iteration scheduled then (70-80) runs
        // request 1's context: tokens at 80 and 90 (vLLM's async loop: 70)
        RunResult r = CheckedRuns.run(config("""
                {"arrival_ms": 0, "input_length": 100, "output_length": 10}
                {"arrival_ms": 45, "input_length": 100, "output_length": 2}
                """, true, "0.05", TRTLLM_ONE_AT_A_TIME));
        RequestLog log = r.log();
        assertFirstGaveUpWithFiveTokens_secondCompleted(log, 80, 90);
        // request 0's token of 50-60 is handled before the cancel (generated), that of 60-70 after it (dropped)
        assertThat(r.counters().generatedTokens()).isEqualTo(6 + 2);
    }

    private static final String TRTLLM_ONE_AT_A_TIME = "engine={kind: trtllm, trtllm: {max_batch_size: 1}}";

    @Test
    void aRequestFinishingAtItsDeadline_completes() {
        // request 0 alone: its tenth token at 100 ms, its deadline 100 ms after the instant's outputs
        RunResult r = CheckedRuns.run(config(false, "0.1", "workload.trace.limit=1"));
        assertThat(r.log().status(0)).isEqualTo(RequestStatus.COMPLETED);
        assertThat(io.servesim.report.Summaries.of(r).timedOut()).isZero();
    }

    @Test
    void aWaitingRequestPastItsDeadline_leavesTheQueue_neverScheduled() {
        // both arrive at 0: request 0 runs (tokens at 10 ... 50), request 1 waits behind it; at 50 both clients give
        // up: request 0 with 5 tokens, request 1 never scheduled, and nothing is left to run
        RunResult r = CheckedRuns.run(config("""
                {"arrival_ms": 0, "input_length": 100, "output_length": 10}
                {"arrival_ms": 0, "input_length": 100, "output_length": 3}
                """, false, "0.05"));
        RequestLog log = r.log();
        assertThat(log.status(row(log, 0))).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(log.outputTokens(row(log, 0))).isEqualTo(5);
        int b = row(log, 1);
        assertThat(log.status(b)).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(log.outputTokens(b)).isZero();
        assertThat(log.firstScheduledNanos(b)).isEqualTo(-1);
        assertThat(r.endNanos()).isEqualTo(50 * MS);
        assertThat(r.counters().steps()).isEqualTo(5); // the step at 50 found nothing left
    }

    @Test
    void validate_dividesTheOutputByTheSpanToTheLastCompletedToken_notToALaterTimeout() {
        // request 0 (3 tokens) completes at 30 ms; request 1, waiting behind it, gets tokens at 40 ... 100 and times
        // out at 100 ms: the run ends at 100, the completed output (3 tokens) was all out by 30
        RunResult r = CheckedRuns.run(config("""
                {"arrival_ms": 0, "input_length": 100, "output_length": 3}
                {"arrival_ms": 0, "input_length": 100, "output_length": 10}
                """, false, "0.1"));
        assertThat(r.endNanos()).isEqualTo(100 * MS);
        assertThat(r.log().status(row(r.log(), 1))).isEqualTo(RequestStatus.TIMED_OUT);
        double[] one = {1};
        io.servesim.validate.Validation v =
                io.servesim.validate.Validation.of(new io.servesim.validate.MeasuredRun(one, one, one, 1, 1), r);
        assertThat(v.simulatedOutputTokS()).isEqualTo(3 / 0.030, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aTimedOutSessionTurn_endsItsSession_itsLaterTurnsAreAbandoned() {
        RunResult r = CheckedRuns.run(ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "workload.type=sessions",
                        "workload.sessions.sessions=1",
                        "workload.sessions.turns=3",
                        "workload.sessions.first_input_tokens={type: fixed, value: 100}",
                        "workload.sessions.new_input_tokens={type: fixed, value: 20}",
                        "workload.sessions.output_tokens={type: fixed, value: 20}",
                        "workload.client_timeout_s=0.1",
                        "timing.type=fixed",
                        "timing.fixed={step_ms: 10, prefill_ms: 0, decode_ms: 0}")));
        RequestLog log = r.log();
        assertThat(log.size()).isEqualTo(3);
        // 20 tokens at 10 ms each take 200 ms: the first turn times out at 100 ms, and the session ends there
        assertThat(log.status(row(log, 0))).isEqualTo(RequestStatus.TIMED_OUT);
        for (int i = 0; i < log.size(); i++) {
            if (log.requestId(i) != 0) {
                assertThat(log.status(i)).isEqualTo(RequestStatus.ABANDONED);
            }
        }
    }

    private static final String ONE = """
            {"arrival_ms": 0, "input_length": 100, "output_length": 10}
            """;

    /** Request 0 alone on two workers, worker 0 failing at {@code failMs}, its client giving up after {@code timeoutS}. */
    private static RunResult oneWithWorker0Failing(String timeoutS, int failMs) {
        return CheckedRuns.run(config(
                ONE,
                false,
                timeoutS,
                "cluster.workers=2",
                "cluster.events=[{at_ms: " + failMs + ", worker: 0, action: fail}]"));
    }

    @Test
    void aRequestOfAFailedWorker_isRetriedElsewhere_underANewDeadlineFromTheRetry() {
        // request 0 runs on worker 0 from 0 (tokens at 10, 20); worker 0 fails at 25 and the client sends the request
        // again: worker 1 prefills it 25-35 (its first token at 35) and decodes to 45, 55, 65, 75. The retry's own
        // deadline is 25 + 50 = 75, after that instant's outputs: timed out with 5 tokens (the first attempt's
        // deadline, 50, is void; under it the request would have ended with 2 tokens at 50)
        RunResult r = oneWithWorker0Failing("0.05", 25);
        RequestLog log = r.log();
        int a = row(log, 0);
        assertThat(log.status(a)).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(log.restarts(a)).isEqualTo(1);
        assertThat(log.outputTokens(a)).isEqualTo(5);
        assertThat(log.firstTokenNanos(a)).isEqualTo(35 * MS);
        assertThat(log.lastTokenNanos(a)).isEqualTo(75 * MS);
        var summary = io.servesim.report.Summaries.of(r);
        assertThat(summary.timedOut()).isEqualTo(1L);
        assertThat(summary.restarts()).isEqualTo(1);
        // with a timeout of 0.1 s the retry (deadline 125) completes: 10 tokens by 125, the last at 125
        RunResult longer = oneWithWorker0Failing("0.1", 25);
        int b = row(longer.log(), 0);
        assertThat(longer.log().status(b)).isEqualTo(RequestStatus.COMPLETED);
        assertThat(longer.log().lastTokenNanos(b)).isEqualTo(125 * MS);
    }

    @Test
    void aRequestWhoseClientGaveUp_isNotRetriedWhenItsWorkerFailsBeforeTheAbort() {
        // the deadline, 55, falls inside the step 50-60: request 0 ends timed out with its 5 tokens at 55 and would
        // be aborted at the next schedule (60), but worker 0 fails at 57: its client is gone, so nobody sends the
        // request again, and it stays timed out, once
        RunResult r = oneWithWorker0Failing("0.055", 57);
        RequestLog log = r.log();
        int a = row(log, 0);
        assertThat(log.status(a)).isEqualTo(RequestStatus.TIMED_OUT);
        assertThat(log.outputTokens(a)).isEqualTo(5);
        assertThat(log.restarts(a)).isZero();
        var summary = io.servesim.report.Summaries.of(r);
        assertThat(summary.timedOut()).isEqualTo(1L);
        assertThat(summary.restarts()).isZero();
        assertThat(summary.completed()).isZero();
    }

    @Test
    void aTimeout_isRefusedWhereAnAbortIsNotModelled_namingTheKeyAndWhy() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of(
                                "workload.client_timeout_s=10",
                                "cluster.mode=disaggregated",
                                "cluster.prefill={workers: 1, engine: {kind: sglang}}",
                                "cluster.decode={workers: 1, engine: {kind: sglang}}")))
                .hasMessageContaining("workload.client_timeout_s")
                .hasMessageContaining("SGLang and TensorRT-LLM in aggregated clusters");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("workload.client_timeout_s=0")))
                .hasMessageContaining("workload.client_timeout_s")
                .hasMessageContaining("expected a positive number of seconds");
    }
}
