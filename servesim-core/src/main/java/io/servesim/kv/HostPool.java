package io.servesim.kv;

import it.unimi.dsi.fastutil.longs.Long2ObjectLinkedOpenHashMap;

/**
 * A G2 host-memory block store, LRU, keyed by block hash, like vLLM's offloading {@code LRUOffloadingManager}
 * ({@code vllm/v1/kv_offload/lru_manager.py}): a store first reserves an entry (not ready, not evictable), completes
 * when its copy lands; a lookup counts only ready blocks and touches them (most recent); entries being loaded are
 * pinned; eviction takes the least recent ready, unpinned entry; when none can be evicted the store is skipped.
 */
public final class HostPool {
    private static final class Entry {
        boolean ready;
        int pins;
    }

    private final int capacity;
    private final Long2ObjectLinkedOpenHashMap<Entry> entries = new Long2ObjectLinkedOpenHashMap<>();
    private long evictions;
    private long[] usage = new long[1]; // blocks held, possibly shared by several pools' owner for cluster totals
    private long skippedStores;

    /** Creates a pool of {@code capacityBlocks} blocks. */
    public HostPool(int capacityBlocks) {
        this.capacity = capacityBlocks;
    }

    /** Whether the pool has (or is receiving) {@code hash}. */
    public boolean contains(long hash) {
        return entries.containsKey(hash);
    }

    /** Whether {@code hash} is present and its store completed. */
    public boolean isReady(long hash) {
        Entry e = entries.get(hash);
        return e != null && e.ready;
    }

    /**
     * Reserves room for a store of {@code hash}, evicting least recent ready unpinned entries as needed.
     *
     * @return false when the pool has it already or no room can be made (the store is skipped)
     */
    public boolean reserve(long hash) {
        if (entries.containsKey(hash)) {
            return false;
        }
        while (entries.size() >= capacity) {
            if (!evictOne()) {
                skippedStores++;
                return false;
            }
        }
        entries.putAndMoveToLast(hash, new Entry());
        usage[0]++;
        return true;
    }

    private boolean evictOne() {
        for (var it = entries.long2ObjectEntrySet().fastIterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getValue().ready && e.getValue().pins == 0) {
                it.remove();
                usage[0]--;
                evictions++;
                return true;
            }
        }
        return false;
    }

    /** A reserved store landed: the block becomes visible to lookups. */
    public void completeStore(long hash) {
        Entry e = entries.get(hash);
        if (e != null) {
            e.ready = true;
        }
    }

    /**
     * Counts the consecutive ready blocks {@code hashes[from, to)} (a prefix continuation) and touches them.
     *
     * @return how many leading blocks from {@code from} are ready
     */
    public int readyRun(long[] hashes, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            Entry e = entries.getAndMoveToLast(hashes[i]);
            if (e == null || !e.ready) {
                break;
            }
            n++;
        }
        return n;
    }

    /** A reserved store was abandoned (its GPU failed mid-copy): the entry goes away if it never became ready. */
    public void abortStore(long hash) {
        Entry e = entries.get(hash);
        if (e != null && !e.ready) {
            entries.remove(hash);
            usage[0]--;
        }
    }

    /** Like {@link #readyRun} but without touching the entries (a query on another rank's behalf). */
    public int peekReadyRun(long[] hashes, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            Entry e = entries.get(hashes[i]);
            if (e == null || !e.ready) {
                break;
            }
            n++;
        }
        return n;
    }

    /** Pins a block while it is loaded into a GPU (it cannot be evicted). */
    public void pin(long hash) {
        Entry e = entries.get(hash);
        if (e != null) {
            e.pins++;
        }
    }

    /** Releases a load pin. */
    public void unpin(long hash) {
        Entry e = entries.get(hash);
        if (e != null && e.pins > 0) {
            e.pins--;
        }
    }

    /**
     * Shares a counter of blocks held with other pools (time-series totals without scanning every pool): the cell
     * is incremented and decremented as this pool fills and empties. Call before the first store.
     */
    public void usageCell(long[] cell) {
        this.usage = cell;
    }

    /** Capacity in blocks. */
    public int capacity() {
        return capacity;
    }

    /** Blocks held (ready or being stored). */
    public int size() {
        return entries.size();
    }

    /** Ready blocks evicted so far. */
    public long evictions() {
        return evictions;
    }

    /** Stores skipped because nothing could be evicted. */
    public long skippedStores() {
        return skippedStores;
    }
}
