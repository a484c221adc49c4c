package io.servesim.bench;

import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of one schedule + pop on the event queue holding {@code pending} events (the hold model: every popped event
 * schedules one successor at a random later time).
 *
 * {@snippet lang="shell" :
 * bash scripts/bench.sh EventQueueBenchmark
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class EventQueueBenchmark {
    @Param({"64", "4096", "262144"})
    int pending;

    EventQueue queue;
    Hold hold;

    static final class Hold implements EventHandler {
        final SplittableRandom rng = new SplittableRandom(1);
        EventQueue q;

        @Override
        public void onEvent(int kind, long payload) {
            q.schedule(q.nowNanos() + 1 + rng.nextInt(1_000_000), Phase.PASS_COMPLETION, payload, this, kind, payload);
        }
    }

    /** Fills the queue. */
    @Setup
    public void setUp() {
        queue = new EventQueue(pending);
        hold = new Hold();
        hold.q = queue;
        for (int i = 0; i < pending; i++) {
            queue.schedule(hold.rng.nextInt(1_000_000), Phase.PASS_COMPLETION, i, hold, 0, i);
        }
    }

    /** One pop (whose handler schedules one event). */
    @Benchmark
    public long popAndReschedule() {
        queue.runNext();
        return queue.nowNanos();
    }
}
