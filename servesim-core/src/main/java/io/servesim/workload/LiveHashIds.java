package io.servesim.workload;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * How many requests that may still look a hash id up carry it: every row of a hash-id trace, counted before the
 * replay, less the requests that have ended.
 *
 * <p>A KV block's hash chains over every hash id up to its own, so a request that carries id x at position i is the
 * only one that could ever look up its blocks from i on once no other unfinished or future request carries x: a
 * waiting, running or preempted request counts, a future row counts, and an ended request never looks anything up
 * again. Counts only fall, so a block found private stays private. (An implementation shortcut, not an engine rule:
 * the engines then cache those blocks without indexing them, which changes no result; {@code BlockTable.markPrivate}.)
 */
public final class LiveHashIds {
    private final Long2IntOpenHashMap carriers;

    /**
     * Takes over {@code rowsPerId}: for each hash id, in how many rows of the trace it appears (an id twice in one row
     * counted twice).
     */
    public LiveHashIds(Long2IntOpenHashMap rowsPerId) {
        this.carriers = rowsPerId;
        carriers.defaultReturnValue(0);
    }

    /**
     * The first of {@code ids[0, covering)} that only the asking request still carries, or -1 (an id the count never
     * saw is treated as shared).
     */
    public int firstSole(long[] ids, int covering) {
        for (int i = 0; i < covering; i++) {
            if (carriers.get(ids[i]) == 1) {
                return i;
            }
        }
        return -1;
    }

    /** A request carrying {@code ids} (every id of its row) ended: it will look none of them up again. */
    public void ended(long[] ids) {
        for (long id : ids) {
            if (carriers.addTo(id, -1) <= 1) {
                carriers.remove(id); // no carrier left (never negative: an id the count never saw stays absent)
            }
        }
    }

    /** Requests that may still look {@code id} up (for tests). */
    public int carriers(long id) {
        return carriers.get(id);
    }
}
