package io.servesim.router;

import it.unimi.dsi.fastutil.ints.IntIterator;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/**
 * The router's view of which ranks hold which KV blocks: chained block hash → ranks (Dynamo's radix-tree indexer;
 * with chained hashes a hash identifies its whole prefix, so a hash map is the tree). Most hashes live on one rank,
 * so a single holder is stored inline ({@code hash → rank}) and a set is allocated only for shared blocks. Updated
 * by engine events (exact mode) or by the router's own decisions (approximate mode).
 */
final class KvPrefixIndex {
    private final Long2IntOpenHashMap single = new Long2IntOpenHashMap();
    private final Long2ObjectOpenHashMap<IntOpenHashSet> multi = new Long2ObjectOpenHashMap<>();

    KvPrefixIndex() {
        single.defaultReturnValue(-1);
    }

    void add(long hash, int rank) {
        IntOpenHashSet set = multi.get(hash);
        if (set != null) {
            set.add(rank);
            return;
        }
        int s = single.putIfAbsent(hash, rank);
        if (s >= 0 && s != rank) {
            single.remove(hash);
            set = new IntOpenHashSet(4);
            set.add(s);
            set.add(rank);
            multi.put(hash, set);
        }
    }

    void remove(long hash, int rank) {
        if (single.get(hash) == rank) {
            single.remove(hash);
            return;
        }
        IntOpenHashSet set = multi.get(hash);
        if (set != null && set.remove(rank)) {
            if (set.size() == 1) {
                multi.remove(hash);
                single.put(hash, set.iterator().nextInt());
            } else if (set.isEmpty()) {
                multi.remove(hash);
            }
        }
    }

    /** How many ranks hold {@code hash}. */
    int count(long hash) {
        if (single.get(hash) >= 0) {
            return 1;
        }
        IntOpenHashSet set = multi.get(hash);
        return set == null ? 0 : set.size();
    }

    /** The only holder of {@code hash}, or -1 when none or several hold it. */
    int single(long hash) {
        return single.get(hash);
    }

    /** The holders of {@code hash} when several hold it (do not modify), or null. */
    IntIterator several(long hash) {
        IntOpenHashSet set = multi.get(hash);
        return set == null ? null : set.iterator();
    }

    boolean holds(long hash, int rank) {
        int s = single.get(hash);
        if (s >= 0) {
            return s == rank;
        }
        IntOpenHashSet set = multi.get(hash);
        return set != null && set.contains(rank);
    }
}
