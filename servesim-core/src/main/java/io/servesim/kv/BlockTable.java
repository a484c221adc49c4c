package io.servesim.kv;

import java.util.Arrays;

/**
 * One request's KV state on a rank: the physical blocks it holds and the chained hashes of its full blocks. Raw
 * arrays with counts (no list wrappers), because the engine reads these counts for every running request every
 * step and each extra object hop is a cache miss at thousands of ranks.
 */
public final class BlockTable {
    private static final int[] NO_BLOCKS = new int[0];
    private static final long[] NO_HASHES = new long[0];

    private int[] blocks = NO_BLOCKS;
    private int numBlocks;
    private long[] hashes = NO_HASHES;
    private int numHashes;
    private int numCachedBlocks;
    /** Blocks from this index on are cached unindexed ({@link #markPrivateFrom}); {@link #NONE_PRIVATE}: none. */
    private int privateFrom = NONE_PRIVATE;
    /** {@link #markPrivate}: no block anywhere can carry its hashes, so its prefix lookups are skipped. */
    private boolean unique;
    /** Tokens the request will hold at most ({@link #expectTokens}), or 0: its arrays' first growth sizes for them. */
    private int expectedTokens;

    private BlockTable window;
    private int leadingNulls;

    /** {@link #privateFrom()} of a table whose blocks are all indexed. */
    public static final int NONE_PRIVATE = Integer.MAX_VALUE;

    /** Number of physical blocks held. */
    public int numBlocks() {
        return numBlocks;
    }

    /** The i-th physical block held. */
    public int block(int i) {
        return blocks[i];
    }

    /** The block array itself (valid up to {@link #numBlocks()}); read-only by contract. */
    int[] blocksView() {
        return blocks;
    }

    /** Number of full-block hashes computed so far (they depend only on tokens, so they survive preemption). */
    public int numHashes() {
        return numHashes;
    }

    /** The chained hash of full block i. */
    public long hash(int i) {
        return hashes[i];
    }

    /** The hash array itself (valid up to {@link #numHashes()}); read-only by contract. */
    public long[] hashesView() {
        return hashes;
    }

    /**
     * The request will hold at most {@code tokens} tokens (prompt plus output, within {@code max_model_len}): when
     * an array must grow, it grows to that size at once, so a request's arrays are allocated once instead of doubling
     * through its decode (a capacity only: nothing observable depends on it).
     */
    public void expectTokens(int tokens) {
        expectedTokens = Math.max(0, tokens);
    }

    /** Tokens the request will hold at most, as given to {@link #expectTokens} (0 if not given). */
    public int expectedTokens() {
        return expectedTokens;
    }

