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

    int[] blocks = NO_BLOCKS;
    int numBlocks;
    long[] hashes = NO_HASHES;
    int numHashes;
    int numCachedBlocks;

    /** Number of physical blocks held. */
    public int numBlocks() {
        return numBlocks;
    }

    /** The i-th physical block held. */
    public int block(int i) {
        return blocks[i];
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

    /** Makes room for {@code count} hashes. */
    public void ensureHashCapacity(int count) {
        if (count > hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(count, hashes.length * 2));
        }
    }

    /** Appends the hash of the next full block (the caller computes it from the request's tokens). */
    public void addHash(long blockHash) {
        if (numHashes == hashes.length) {
            hashes = Arrays.copyOf(hashes, Math.max(8, numHashes * 2));
        }
        hashes[numHashes++] = blockHash;
    }

    void addBlock(int block) {
        if (numBlocks == blocks.length) {
            blocks = Arrays.copyOf(blocks, Math.max(8, numBlocks * 2));
        }
        blocks[numBlocks++] = block;
    }

    void ensureBlockCapacity(int count) {
        if (count > blocks.length) {
            blocks = Arrays.copyOf(blocks, Math.max(count, blocks.length * 2));
        }
    }
}
