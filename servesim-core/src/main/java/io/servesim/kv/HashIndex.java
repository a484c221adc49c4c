package io.servesim.kv;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * A rank's prefix-cache index, block hash → block ({@link BlockPool}): fastutil's open-addressing map plus a purge of
 * stale entries that sweeps the table's own arrays instead of removing through an iterator.
 */
final class HashIndex extends Long2IntOpenHashMap {
    private static final long serialVersionUID = 1L;

    HashIndex(int missing) {
        super(16, 0.5f);
        defaultReturnValue(missing);
    }

    /**
     * Removes every entry whose block no longer carries its hash ({@code blockHash[block] != hash}), in one forward
     * pass over the table that re-checks a slot after each removal. fastutil's backward shift ({@code shiftKeys})
     * fills the freed slot from later slots of the same run, in cyclic order: a key not checked yet (after the
     * sweep) can only move into the freed slot or another slot after it, and keys that come from the table's start
     * (a run wrapping around the end) were checked already. So every key is checked where it ends up, and the entries
     * left are those removing the stale ones one by one leaves. (fastutil's iterator walks backwards, where shifts move
     * keys into the part already walked, which is why its removal has to remember wrapped keys.)
     *
     * @return how many entries were removed
     */
    int purgeStale(long[] blockHash) {
        int removed = 0;
        if (containsNullKey && blockHash[value[n]] != 0L) {
            containsNullKey = false; // key 0 (never a block hash; kept general)
            size--;
            removed++;
        }
        final long[] keys = key;
        for (int pos = 0; pos < n; pos++) {
            while (keys[pos] != 0L && blockHash[value[pos]] != keys[pos]) {
                size--;
                removed++;
                shiftKeys(pos);
            }
        }
        return removed;
    }
}