    /** Makes room for {@code count} hashes of {@code blockSize}-token blocks. */
    public void ensureHashCapacity(int count, int blockSize) {
        if (count > hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(count, Math.max(hashes.length * 2, expectedTokens / blockSize)));
        }
    }

    /**
     * Starts an empty table's hashes with the first {@code count} of {@code blockHashes}, room for {@code capacity}
     * (at least {@code count}): one copy into a new array, which the JVM need not clear first.
     */
    public void initHashes(long[] blockHashes, int count, int capacity) {
        if (numHashes != 0) {
            throw new IllegalStateException("hashes already set: " + numHashes);
        }
        hashes = Arrays.copyOf(blockHashes, Math.max(capacity, count));
        numHashes = count;
    }

    /**
     * Starts an empty table's hashes with {@code count} the caller writes into the returned array's first entries
     * before anything reads the table, room for {@code capacity} (at least {@code count}).
     */
    public long[] startHashes(int count, int capacity) {
        if (numHashes != 0) {
            throw new IllegalStateException("hashes already set: " + numHashes);
        }
        hashes = new long[Math.max(capacity, count)];
        numHashes = count;
        return hashes;
    }

    /** Appends the first {@code count} hashes of {@code blockHashes} (the caller computed them). */
    public void addHashes(long[] blockHashes, int count) {
        if (numHashes + count > hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(numHashes + count, hashes.length * 2));
        }
        System.arraycopy(blockHashes, 0, hashes, numHashes, count);
        numHashes += count;
    }

    /** Appends the hash of the next full block (the caller computes it from the request's tokens). */
    public void addHash(long blockHash) {
        if (numHashes == hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(8, numHashes * 2));
        }
        hashes[numHashes++] = blockHash;
    }

    /**
     * The request's blocks in the sliding-window group of a hybrid KV cache ({@link KvCacheManager#slidingWindowGroup}),
     * created on first use; its leading blocks are {@link BlockPool#NULL_BLOCK} once out of the window.
     */
    BlockTable window() {
        if (window == null) {
            window = new BlockTable();
        }
        return window;
    }

    /**
     * Pool blocks this table references: its own, plus its sliding-window group's that are still in the window (a
     * hybrid KV cache; null blocks reference nothing).
     */
    public int blocksHeld() {
        return window == null ? numBlocks : numBlocks + window.numBlocks - window.leadingNulls;
    }

    /** Leading blocks replaced by the null block (out of the window; a sliding-window group's table only). */
    int leadingNulls() {
        return leadingNulls;
    }

    /** Block {@code i} left the window: it becomes the null block (and so does every block before it). */
    void nullUpTo(int count) {
        for (int i = leadingNulls; i < count; i++) {
            blocks[i] = BlockPool.NULL_BLOCK;
        }
        leadingNulls = Math.max(leadingNulls, count);
    }

    void addBlock(int block) {
        if (numBlocks == blocks.length) {
            blocks = Arrays.copyOf(blocks, Math.max(8, numBlocks * 2));
        }
        blocks[numBlocks++] = block;
    }

    void ensureBlockCapacity(int count, int blockSize) {
        if (count > blocks.length) {
            int expected = (expectedTokens + blockSize - 1) / blockSize;
            blocks = Arrays.copyOf(blocks, Math.max(count, Math.max(blocks.length * 2, expected)));
        }
    }

    /** Leading blocks whose hashes are registered in the pool's cache (the KV manager caches them in order). */
    int numCachedBlocks() {
        return numCachedBlocks;
    }

    /** The first {@code count} blocks are cached (never lowers the count). */
    void cachedUpTo(int count) {
        numCachedBlocks = Math.max(numCachedBlocks, count);
    }

    /** The first {@code count} blocks are cached, exactly (a fresh allocation over {@code count} hits). */
    void setCached(int count) {
        numCachedBlocks = count;
    }

    /**
     * Its hashes are the request's alone ({@link io.servesim.workload.Request#blocksUnique}): the pool caches its
     * blocks without indexing them, and its prefix lookups are skipped (nothing else can hold its hashes).
     */
    public void markPrivate() {
        privateFrom = 0;
        unique = true;
    }

    /**
     * Its blocks from {@code block} on carry hashes no other unfinished or future request can carry (they chain from
     * a trace block only this request still has: {@link io.servesim.workload.Request#privateFromBlock}); the blocks
     * before it are shared and indexed as usual. The pool caches the later ones without indexing them. Its prefix
     * lookups still walk past {@code block}: a request that ended may have left blocks with those hashes.
     */
    public void markPrivateFrom(int block) {
        privateFrom = Math.max(0, block);
    }

    /** The first block cached unindexed ({@link #markPrivateFrom}), or {@link #NONE_PRIVATE}. */
    public int privateFrom() {
        return privateFrom;
    }

    /** Whether its hashes are its alone: its blocks are cached unindexed and never looked up ({@link #markPrivate}). */
    public boolean isPrivate() {
        return unique;
    }

    void published() {
        privateFrom = NONE_PRIVATE;
        unique = false;
    }

    /** Forgets every block (they were released). */
    void clearBlocks() {
        numBlocks = 0;
        numCachedBlocks = 0;
        leadingNulls = 0;
    }

    /** Keeps only the first {@code keep} blocks (the rest were released). */
    void truncate(int keep) {
        numBlocks = Math.min(numBlocks, keep);
        leadingNulls = Math.min(leadingNulls, numBlocks);
        numCachedBlocks = Math.min(numCachedBlocks, numBlocks);
    }
}
