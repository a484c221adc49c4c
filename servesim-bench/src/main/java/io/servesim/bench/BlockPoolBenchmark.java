package io.servesim.bench;

import io.servesim.kv.BlockHasher;
import io.servesim.kv.BlockPool;
import io.servesim.kv.BlockTable;
import io.servesim.kv.KvCacheManager;
import it.unimi.dsi.fastutil.ints.IntArrayList;
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
 * The KV block pool's hot operations. {@code allocateCacheRelease}: pop a block from a full pool's free queue
 * (evicting the cached block there), cache it under a new hash, release it (it re-enters the queue still cached).
 * {@code prefixLookup}: a 64-block prompt whose whole prefix is cached, looked up block by block.
 *
 * {@snippet lang="shell" :
 * bash scripts/bench.sh BlockPoolBenchmark
 * }
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BlockPoolBenchmark {
    @Param({"512", "32768"})
    int blocks;

    BlockPool pool;
    KvCacheManager kv;
    BlockTable table;
    final IntArrayList hits = new IntArrayList();
    final SplittableRandom rng = new SplittableRandom(7);

    /** Fills the pool with cached, free blocks and caches one 64-block prompt. */
    @Setup
    public void setUp() {
        pool = new BlockPool(blocks + 64 + 1);
        kv = new KvCacheManager(pool, 16, true);
        for (int i = 0; i < blocks; i++) {
            int b = pool.allocate();
            pool.cache(b, rng.nextLong());
            pool.release(b);
        }
        int[] tokens = new int[64 * 16 + 1];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = i;
        }
        table = new BlockTable();
        long parent = BlockHasher.ROOT;
        for (int b = 0; b < 64; b++) {
            parent = BlockHasher.hashBlock(parent, tokens, b * 16, 16);
            table.addHash(parent);
        }
        BlockTable holder = new BlockTable();
        for (int b = 0; b < 64; b++) {
            holder.addHash(table.hash(b));
        }
        kv.allocateSlots(holder, 0, new IntArrayList(), tokens.length, tokens.length, 1 << 20); // caches 64 blocks
    }

    /** One allocate (with eviction) + cache + release. */
    @Benchmark
    public int allocateCacheRelease() {
        int b = pool.allocate();
        pool.cache(b, rng.nextLong());
        pool.release(b);
        return b;
    }

    /** Prefix lookup of a fully cached 64-block prompt. */
    @Benchmark
    public int prefixLookup() {
        return kv.findPrefixHit(table, 64 * 16 + 1, hits);
    }
}
