package io.servesim.bench;

import io.servesim.sim.EventQueue;
import io.servesim.transfer.TransferService;
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
 * The transfer service with 1,000 moving jobs: each completion submits a replacement between random endpoints, so
 * every operation is one completion plus one start, each reflowing the jobs that share an endpoint (all of them
 * with a fabric cap). {@code endpoints} sets how many jobs share one.
 *
 * {@snippet lang="shell" :
 * bash scripts/bench.sh TransferReflowBenchmark
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TransferReflowBenchmark {
    @Param({"1000"})
    int moving;

    @Param({"2048", "64"})
    int endpoints;

    @Param({"0", "400"})
    double fabricGbytesPerS;

    EventQueue queue;
    TransferService transfers;
    final SplittableRandom rng = new SplittableRandom(11);
    long completed;

    /** Starts {@code moving} jobs. */
    @Setup
    public void setUp() {
        queue = new EventQueue(4096);
        transfers = new TransferService(queue, 0, fabricGbytesPerS);
        for (int e = 0; e < endpoints; e++) {
            transfers.addEndpoint(50, 50);
        }
        transfers.listener(id -> {
            completed++;
            transfers.release(id); // the id is recycled: memory stays flat however long the benchmark runs
            submit();
        });
        for (int i = 0; i < moving; i++) {
            submit();
        }
        while (transfers.movingJobs() < moving) {
            queue.runNext(); // first bytes arrive
        }
    }

    private void submit() {
        int s = rng.nextInt(endpoints);
        int d = (s + 1 + rng.nextInt(endpoints - 1)) % endpoints;
        transfers.submit(s, d, 1_000_000L + rng.nextInt(100_000_000), 0);
    }

    /** Runs events until one more job completed (and its replacement was submitted). */
    @Benchmark
    public long completeAndReplace() {
        long before = completed;
        while (completed == before) {
            queue.runNext();
        }
        return queue.nowNanos();
    }
}
