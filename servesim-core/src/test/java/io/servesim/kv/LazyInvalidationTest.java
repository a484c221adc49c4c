package io.servesim.kv;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Evicted blocks leave stale index entries that lookups ignore and purges remove. */
class LazyInvalidationTest {
    @Test
    void evictedBlock_isNoLongerFound_andItsHashCanBeCachedAgainElsewhere() {
        BlockPool pool = new BlockPool(3); // null block + 2 usable
        int a = pool.allocate();
        pool.cache(a, 11);
        pool.release(a); // free but still cached
        int b = pool.allocate(); // block 2 (never used): a stays cached
        pool.cache(b, 22);
        pool.release(b);
        assertThat(pool.lookup(11)).isEqualTo(a);
        int c = pool.allocate(); // the free queue's head is a: evicts 11
        assertThat(c).isEqualTo(a);
        assertThat(pool.lookup(11)).isEqualTo(-1); // the stale entry is a miss
        pool.cache(c, 33);
        assertThat(pool.lookup(11)).isEqualTo(-1); // still a miss: block a now carries 33
        assertThat(pool.lookup(33)).isEqualTo(c);
        pool.release(c);
        int d = pool.allocate(); // evicts 22 (block b)
        pool.cache(d, 11); // hash 11 again, on another block: takes the stale entry over
        assertThat(pool.lookup(11)).isEqualTo(d);
        assertThat(pool.lookup(22)).isEqualTo(-1);
    }

    @Test
    void staleEntries_arePurged_soTheIndexStaysBounded() {
        BlockPool pool = new BlockPool(9);
        for (long h = 1; h <= 50_000; h++) {
            int blk = pool.allocate(); // evicts the least recent cached block once the pool is full
            pool.cache(blk, h * 7919);
            pool.release(blk);
        }
        assertThat(pool.cachedBlocks()).isEqualTo(8);
        assertThat(pool.indexEntries()).isLessThanOrEqualTo(8 + 4096 + 1);
        assertThat(pool.lookup(50_000L * 7919)).isNotEqualTo(-1);
        assertThat(pool.lookup(1L * 7919)).isEqualTo(-1);
    }
}
