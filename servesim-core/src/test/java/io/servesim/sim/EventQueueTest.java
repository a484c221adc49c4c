package io.servesim.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The event queue orders by (time, phase, stable id, scheduling sequence) and drives the virtual clock. */
class EventQueueTest {
    private final List<String> fired = new ArrayList<>();

    private EventHandler recorder(String name) {
        return (kind, payload) -> fired.add(name + kind + ":" + payload);
    }

    @Test
    void sameTimeEvents_runInPhaseOrder_passCompletionBeforeArrivalBeforeStepStart() {
        EventQueue q = new EventQueue();
        q.schedule(5, Phase.TELEMETRY, 0, recorder("tel"), 0, 0);
        q.schedule(5, Phase.STEP_START, 0, recorder("step"), 0, 0);
        q.schedule(5, Phase.ARRIVAL, 0, recorder("arr"), 0, 0);
        q.schedule(5, Phase.WORKER_READY, 0, recorder("ready"), 0, 0);
        q.schedule(5, Phase.TRANSFER_COMPLETION, 0, recorder("xfer"), 0, 0);
        q.schedule(5, Phase.PASS_COMPLETION, 0, recorder("pass"), 0, 0);
        while (q.runNext()) {}
        assertThat(fired).containsExactly("pass0:0", "xfer0:0", "ready0:0", "arr0:0", "step0:0", "tel0:0");
    }

    @Test
    void localAndExternalEvents_runInOneTotalOrder_andALocalEventMayRunAheadOnlyBeforeEveryExternalOne() {
        EventQueue q = new EventQueue();
        q.schedule(10, Phase.ARRIVAL, 0, recorder("arr"), 0, 0);
        q.scheduleLocal(10, Phase.PASS_COMPLETION, 4, recorder("pass"), 0, 0);
        q.scheduleLocal(10, Phase.STEP_START, 4, recorder("step"), 0, 0);
        q.schedule(3, Phase.TELEMETRY, 0, recorder("tel"), 0, 0);
        assertThat(q.size()).isEqualTo(4);
        assertThat(q.peekTimeNanos()).isEqualTo(3);
        // the next external event is telemetry at 3: a local event at 2 may run ahead, one at 3 (an earlier phase
        // than telemetry) too, one at 4 may not
        assertThat(q.mayRunAhead(2, Phase.STEP_START, 4)).isTrue();
        assertThat(q.mayRunAhead(3, Phase.STEP_START, 4)).isTrue();
        assertThat(q.mayRunAhead(4, Phase.PASS_COMPLETION, 4)).isFalse();
        q.fence(1); // a caller stops at 1 ns: nothing after it runs ahead
        assertThat(q.mayRunAhead(2, Phase.STEP_START, 4)).isFalse();
        q.fence(Long.MAX_VALUE);
        while (q.runNext()) {}
        // one order over both heaps: time, then phase (pass completion < arrival < step start)
        assertThat(fired).containsExactly("tel0:0", "pass0:0", "arr0:0", "step0:0");
        q.runAheadTo(12);
        assertThat(q.nowNanos()).isEqualTo(12);
        assertThat(q.ranAhead()).isEqualTo(1);
        assertThatThrownBy(() -> q.runAheadTo(11)).hasMessageContaining("into the past");
        q.forbidRunAhead();
        assertThat(q.mayRunAhead(20, Phase.STEP_START, 4)).isFalse(); // even with no external event pending
    }

    @Test
    void samePhaseEvents_runInStableIdOrder_thenInSchedulingOrder() {
        EventQueue q = new EventQueue();
        q.schedule(1, Phase.PASS_COMPLETION, 7, recorder("r7-"), 1, 0);
        q.schedule(1, Phase.PASS_COMPLETION, 3, recorder("r3-"), 1, 0);
        q.schedule(1, Phase.PASS_COMPLETION, 7, recorder("r7-"), 2, 0);
        q.schedule(0, Phase.TELEMETRY, 99, recorder("early"), 0, 0);
        while (q.runNext()) {}
        assertThat(fired).containsExactly("early0:0", "r3-1:0", "r7-1:0", "r7-2:0");
    }

    @Test
    void runNext_advancesTheClockToTheEventTime() {
        EventQueue q = new EventQueue();
        long[] seen = new long[1];
        q.schedule(42, Phase.ARRIVAL, 0, (k, p) -> seen[0] = q.nowNanos(), 0, 0);
        assertThat(q.nowNanos()).isZero();
        q.runNext();
        assertThat(seen[0]).isEqualTo(42);
        assertThat(q.nowNanos()).isEqualTo(42);
        assertThat(q.runNext()).isFalse();
    }

    @Test
    void schedulingInThePast_isRejected() {
        EventQueue q = new EventQueue();
        q.schedule(10, Phase.ARRIVAL, 0, (k, p) -> {}, 0, 0);
        q.runNext();
        assertThatThrownBy(() -> q.schedule(9, Phase.ARRIVAL, 0, (k, p) -> {}, 0, 0))
                .isInstanceOf(IllegalStateException.class);
    }

    @Property(tries = 200)
    void popsAreNonDecreasingInTimePhaseIdSequence_andEveryEventFiresOnce(
            @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 20) Integer> times,
            @ForAll @IntRange(min = 0, max = 5) int phaseSeed) {
        EventQueue q = new EventQueue(2);
        List<long[]> popped = new ArrayList<>();
        for (int i = 0; i < times.size(); i++) {
            int phase = (i * 31 + phaseSeed) % Phase.COUNT;
            long id = (i * 17L) % 5;
            long[] key = {times.get(i), phase, id, i};
            q.schedule(times.get(i), phase, id, (k, p) -> popped.add(key), 0, i);
        }
        while (q.runNext()) {}
        assertThat(popped).hasSize(times.size());
        for (int i = 1; i < popped.size(); i++) {
            long[] a = popped.get(i - 1);
            long[] b = popped.get(i);
            int cmp = 0;
            for (int f = 0; f < 4 && cmp == 0; f++) {
                cmp = Long.compare(a[f], b[f]);
            }
            assertThat(cmp).isNegative();
        }
    }
}
