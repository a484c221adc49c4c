package io.servesim.kv;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;

/** One request's KV state on a rank: the physical blocks it holds and the chained hashes of its full blocks. */
public final class BlockTable {
    final IntArrayList blocks = new IntArrayList();
    final LongArrayList hashes = new LongArrayList();
    int numCachedBlocks;

    /** Number of physical blocks held. */
    public int numBlocks() {
        return blocks.size();
    }

    /** The i-th physical block held. */
    public int block(int i) {
        return blocks.getInt(i);
    }

    /** Number of full-block hashes computed so far (they depend only on tokens, so they survive preemption). */
    public int numHashes() {
        return hashes.size();
    }

    /** The chained hash of full block i. */
    public long hash(int i) {
        return hashes.getLong(i);
    }

    /** Appends the hash of the next full block (the caller computes it from the request's tokens). */
    public void addHash(long blockHash) {
        hashes.add(blockHash);
    }
}
