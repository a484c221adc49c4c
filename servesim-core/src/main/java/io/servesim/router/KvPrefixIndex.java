package io.servesim.router;

import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/**
 * The router's view of which ranks hold which KV blocks: chained block hash → set of global rank indices (Dynamo's
 * radix-tree indexer; with chained hashes a hash identifies its whole prefix, so a hash map is the tree). Updated
 * by engine events (exact mode) or by the router's own decisions (approximate mode).
 */
final class KvPrefixIndex {
    private final Long2ObjectOpenHashMap<IntOpenHashSet> holders = new Long2ObjectOpenHashMap<>();

    void add(long hash, int rank) {
        IntOpenHashSet set = holders.get(hash);
        if (set == null) {
            set = new IntOpenHashSet(2);
            holders.put(hash, set);
        }
        set.add(rank);
    }

    void remove(long hash, int rank) {
        IntOpenHashSet set = holders.get(hash);
        if (set != null && set.remove(rank) && set.isEmpty()) {
            holders.remove(hash);
        }
    }

    /** Ranks holding {@code hash}, or null when none does (do not modify). */
    IntOpenHashSet holders(long hash) {
        return holders.get(hash);
    }

    boolean holds(long hash, int rank) {
        IntOpenHashSet set = holders.get(hash);
        return set != null && set.contains(rank);
    }

    /** Distinct hashes held by any rank. */
    int size() {
        return holders.size();
    }
}
