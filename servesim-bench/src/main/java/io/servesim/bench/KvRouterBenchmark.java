package io.servesim.bench;

import io.servesim.router.KvAwareRouter;
import io.servesim.router.LoadIndex;
import io.servesim.router.RouterContext;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
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
 * One KV-aware routing decision at {@code workers} ranks: 64 prompt families of 32 blocks, each cached on 8 random
 * ranks, every rank with some load; the routed prompt shares a family's first 24 blocks. The request carries its
 * block hashes (computed once, as the engine shares them), so this times the overlap walk and the cost pick.
 *
 * {@snippet lang="shell" :
 * bash scripts/bench.sh KvRouterBenchmark
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class KvRouterBenchmark {
    @Param({"2048"})
    int workers;

    KvAwareRouter router;
    Request[] requests;
    long[][] promptHashes;
    int next;

    /** Builds the router state. */
    @Setup
    public void setUp() {
        router = new KvAwareRouter(new RouterContext(workers, 1, new LoadIndex(workers), new RandomStreams(1)));
        SplittableRandom rng = new SplittableRandom(3);
        long[][] families = new long[64][32];
        for (long[] f : families) {
            for (int b = 0; b < f.length; b++) {
                f[b] = rng.nextLong();
            }
            for (int copy = 0; copy < 8; copy++) {
                int rank = rng.nextInt(workers);
                for (long h : f) {
                    router.stored(rank, h);
                }
            }
        }
        for (int r = 0; r < workers; r++) {
            router.onRankLoad(r, rng.nextInt(4), rng.nextInt(32), rng.nextInt(20_000), rng.nextInt(4_000));
        }
        requests = new Request[256];
        promptHashes = new long[256][];
        for (int i = 0; i < requests.length; i++) {
            long[] f = families[i % families.length];
            long[] hashes = new long[32];
            System.arraycopy(f, 0, hashes, 0, 24);
            for (int b = 24; b < 32; b++) {
                hashes[b] = rng.nextLong();
            }
            requests[i] = new Request(i, -1, 0, true, 0, new int[32 * 16 + 5], 16, 1L);
            promptHashes[i] = hashes;
        }
    }

    /** One routing decision. */
    @Benchmark
    public int route() {
        int i = next;
        next = (next + 1) & (requests.length - 1);
        return router.route(requests[i], promptHashes[i]);
    }
}
