package io.servesim.kv;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;

/**
 * A G2 host-memory block store, LRU, keyed by block hash, like vLLM's offloading {@code LRUOffloadingManager}
 * ({@code vllm/v1/kv_offload/lru_manager.py}): a store first reserves an entry (not ready, not evictable), completes
 * when its copy lands; a lookup counts only ready blocks and touches them (most recent); entries being loaded are
 * pinned; eviction takes the least recent ready, unpinned entry; when none can be evicted the store is skipped.
 *
 * <p>Entries live in primitive slot arrays (hash, pins, ready, LRU links) indexed by a hash → slot map, grown lazily
 * up to the capacity: no object per entry, so thousands of ranks' pools stay compact and cheap for the GC.
 */
public final class HostPool {
    private static final int NONE = -1;

    private final int capacity;
    private final Long2IntOpenHashMap index = new Long2IntOpenHashMap();
    private long[] hashes = new long[0];
    private int[] pins = new int[0];
    private boolean[] ready = new boolean[0];
    private int[] prev = new int[0];
    private int[] next = new int[0];
    private int[] freeSlots = new int[0];
    private int freeCount;
    private int used; // slots ever handed out (the arrays' live length)
    private int head = NONE; // least recent
    private int tail = NONE; // most recent
    private long evictions;
    private long skippedStores;
    private final HostUsage usage;

    /** Creates a pool of {@code capacityBlocks} blocks on its own. */
    public HostPool(int capacityBlocks) {
        this(capacityBlocks, new HostUsage());
    }

    /** Creates a pool of {@code capacityBlocks} blocks whose holdings count in {@code group}. */
    public HostPool(int capacityBlocks, HostUsage group) {
        this.capacity = capacityBlocks;
        this.usage = group;
        group.poolAdded(capacityBlocks);
        index.defaultReturnValue(NONE);
    }

    /** Capacity in blocks. */
    public int capacity() {
        return capacity;
    }

    /** Whether the pool has (or is receiving) {@code hash}. */
    public boolean contains(long hash) {
        return index.containsKey(hash);
    }

    /** Whether {@code hash} is present and its store completed. */
    public boolean isReady(long hash) {
        int s = index.get(hash);
        return s != NONE && ready[s];
    }

    /**
     * Reserves room for a store of {@code hash}, evicting least recent ready unpinned entries as needed.
     *
     * @return false when the pool has it already or no room can be made (the store is skipped)
     */
    public boolean reserve(long hash) {
        if (index.containsKey(hash)) {
            return false;
        }
        while (index.size() >= capacity) {
            if (!evictOne()) {
                skippedStores++;
                return false;
            }
        }
        int s = newSlot();
        hashes[s] = hash;
        pins[s] = 0;
        ready[s] = false;
        index.put(hash, s);
        linkLast(s);
        usage.changed(1);
        return true;
    }

    private boolean evictOne() {
        for (int s = head; s != NONE; s = next[s]) {
            if (ready[s] && pins[s] == 0) {
                remove(s);
                evictions++;
                return true;
            }
        }
        return false;
    }

    /** A reserved store landed: the block becomes visible to lookups. */
    public void completeStore(long hash) {
        int s = index.get(hash);
        if (s != NONE) {
            ready[s] = true;
        }
    }

    /** A reserved store was abandoned (its GPU failed mid-copy): the entry goes away if it never became ready. */
    public void abortStore(long hash) {
        int s = index.get(hash);
        if (s != NONE && !ready[s]) {
            remove(s);
        }
    }

    /** Like {@link #readyRun} but without touching the entries (a query on another rank's behalf). */
    public int peekReadyRun(long[] blockHashes, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            int s = index.get(blockHashes[i]);
            if (s == NONE || !ready[s]) {
                break;
            }
            n++;
        }
        return n;
    }

    /**
     * Counts the consecutive ready blocks {@code hashes[from, to)} (a prefix continuation) and touches them.
     *
     * @return how many leading blocks from {@code from} are ready
     */
    public int readyRun(long[] blockHashes, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            int s = index.get(blockHashes[i]);
            if (s == NONE) {
                break;
            }
            moveToLast(s); // a lookup touches the entry even when it is not ready yet
            if (!ready[s]) {
                break;
            }
            n++;
        }
        return n;
    }

    /**
     * Removes ready, unpinned block {@code hash}: it moved back to a GPU (TensorRT-LLM's onboarding frees its host
     * slot; vLLM's and SGLang's host tiers keep a copy instead).
     */
    public void take(long hash) {
        int s = index.get(hash);
        if (s == NONE || !ready[s] || pins[s] > 0) {
            throw new IllegalStateException("host block " + hash + " is not ready and unpinned");
        }
        remove(s);
    }

    /** Pins a block while it is loaded into a GPU (it cannot be evicted). */
    public void pin(long hash) {
        int s = index.get(hash);
        if (s != NONE) {
            pins[s]++;
        }
    }

    /** Releases a load pin. */
    public void unpin(long hash) {
        int s = index.get(hash);
        if (s != NONE && pins[s] > 0) {
            pins[s]--;
        }
    }

    /** Blocks held (ready or being stored). */
    public int size() {
        return index.size();
    }

    /** Ready blocks evicted so far. */
    public long evictions() {
        return evictions;
    }

    /** Stores skipped because nothing could be evicted. */
    public long skippedStores() {
        return skippedStores;
    }

    private int newSlot() {
        if (freeCount > 0) {
            return freeSlots[--freeCount];
        }
        if (used == hashes.length) {
            int cap = Math.min(Math.max(16, used * 2), Math.max(16, capacity));
            if (cap <= used) {
                cap = used + 16;
            }
            hashes = Arrays.copyOf(hashes, cap);
            pins = Arrays.copyOf(pins, cap);
            ready = Arrays.copyOf(ready, cap);
            prev = Arrays.copyOf(prev, cap);
            next = Arrays.copyOf(next, cap);
        }
        return used++;
    }

    private void remove(int s) {
        index.remove(hashes[s]);
        unlink(s);
        if (freeCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, Math.max(16, freeCount * 2));
        }
        freeSlots[freeCount++] = s;
        usage.changed(-1);
    }

    private void linkLast(int s) {
        prev[s] = tail;
        next[s] = NONE;
        if (tail != NONE) {
            next[tail] = s;
        } else {
            head = s;
        }
        tail = s;
    }

    private void unlink(int s) {
        int p = prev[s];
        int n = next[s];
        if (p != NONE) {
            next[p] = n;
        } else {
            head = n;
        }
        if (n != NONE) {
            prev[n] = p;
        } else {
            tail = p;
        }
    }

    private void moveToLast(int s) {
        if (s != tail) {
            unlink(s);
            linkLast(s);
        }
    }
}
