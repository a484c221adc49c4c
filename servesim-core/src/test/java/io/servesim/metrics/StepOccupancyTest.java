package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How many requests a rank served at an instant, read back from the records, by hand. */
class StepOccupancyTest {
    /** A record with the fields the count reads; the rest at their "never happened" values. */
    private static RequestRecord record(int id, int worker, int rank, long scheduled, long last, RequestStatus status) {
        long first = scheduled < 0 ? -1 : scheduled + 1;
        return Records.timed(id, worker, rank, 0, scheduled, first, last, 10, 2, status);
    }

    private static RequestRecord served(int id, int worker, int rank, long scheduled, long last) {
        return record(id, worker, rank, scheduled, last, RequestStatus.COMPLETED);
    }

    @Test
    void aRequestCounts_fromItsAdmission_throughTheStepOfItsLastToken_onItsOwnRank() {
        RequestLog log = new RequestLog();
        log.add(served(0, 0, 0, 100, 500));
        log.add(served(1, 0, 0, 200, 300));
        log.add(served(2, 0, 1, 150, 900)); // worker 0's other attention-DP rank
        log.add(served(3, 1, 0, 100, 900)); // another worker
        log.add(record(4, 0, 0, -1, -1, RequestStatus.REJECTED_NO_WORKER)); // never admitted: never counted
        StepOccupancy o = StepOccupancy.of(log);
        assertThat(o.requestsAt(0, 0, 99)).isZero();
        assertThat(o.requestsAt(0, 0, 100)).isEqualTo(1); // admitted at the instant
        assertThat(o.requestsAt(0, 0, 200)).isEqualTo(2);
        assertThat(o.requestsAt(0, 0, 300)).isEqualTo(2); // request 1's last token is in this step
        assertThat(o.requestsAt(0, 0, 301)).isEqualTo(1);
        assertThat(o.requestsAt(0, 0, 500)).isEqualTo(1);
        assertThat(o.requestsAt(0, 0, 501)).isZero();
        assertThat(o.requestsAt(0, 1, 300)).isEqualTo(1);
        assertThat(o.requestsAt(1, 0, 300)).isEqualTo(1);
        assertThat(o.requestsAt(2, 0, 300)).as("a worker that served nothing").isZero();
    }
}
