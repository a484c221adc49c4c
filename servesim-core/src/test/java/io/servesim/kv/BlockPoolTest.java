package io.servesim.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** vLLM block pool semantics ({@code vllm/v1/core/block_pool.py}): null block, LRU free queue, cache map. */
class BlockPoolTest {

    @Test
    void blockZero_isTheNullBlock_andNeverUsable() {
        BlockPool pool = new BlockPool(5);
        assertThat(pool.usableBlocks()).isEqualTo(4);
        assertThat(pool.freeBlocks()).isEqualTo(4);
        assertThat(pool.freeQueueSnapshot()).containsExactly(1, 2, 3, 4);
    }

    @Test
    void allocation_popsTheHead_andReleaseAppendsToTheTail() {
        BlockPool pool = new BlockPool(5);
        int a = pool.allocate();
        int b = pool.allocate();
        assertThat(a).isEqualTo(1);
        assertThat(b).isEqualTo(2);
        pool.release(a);
        assertThat(pool.freeQueueSnapshot()).containsExactly(3, 4, 1);
        assertThat(pool.refCount(b)).isEqualTo(1);
    }

    @Test
    void touchingAFreeCachedBlock_unlinksItFromTheMiddleOfTheFreeQueue() {
        BlockPool pool = new BlockPool(5);
        int a = pool.allocate();
        pool.cache(a, 77L);
        pool.release(a); // queue: 2,3,4,1
        int b = pool.allocate(); // 2
        pool.cache(b, 88L);
        pool.release(b); // queue: 3,4,1,2
        pool.touch(pool.lookup(77L));
        assertThat(pool.freeQueueSnapshot()).containsExactly(3, 4, 2);
        assertThat(pool.refCount(a)).isEqualTo(1);
    }

    @Test
    void reallocatingACachedBlock_evictsItsHash() {
        BlockPool pool = new BlockPool(2); // one usable block
        int a = pool.allocate();
        pool.cache(a, 5L);
        pool.release(a);
        assertThat(pool.lookup(5L)).isEqualTo(a);
        int again = pool.allocate();
        assertThat(again).isEqualTo(a);
        assertThat(pool.lookup(5L)).isEqualTo(-1);
        assertThat(pool.evictions()).isEqualTo(1);
    }

    @Test
    void duplicateHashes_areNotDeduplicated_evictingOneLeavesTheOtherFindable() {
        BlockPool pool = new BlockPool(4);
        int a = pool.allocate();
        int b = pool.allocate();
        pool.cache(a, 9L);
        pool.cache(b, 9L);
        assertThat(pool.cachedBlocks()).isEqualTo(2);
        assertThat(pool.lookup(9L)).isEqualTo(a); // the first inserted, as vLLM's get_one_block
        pool.release(b);
        pool.release(a); // queue: 3, b, a
        pool.allocate(); // 3
        pool.allocate(); // b: evicted
        assertThat(pool.lookup(9L)).isEqualTo(a);
        assertThat(pool.cachedBlocks()).isEqualTo(1);
    }

    @Test
    void chainedHashes_areEqualForEqualPrefixes_andDifferAfterAnyEarlierDifference() {
        int[] x = {1, 2, 3, 4, 5, 6, 7, 8};
        int[] y = {1, 2, 3, 4, 5, 6, 7, 8};
        int[] z = {1, 2, 3, 9, 5, 6, 7, 8};
        long x0 = BlockHasher.hashBlock(BlockHasher.ROOT, x, 0, 4);
        long x1 = BlockHasher.hashBlock(x0, x, 4, 4);
        long y1 = BlockHasher.hashBlock(BlockHasher.hashBlock(BlockHasher.ROOT, y, 0, 4), y, 4, 4);
        long z0 = BlockHasher.hashBlock(BlockHasher.ROOT, z, 0, 4);
        long z1 = BlockHasher.hashBlock(z0, z, 4, 4);
        assertThat(x1).isEqualTo(y1);
        assertThat(z0).isNotEqualTo(x0);
        // block 1 has identical tokens in x and z, but its parent differs, so its hash differs
        assertThat(z1).isNotEqualTo(x1);
        assertThat(x1).isNotEqualTo(BlockHasher.NO_HASH);
    }

