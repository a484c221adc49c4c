package io.servesim.kv;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * vLLM's hybrid KV cache for a model with full-attention and sliding-window layers (gpt-oss), as its {@code
 * HybridKVCacheCoordinator} and {@code SlidingWindowManager} run it at 9aaf83ef: two block groups share one pool, the
 * sliding-window group (vLLM's group 0 for gpt-oss) first. Every case uses 4-token blocks, a 5-token window and a pool
 * of 19 usable blocks (ids 1–19, free queue in id order).
 */
class HybridKvCacheTest {
    private static final int BLOCK = 4;
    private static final int WINDOW = 5;

    private final BlockPool pool = new BlockPool(20);
    private final KvCacheManager kv = hybrid(pool);

    private static KvCacheManager hybrid(BlockPool pool) {
        KvCacheManager kv = new KvCacheManager(pool, BLOCK, true);
        kv.slidingWindowGroup(WINDOW, true, 100, 1000);
        return kv;
    }

    private static BlockTable table(long... hashes) {
        BlockTable t = new BlockTable();
        for (long h : hashes) {
            t.addHash(h);
        }
        return t;
    }

    /** A: 8 tokens, then 4 more (12 computed), then freed. */
    private BlockTable runA() {
        BlockTable a = table(11, 12, 13, 14);
        // 8 tokens: each group takes 2 blocks, the window group first (1, 2), then full attention (3, 4)
        assertThat(kv.allocateSlots(a, 0, 8, 8, 1000)).isTrue();
        assertThat(a.window().blocksView()).startsWith(1, 2);
        assertThat(a.blocksView()).startsWith(3, 4);
        // 4 more at 8 computed: the next token's window (5 tokens) starts at token 4, so block 0 (tokens 0-3) left
        // it and returns to the pool before the new blocks are taken (5 for the window group, 6 for full attention)
        assertThat(kv.allocateSlots(a, 8, 4, 12, 1000)).isTrue();
        assertThat(a.window().numBlocks()).isEqualTo(3);
        assertThat(a.window().block(0)).isEqualTo(BlockPool.NULL_BLOCK);
        assertThat(a.window().block(2)).isEqualTo(5);
        assertThat(a.block(2)).isEqualTo(6);
        assertThat(pool.refCount(1)).isZero();
        assertThat(pool.freeBlocks()).isEqualTo(19 - 5);
        assertThat(pool.blockHash(1)).as("a dropped block stays cached").isEqualTo(KvCacheManager.windowHash(11));
        return a;
    }

    @Test
    void slidingWindowGroup_dropsBlocksThatLeftTheWindow_andFreesGroupByGroupLastBlockFirst() {
        BlockTable a = runA();
        kv.free(a);
        // the dropped block went back first; then the window group's blocks last first (5, 2; the null block is
        // skipped), then full attention's (6, 4, 3)
        int[] fresh = IntStream.rangeClosed(7, 19).toArray();
        assertThat(pool.freeQueueSnapshot()).startsWith(fresh).endsWith(1, 5, 2, 6, 4, 3);
        assertThat(pool.freeBlocks()).isEqualTo(19);
    }

    @Test
    void hybridPrefixHit_takesTheWholeFullAttentionPrefix_andOnlyTheWindowsLastBlocks() {
        kv.free(runA());
        BlockTable b = table(11, 12, 13, 99);
        IntArrayList hits = new IntArrayList();
        // 13 tokens: at most 3 blocks can hit; full attention hits 3, 4, 6; the window of token 12 needs only
        // ceil((5 - 1) / 4) = 1 cached block before it: block 2 (5); blocks 0 and 1 are null blocks
        assertThat(kv.findPrefixHit(b, 13, hits)).isEqualTo(3);
        assertThat(hits.toIntArray()).containsExactly(3, 4, 6);
        // 1 new token: 4 blocks per group; full attention takes its 3 hits and 1 new block, the window group 2 null
        // blocks, hit 5 and 1 new block: 3 + 1 + 1 + 1 blocks leave the free queue
        assertThat(kv.allocateSlots(b, 0, hits, 1, 13, 1000)).isTrue();
        assertThat(b.blocksView()).startsWith(3, 4, 6);
        assertThat(b.window().blocksView()).startsWith(BlockPool.NULL_BLOCK, BlockPool.NULL_BLOCK, 5);
        assertThat(pool.freeBlocks()).isEqualTo(19 - 6);
        assertThat(pool.refCount(1)).as("the window's early blocks stay free").isZero();
        assertThat(pool.refCount(2)).isZero();
    }

    @Test
    void hybridPrefixHit_isCutWhereTheWindowGroupStillHoldsItsLastBlocks() {
        kv.free(runA());
        // take the 13 never-used blocks and then 1 and 5 (the window group's blocks of tokens 0-3 and 8-11):
        // allocation evicts them from the prefix cache
        for (int i = 0; i < 15; i++) {
            pool.allocate();
        }
        BlockTable b = table(11, 12, 13, 99);
        IntArrayList hits = new IntArrayList();
        // full attention still hits 3 blocks, but the window group's block 2 misses: the hit ends after block 1,
        // whose window group block (2) is cached, so both groups hit 2 blocks (8 tokens)
        assertThat(kv.findPrefixHit(b, 13, hits)).isEqualTo(2);
        assertThat(hits.toIntArray()).containsExactly(3, 4);
        // taking them would need 2 new and 2 reactivated full-attention blocks, and 2 new window blocks (its first
        // block is skipped) plus its hit 2: 7 blocks, and 4 are free
        assertThat(kv.allocateSlots(b, 0, hits, 5, 13, 1000)).isFalse();
        assertThat(pool.freeBlocks()).isEqualTo(4);
    }

    @Test
    void fullSequenceGate_capsTheWindowGroupAtItsAdmissionBound() {
        // max_admission_blocks_per_request: ceil(min(window - 1 + budget, max_model_len) / block) + 1; a budget of 4
        // gives ceil(8 / 4) + 1 = 3 window blocks at most, whatever the prompt
        KvCacheManager small = new KvCacheManager(new BlockPool(20), BLOCK, true);
        small.slidingWindowGroup(WINDOW, true, 4, 1000);
        BlockTable longPrompt = table(1, 2, 3, 4, 5, 6, 7, 8);
        IntArrayList none = new IntArrayList();
        // 32 tokens: 8 full-attention blocks + 3 window blocks = 11 <= 19
        assertThat(small.wholeSequenceFits(longPrompt, none, 32)).isTrue();
        BlockTable longer = table();
        // 68 tokens: 17 + 3 = 20 > 19
        assertThat(small.wholeSequenceFits(longer, none, 68)).isFalse();
        assertThat(small.wholeSequenceFits(longer, none, 64)).isTrue(); // 16 + 3
    }
}
