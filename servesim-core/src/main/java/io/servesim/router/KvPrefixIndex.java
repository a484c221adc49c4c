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
    /** {@link #single}'s value for a hash that several ranks hold (its holders are in {@link #multi}). */
    private static final int SEVERAL = -2;

    /**
     * Every indexed hash: its only holder, or {@link #SEVERAL}; one probe per update in the common case. At load factor
     * 0.5, as the pools' own index ({@code kv.HashIndex}): every evicted block removes its hash here, and a removal
     * shifts back the probe run behind it, shorter in a sparser table (Mooncake with {@code kv_aware}: about 4 % less
     * replay time warm, the same digest).
     */
    private final Long2IntOpenHashMap single = new Long2IntOpenHashMap(16, 0.5f);

    private final Long2ObjectOpenHashMap<IntOpenHashSet> multi = new Long2ObjectOpenHashMap<>();

    KvPrefixIndex() {
        single.defaultReturnValue(-1);
    }

    void add(long hash, int rank) {
        int s = single.putIfAbsent(hash, rank);
        if ((s < 0 && s != SEVERAL) || s == rank) {
            return; // new (now held by rank alone) or already held by it alone
        }
        if (s == SEVERAL) {
            multi.get(hash).add(rank);
            return;
        }
        single.put(hash, SEVERAL);
        IntOpenHashSet set = new IntOpenHashSet(4);
        set.add(s);
        set.add(rank);
        multi.put(hash, set);
    }

    void remove(long hash, int rank) {
        if (single.remove(hash, rank)) {
            return; // its only holder
        }
        if (single.get(hash) != SEVERAL) {
            return;
        }
        IntOpenHashSet set = multi.get(hash);
        if (set.remove(rank)) {
            if (set.size() == 1) {
                multi.remove(hash);
                single.put(hash, set.iterator().nextInt());
            } else if (set.isEmpty()) {
                multi.remove(hash);
                single.remove(hash);
            }
        }
    }

    /** How many ranks hold {@code hash}. */
    int count(long hash) {
        int s = single.get(hash);
        if (s >= 0) {
            return 1;
        }
        return s == SEVERAL ? multi.get(hash).size() : 0;
    }

    /** The only holder of {@code hash}, or -1 when none or several hold it. */
    int single(long hash) {
        int s = single.get(hash);
        return s >= 0 ? s : -1;
    }

    /** The holders of {@code hash} when several hold it (do not modify), or null. */
    IntIterator several(long hash) {
        if (single.get(hash) != SEVERAL) {
            return null;
        }
        return multi.get(hash).iterator();
    }

    boolean holds(long hash, int rank) {
        int s = single.get(hash);
        if (s >= 0) {
            return s == rank;
        }
        return s == SEVERAL && multi.get(hash).contains(rank);
    }
}
