package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servesim.config.ClientFrontend;
import org.junit.jupiter.api.Test;

/** The client's view of a run, by hand: each first and last token later by the frontend's delay for its step. */
class ClientViewTest {
    private static final long MS = 1_000_000;

    /** A record with the fields the view reads (times in ms, -1: never); the rest at their "never happened" values. */
    private static RequestRecord record(
            int id, int rank, long arrivalMs, long scheduledMs, long firstMs, long lastMs, int outputs) {
        return record(id, rank, arrivalMs, scheduledMs, firstMs, lastMs, outputs, RequestStatus.COMPLETED);
    }

    private static RequestRecord record(
            int id,
            int rank,
            long arrivalMs,
            long scheduledMs,
            long firstMs,
            long lastMs,
            int outputs,
            RequestStatus status) {
        return Records.timed(id, 0, rank, ns(arrivalMs), ns(scheduledMs), ns(firstMs), ns(lastMs), 10, outputs, status);
    }

    private static long ns(long ms) {
        return ms < 0 ? -1 : ms * MS;
    }

    /**
     * Rank 0 serves request 0 over [10, 110] ms and request 1 over [20, 50] ms; rank 1 serves request 2 alone. With
     * 2 ms + 100 µs per request: request 0's first token (at 15 ms, request 1 not yet admitted) waits 2.1 ms and its
     * last (110 ms, request 1 gone) 2.1 ms; request 1's first token (30 ms) and last (50 ms) share their steps with
     * request 0: 2.2 ms each; request 2's 2.1 ms. A rejected request has no client latencies.
     */
    @Test
    void eachTokenWaits_theConstant_plusTheTimePerRequestItsRankServedThen() {
        RequestLog log = new RequestLog();
        log.add(record(0, 0, 0, 10, 15, 110, 11));
        log.add(record(1, 0, 20, 20, 30, 50, 3));
        log.add(record(2, 1, 0, 5, 8, 8, 1));
        log.add(record(3, 0, 0, -1, -1, -1, 0, RequestStatus.REJECTED_NO_WORKER)); // never admitted
        ClientView v = ClientView.of(log, new ClientFrontend(2, 100));

        assertThat(v.firstTokenStepRequests(0)).isEqualTo(1);
        assertThat(v.lastTokenStepRequests(0)).isEqualTo(1);
        assertThat(v.firstTokenStepRequests(1)).isEqualTo(2);
        assertThat(v.lastTokenStepRequests(1)).isEqualTo(2);
        assertThat(v.ttftMs(0)).isCloseTo(15 + 2.1, within(1e-9));
        assertThat(v.e2eMs(0)).isCloseTo(110 + 2.1, within(1e-9));
        assertThat(v.tpotMs(0)).as("equal delays leave TPOT alone").isCloseTo(95.0 / 10, within(1e-9));
        assertThat(v.ttftMs(1)).isCloseTo(10 + 2.2, within(1e-9));
        assertThat(v.e2eMs(1)).isCloseTo(30 + 2.2, within(1e-9));
        assertThat(v.ttftMs(2)).isCloseTo(8 + 2.1, within(1e-9));
        assertThat(v.tpotMs(2)).as("one output: no TPOT").isNaN();
        assertThat(v.completed(3)).isFalse();

        ClientView.Latencies l = v.latencies();
        assertThat(l.ttftMs().count()).as("completed requests only").isEqualTo(3);
        assertThat(l.ttftMs().mean()).isCloseTo((17.1 + 12.2 + 10.1) / 3, within(1e-9));
        assertThat(l.e2eMs().max()).isCloseTo(112.1, within(1e-9));
        assertThat(l.tpotMs().count()).as("requests with at least two outputs").isEqualTo(2);
    }

    /**
     * (E2E − TTFT) / (outputs − 1), as a client derives it: a first token delivered in a busier step than the last
     * one shortens the client's TPOT.
     */
    @Test
    void theClientsTpot_spreadsTheChangeInDelay_overTheLaterTokens() {
        RequestLog log = new RequestLog();
        log.add(record(0, 0, 0, 0, 10, 100, 10)); // first token with requests 1 and 2 in the step, last alone
        log.add(record(1, 0, 0, 0, 5, 10, 2));
        log.add(record(2, 0, 0, 0, 6, 10, 2));
        ClientView v = ClientView.of(log, new ClientFrontend(1, 1000)); // 1 ms + 1 ms per request
        assertThat(v.firstDelayMs(0)).isCloseTo(4, within(1e-9));
        assertThat(v.lastDelayMs(0)).isCloseTo(2, within(1e-9));
        assertThat(v.tpotMs(0)).isCloseTo((90 + 2 - 4) / 9.0, within(1e-9));
    }

    @Test
    void noFrontend_isTheEnginesOwnLatencies() {
        RequestLog log = new RequestLog();
        log.add(record(0, 0, 0, 10, 15, 110, 11));
        ClientView v = ClientView.of(log, ClientFrontend.NONE);
        assertThat(v.ttftMs(0)).isEqualTo(log.get(0).ttftNanos() / 1e6);
        assertThat(v.e2eMs(0)).isEqualTo(log.get(0).e2eNanos() / 1e6);
        assertThat(v.tpotMs(0)).isEqualTo(log.get(0).tpotMs());
    }
}
