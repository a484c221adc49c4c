package io.servesim.kv;

/**
 * Blocks held and capacity over a group of G2 pools (the cluster's, for the time series), kept up to date by the
 * pools as they fill and empty, so totals never need a scan of every pool.
 */
public final class HostUsage {
    private long usedBlocks;
    private long capacityBlocks;

    /** A pool joined the group. */
    void poolAdded(int capacity) {
        capacityBlocks += capacity;
    }

    /** A pool's held blocks changed by {@code delta}. */
    void changed(int delta) {
        usedBlocks += delta;
    }

    /** Blocks held over the group. */
    public long usedBlocks() {
        return usedBlocks;
    }

    /** Capacity over the group, in blocks. */
    public long capacityBlocks() {
        return capacityBlocks;
    }
}