    @Test
    void evictingTheFirstInsertedDuplicate_makesTheNextOneTheLookupResult() {
        BlockPool pool = new BlockPool(4);
        int a = pool.allocate();
        int b = pool.allocate();
        int c = pool.allocate();
        pool.cache(a, 9L);
        pool.cache(b, 9L);
        pool.cache(c, 9L);
        pool.release(a); // queue: a
        pool.allocate(); // a evicted
        assertThat(pool.lookup(9L)).isEqualTo(b);
        pool.release(b);
        pool.allocate(); // b evicted
        assertThat(pool.lookup(9L)).isEqualTo(c);
    }

    @Test
    void untouchedBlocks_costNoMemory_yetAreHandedOutInIdOrderBeforeFreedOnes() {
        // 500 M blocks would need ~14 GB if materialised; the test JVM has 2 GB
        BlockPool pool = new BlockPool(500_000_000);
        int a = pool.allocate();
        int b = pool.allocate();
        pool.release(a);
        assertThat(b).isEqualTo(2);
        assertThat(pool.allocate()).isEqualTo(3); // fresh blocks precede the freed block 1 in the queue
        assertThat(pool.freeBlocks()).isEqualTo(500_000_000 - 1 - 2);
        assertThat(pool.refCount(a)).isZero();
        assertThat(pool.refCount(400_000_000)).isZero();
    }

    @Test
    void aPrivatelyCachedBlock_countsAsCachedAndEvicted_butIsIndexedOnlyOncePublished() {
        BlockPool pool = new BlockPool(3); // usable blocks 1 and 2
        int a = pool.allocate();
        pool.cachePrivate(a, 77L);
        assertThat(pool.cachedBlocks()).isEqualTo(1);
        assertThat(pool.blockHash(a)).isEqualTo(77L);
        assertThat(pool.lookup(77L)).isEqualTo(-1); // not indexed: only its own request could ask
        assertThat(pool.indexEntries()).isZero();
        pool.publish(a); // its request was preempted: now it can find the block again
        assertThat(pool.lookup(77L)).isEqualTo(a);
        assertThat(pool.indexEntries()).isEqualTo(1);

        int b = pool.allocate();
        pool.cachePrivate(b, 88L);
        pool.release(b);
        pool.release(a); // free queue: b, a
        int c = pool.allocate(); // pops b and evicts its hash: no index entry to invalidate
        assertThat(c).isEqualTo(b);
        assertThat(pool.evictions()).isEqualTo(1);
        assertThat(pool.blockHash(b)).isEqualTo(BlockHasher.NO_HASH);
        assertThat(pool.cachedBlocks()).isEqualTo(1);
        assertThat(pool.indexEntries()).isEqualTo(1);
    }

    @Test
    void detachingAFreeCachedBlock_dropsItsHashWithoutAnEviction_andLeavesItFree() {
        // TensorRT-LLM's in-place partial reuse takes an unreferenced leaf out of the reuse tree before claiming it
        BlockPool pool = new BlockPool(5);
        int a = pool.allocate();
        pool.cache(a, 42L);
        pool.release(a);
        long[] evicted = new long[1];
        pool.onEviction(h -> evicted[0] = h);
        pool.detach(a);
        assertThat(pool.lookup(42L)).isEqualTo(-1);
        assertThat(pool.blockHash(a)).isEqualTo(BlockHasher.NO_HASH);
        assertThat(pool.evictions()).isZero();
        assertThat(evicted[0]).as("no eviction is heard (no host offload)").isZero();
        assertThat(pool.freeBlocks()).isEqualTo(4);
        pool.touch(a);
        assertThat(pool.refCount(a)).isEqualTo(1);
        assertThatThrownBy(() -> pool.detach(a)).isInstanceOf(IllegalStateException.class);
    }
}
