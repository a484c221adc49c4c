package io.servesim.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.sim.EventQueue;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Equal-share byte service, by hand: 1 GB = 10⁹ bytes, 1 GB/s = 1 byte per ns. */
class TransferServiceTest {
    private static final long MS = 1_000_000L;
    private static final long GB = 1_000_000_000L;

    private final EventQueue queue = new EventQueue();
    private final TransferService service = new TransferService(queue, 0, 0);
    private final List<String> done = new ArrayList<>();

    TransferServiceTest() {
        service.listener(id -> done.add(id + "@" + queue.nowNanos() / MS));
    }

    private void runUntil(long nanos) {
        while (!queue.isEmpty() && queue.peekTimeNanos() <= nanos) {
            queue.runNext();
        }
    }

    @Test
    void twoPullsOnOne50GbytesPerSLink_eachMoveAt25GbytesPerS() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int j1 = service.submit(a, b, GB, 0);
        int j2 = service.submit(a, b, GB, 0);
        runUntil(0);
        assertThat(service.rateGbytesPerS(j1)).isEqualTo(25.0);
        assertThat(service.rateGbytesPerS(j2)).isEqualTo(25.0);
        runUntil(Long.MAX_VALUE);
        assertThat(done).containsExactly(j1 + "@40", j2 + "@40"); // 1 GB at 25 GB/s
        assertThat(service.remainingBytes(j1)).isZero();
    }

    @Test
    void everyJobSubmitted_endsOnceDoneOrCancelled_withItsBytes() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int j1 = service.submit(a, b, GB, 0);
        int j2 = service.submit(a, b, GB, 0);
        int j3 = service.submit(a, b, GB, 5 * MS); // still waiting for its first byte when cancelled
        runUntil(0); // j1 and j2 start moving; the clock stays at 0
        assertThat(service.inFlightJobs()).isEqualTo(3);
        assertThat(service.accountingProblem()).isNull(); // in flight counts too
        service.cancel(j2); // moving, nothing delivered yet
        service.cancel(j3); // waiting for its first byte
        service.cancel(j2); // a second cancel changes nothing
        runUntil(Long.MAX_VALUE);
        assertThat(done).containsExactly(j1 + "@20"); // j1 alone: 1 GB at 50 GB/s
        assertThat(service.inFlightJobs()).isZero();
        assertThat(service.accountingProblem()).isNull();
    }

    @Test
    void aThirdPullArrivingMidway_reflowsAllThree() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int j1 = service.submit(a, b, GB, 0);
        int j2 = service.submit(a, b, GB, 0);
        runUntil(20 * MS); // j1, j2 have 0.5 GB left each
        int j3 = service.submit(a, b, GB, 0);
        runUntil(20 * MS);
        assertThat(service.rateGbytesPerS(j1)).isCloseTo(50.0 / 3, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(service.rateGbytesPerS(j3)).isCloseTo(50.0 / 3, org.assertj.core.data.Offset.offset(1e-12));
        runUntil(Long.MAX_VALUE);
        // j1, j2: 0.5 GB at 16.67 GB/s = 30 ms -> 50 ms. j3: 0.5 GB by then, the rest alone at 50 GB/s -> 60 ms
        assertThat(done).containsExactly(j1 + "@50", j2 + "@50", j3 + "@60");
        assertThat(service.endNanos(j3)).isEqualTo(60 * MS);
    }

    @Test
    void firstByteDelay_delaysTheStartOnly_andUsesNoBandwidthMeanwhile() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int late = service.submit(a, b, GB, 1 * MS);
        int early = service.submit(a, b, GB, 0);
        runUntil(0);
        assertThat(service.state(late)).isEqualTo(TransferService.State.WAITING_FIRST_BYTE);
        assertThat(service.rateGbytesPerS(early)).isEqualTo(50.0); // the waiting job takes no share
        runUntil(Long.MAX_VALUE);
        // early: 1 ms alone (0.05 GB), then 25 GB/s; late starts at 1 ms.
        // early's remaining 0.95 GB and late's 1 GB share 50 GB/s until early finishes at 1 + 38 = 39 ms;
        // late has 0.05 GB left, alone at 50 GB/s: 1 ms -> 40 ms. Total bytes 2 GB over 40 ms of full use.
        assertThat(service.startNanos(late)).isEqualTo(1 * MS);
        assertThat(done).containsExactly(early + "@39", late + "@40");
    }

    @Test
    void rate_isTheMinimumOfSourceEgressAndDestinationIngressShares() {
        int fast = service.addEndpoint(50, 0);
        int slowIn = service.addEndpoint(0, 20);
        int other = service.addEndpoint(0, 0);
        int j1 = service.submit(fast, slowIn, GB, 0); // min(50/2, 20/1) = 20
        int j2 = service.submit(fast, other, GB, 0); // min(50/2, unlimited) = 25
        runUntil(0);
        assertThat(service.rateGbytesPerS(j1)).isEqualTo(20.0);
        assertThat(service.rateGbytesPerS(j2)).isEqualTo(25.0);
    }

    @Test
    void fabricCap_isSharedByAllMovingJobs() {
        TransferService fabric = new TransferService(queue, 1, 60);
        int a = fabric.addEndpoint(0, 0);
        int b = fabric.addEndpoint(0, 0);
        int c = fabric.addEndpoint(0, 0);
        int d = fabric.addEndpoint(0, 0);
        int j1 = fabric.submit(a, b, GB, 0);
        int j2 = fabric.submit(c, d, GB, 0); // disjoint endpoints, but one 60 GB/s fabric
        runUntil(0);
        assertThat(fabric.rateGbytesPerS(j1)).isEqualTo(30.0);
        assertThat(fabric.rateGbytesPerS(j2)).isEqualTo(30.0);
    }

    @Test
    void unlimitedBandwidth_completesAtTheFirstByte() {
        int a = service.addEndpoint(0, 0);
        int b = service.addEndpoint(0, 0);
        int j = service.submit(a, b, GB, 3 * MS);
        runUntil(Long.MAX_VALUE);
        assertThat(done).containsExactly(j + "@3");
    }

    @Test
    void cancellingAMovingJob_speedsUpTheJobsSharingItsEndpoints() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int j1 = service.submit(a, b, GB, 0);
        int j2 = service.submit(a, b, GB, 0);
        runUntil(20 * MS);
        service.cancel(j2); // j1 has 0.5 GB left, now alone at 50 GB/s: 10 ms
        runUntil(Long.MAX_VALUE);
        assertThat(done).containsExactly(j1 + "@30");
        assertThat(service.state(j2)).isEqualTo(TransferService.State.CANCELLED);
        assertThat(service.movingJobs()).isZero();
    }

    @Test
    void jobsOnUnrelatedEndpoints_areNotReflowed() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int c = service.addEndpoint(10, 10);
        int d = service.addEndpoint(10, 10);
        int j1 = service.submit(a, b, GB, 0);
        runUntil(0);
        int j2 = service.submit(c, d, GB, 0);
        runUntil(0);
        assertThat(service.rateGbytesPerS(j1)).isEqualTo(50.0);
        assertThat(service.rateGbytesPerS(j2)).isEqualTo(10.0);
        runUntil(Long.MAX_VALUE);
        assertThat(done).containsExactly(j1 + "@20", j2 + "@100");
    }

    @Test
    void releasedIds_areReused_andTheOldJobsStaleEventsDoNotTouchTheNewOne() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int j1 = service.submit(a, b, GB, 10 * MS); // first byte at 10 ms
        service.cancel(j1); // its START event at 10 ms is now stale
        service.release(j1);
        int j2 = service.submit(a, b, GB, 30 * MS); // same id, first byte at 30 ms
        assertThat(j2).isEqualTo(j1);
        runUntil(20 * MS);
        assertThat(service.state(j2))
                .isEqualTo(TransferService.State.WAITING_FIRST_BYTE); // the stale START was ignored
        runUntil(Long.MAX_VALUE);
        assertThat(done).containsExactly(j2 + "@50"); // 30 ms + 1 GB at 50 GB/s
        assertThat(service.idsAllocated()).isEqualTo(1);
    }

    @Test
    void releasingAJobStillInFlight_isAnError() {
        int a = service.addEndpoint(50, 50);
        int b = service.addEndpoint(50, 50);
        int j = service.submit(a, b, GB, 0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> service.release(j))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("only finished jobs");
    }

    @Test
    void fabricCap_keepsOneWakeUpEvent_notOnePerJobPerReflow_andCompletesInTimeThenIdOrder() {
        TransferService fabric = new TransferService(queue, 1, 100); // 100 GB/s shared by everything
        List<String> order = new ArrayList<>();
        fabric.listener(id -> order.add(id + "@" + queue.nowNanos() / MS));
        int[] ends = new int[200];
        for (int i = 0; i < ends.length; i++) {
            ends[i] = fabric.addEndpoint(0, 0);
        }
        for (int i = 0; i < 100; i++) {
            fabric.submit(ends[2 * i], ends[2 * i + 1], GB / 10, 0); // 100 jobs of 0.1 GB: 1 GB/s each
        }
        runUntil(0); // all started: 100 reflows of up to 100 jobs each
        assertThat(fabric.movingJobs()).isEqualTo(100);
        // at most one (possibly superseded) wake-up per reflow: 100, where one event per job per reflow were 5,050
        assertThat(queue.size()).isLessThanOrEqualTo(100);
        runUntil(Long.MAX_VALUE);
        assertThat(order).hasSize(100);
        assertThat(order.get(0)).isEqualTo("0@100"); // 0.1 GB at 1 GB/s, all at the same instant, by id
        assertThat(order.get(99)).isEqualTo("99@100");
    }
}
