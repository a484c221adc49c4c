package io.servesim.kv;

import java.util.Arrays;

/**
 * A rank's pool of GPU KV blocks with reference counts, a prefix-cache map and an LRU free queue.
 *
 * <p>Follows vLLM v1 {@code vllm/v1/core/block_pool.py} and {@code docs/design/prefix_caching.md}:
 *
 * <ul>
 *   <li>Block 0 is the <em>null block</em>, taken at start and never freed, so {@code num_gpu_blocks - 1} blocks are
 *       usable (vLLM's usage = 1 - free / (num_blocks - 1)).
 *   <li>The free queue is a doubly linked list, initially in block-id order. Allocation pops the head; a popped
 *       block that still carries a hash is evicted (its hash leaves the cache map). Freed blocks are appended to the
 *       tail, so the head is the least recently freed block.
 *   <li>A prefix hit on a block with ref count 0 unlinks it from the middle of the free queue ("touch"), which is
 *       why reusing an inactive cached block still costs free capacity.
 *   <li>The cache map is keyed by block hash and is not deduplicated: two physical blocks may hold the same hash (a
 *       per-hash doubly linked chain here, in insertion order); a lookup returns the first inserted, and evicting
 *       one leaves the others findable.
 * </ul>
 *
 * <p>Blocks never allocated yet are not materialised: they form an implicit id-ordered run [{@code nextFresh},
 * {@code numBlocks}) at the head of the free queue, which is exactly vLLM's initial order (freed blocks always go to
 * the tail, behind them). Per-block arrays grow with the highest block id used, so an idle rank costs almost nothing
 * however large its pool.
 */
public final class BlockPool {
    /** The id of the reserved null block. */
    public static final int NULL_BLOCK = 0;

    private static final int NIL = -1;
    /** {@link #dupPrev} of a block cached unindexed ({@link #cachePrivate}). */
    private static final int PRIVATE = -2;

    private final int numBlocks;
    private int[] refCount;
    private long[] hash;
    private int[] freePrev;
    private int[] freeNext;
    private int[] dupPrev;
    private int[] dupNext;
    private final HashIndex cacheHeads;
    /** Blocks [nextFresh, numBlocks) were never allocated: the implicit head of the free queue, in id order. */
    private int nextFresh = 1;

    private int freeHead = NIL;
    private int freeTail = NIL;
    /** Blocks in the explicit part of the free queue (freed at least once). */
    private int listedFree;

    private long evictions;
    private java.util.function.LongConsumer evictionListener;
    private KvEventSink events;
    private int eventRank;
    private long cachedBlocks;
    private long staleEntries;

    /**
     * Creates a pool of {@code numGpuBlocks} blocks (including the null block).
     *
     * @param numGpuBlocks total blocks as vLLM reports them, at least 2
     */
    public BlockPool(int numGpuBlocks) {
        if (numGpuBlocks < 2) {
            throw new IllegalArgumentException(
                    "num_gpu_blocks must be >= 2 (block 0 is the null block), got " + numGpuBlocks);
        }
        this.numBlocks = numGpuBlocks;
        int initial = Math.min(numGpuBlocks, 64);
        refCount = new int[initial];
        hash = new long[initial];
        freePrev = new int[initial];
        freeNext = new int[initial];
        dupPrev = new int[initial];
        dupNext = new int[initial];
        // Kept sparse: removals (evictions) shift back probe chains, which dominated profiles at load factor 0.75.
        cacheHeads = new HashIndex(NIL);
        refCount[NULL_BLOCK] = 1;
    }

    private void grow(int block) {
        if (block < refCount.length) {
            return;
        }
        int cap = (int) Math.min(numBlocks, Math.max(2L * refCount.length, block + 1L));
        if (cap > numBlocks / 4) {
            // a rank past a quarter of its pool goes on through the rest of it (fresh blocks come first in the free
            // queue): grow once to the whole pool instead of copying twice more
            cap = numBlocks;
        }
        refCount = Arrays.copyOf(refCount, cap);
        hash = Arrays.copyOf(hash, cap);
        freePrev = Arrays.copyOf(freePrev, cap);
        freeNext = Arrays.copyOf(freeNext, cap);
        dupPrev = Arrays.copyOf(dupPrev, cap);
        dupNext = Arrays.copyOf(dupNext, cap);
    }

    /**
     * Whether stored/removed events are published (then a table may be private only when no request is routed twice:
     * {@code VllmScheduler.privateBlocksWithEvents}).
     */
    public boolean publishesEvents() {
        return events != null;
    }

    /** Publishes this pool's stored/removed events to {@code sink} as rank {@code rank} (null: none). */
    public void eventSink(KvEventSink sink, int rank) {
        this.events = sink;
        this.eventRank = rank;
    }

    /** Total blocks including the null block. */
    public int numBlocks() {
        return numBlocks;
    }

    /** Blocks that requests can use: all but the null block. */
    public int usableBlocks() {
        return numBlocks - 1;
    }

    /** Blocks in the free queue (ref count 0), cached or not. */
    public int freeBlocks() {
        return listedFree + (numBlocks - nextFresh);
    }

    /** Blocks with ref count &gt; 0, excluding the null block. */
    public int usedBlocks() {
        return numBlocks - 1 - freeBlocks();
    }

    /** Current reference count of a block. */
    public int refCount(int block) {
        return block < nextFresh ? refCount[block] : 0;
    }

    /** The hash a block carries, or {@link BlockHasher#NO_HASH}. */
    public long blockHash(int block) {
        return block < nextFresh ? hash[block] : BlockHasher.NO_HASH;
    }

    /** Number of cached blocks evicted (hash dropped on reallocation) so far. */
    public long evictions() {
        return evictions;
    }

    /** Number of blocks currently carrying a hash (cached, active or inactive). */
    public long cachedBlocks() {
        return cachedBlocks;
    }

    /** A block holding {@code blockHash}, or -1 when none does. */
    public int lookup(long blockHash) {
        int b = cacheHeads.get(blockHash);
        return b != NIL && hash[b] == blockHash ? b : NIL; // an entry whose block moved on is stale: a miss
    }

    /** Takes a reference on a cached block (prefix hit); a block with ref count 0 leaves the free queue. */
    public void touch(int block) {
        if (refCount[block] == 0) {
            unlinkFree(block);
        }
        refCount[block]++;
    }

    /**
     * Pops the block at the head of the free queue, evicting its hash if it carries one, with ref count 1.
     *
     * @throws IllegalStateException when no block is free (callers check {@link #freeBlocks()} first)
     */
    public int allocate() {
        if (nextFresh < numBlocks) {
            int b = nextFresh++;
            grow(b);
            refCount[b] = 1;
            return b;
        }
        int b = freeHead;
        if (b == NIL) {
            throw new IllegalStateException("KV block pool exhausted");
        }
        unlinkFree(b);
        if (hash[b] != BlockHasher.NO_HASH) {
            long evicted = hash[b];
            uncache(b);
            evictions++;
            if (evictionListener != null) {
                evictionListener.accept(evicted);
            }
        }
        refCount[b] = 1;
        return b;
    }

    /** Hears the hash of every cached block evicted from now on (SGLang HiCache's write-back), or null for none. */
    public void onEviction(java.util.function.LongConsumer listener) {
        this.evictionListener = listener;
    }

    /**
     * Registers a full, computed block under {@code blockHash} so later prompts can hit it. A duplicate joins the end
     * of its hash's chain, so {@link #lookup} keeps returning the first-inserted block, as vLLM's
     * {@code get_one_block} returns the first entry of its per-hash dict.
     */
    public void cache(int block, long blockHash) {
        if (hash[block] != BlockHasher.NO_HASH) {
            return;
        }
        int head = cacheHeads.putIfAbsent(blockHash, block);
        hash[block] = blockHash;
        dupNext[block] = NIL;
        boolean newHead = head == NIL;
        if (head == block) {
            newHead = true; // this block's own stale entry (it was evicted and now caches the same hash again)
            staleEntries--;
        } else if (head != NIL && hash[head] != blockHash) {
            newHead = true; // a stale entry left by an evicted block: this block takes it over
            staleEntries--;
            cacheHeads.put(blockHash, block);
        }
        if (newHead) {
            dupPrev[block] = NIL;
            if (events != null) {
                events.stored(eventRank, blockHash);
            }
        } else {
            int tail = head;
            while (dupNext[tail] != NIL) {
                tail = dupNext[tail];
            }
            dupNext[tail] = block;
            dupPrev[block] = tail;
        }
        cachedBlocks++;
    }

    /**
     * Caches a full block whose hash no other request can carry ({@link BlockTable#markPrivate}) without indexing
     * it: it counts as cached and is evicted as any cached block, but costs no index insert or stale entry. Only its
     * own request could look it up, after a preemption, and {@link #publish} indexes it first.
     */
    public void cachePrivate(int block, long blockHash) {
        if (hash[block] != BlockHasher.NO_HASH) {
            return;
        }
        hash[block] = blockHash;
        dupPrev[block] = PRIVATE;
        dupNext[block] = NIL;
        cachedBlocks++;
    }

    /** Indexes a privately cached block (no-op for any other block): as if {@link #cache} had cached it now. */
    void publish(int block) {
        if (hash[block] == BlockHasher.NO_HASH || dupPrev[block] != PRIVATE) {
            return;
        }
        long h = hash[block];
        hash[block] = BlockHasher.NO_HASH;
        dupPrev[block] = NIL;
        cachedBlocks--;
        cache(block, h);
    }

    /**
     * Takes a cached block with ref count 0 out of the prefix cache without evicting it through the free queue (its
     * hash is dropped; it stays free until claimed): TensorRT-LLM's in-place partial reuse of an unreferenced leaf
     * block ({@code WindowBlockManager::freeLeafBlock}), whose content the claiming request overwrites after its
     * matching tokens.
     */
    public void detach(int block) {
        if (refCount[block] != 0 || hash[block] == BlockHasher.NO_HASH) {
            throw new IllegalStateException("block " + block + " is not a free cached block");
        }
        uncache(block);
    }

    /** Drops one reference; a block reaching ref count 0 is appended to the tail of the free queue. */
    public void release(int block) {
        int rc = --refCount[block];
        if (rc < 0) {
            throw new IllegalStateException("negative ref count on block " + block);
        }
        if (rc == 0) {
            appendFree(block);
        }
    }

    private void uncache(int b) {
        long h = hash[b];
        int prev = dupPrev[b];
        if (prev == PRIVATE) {
            dupPrev[b] = NIL; // never indexed: nothing to invalidate
            hash[b] = BlockHasher.NO_HASH;
            cachedBlocks--;
            return;
        }
        int next = dupNext[b];
        if (prev == NIL) {
            if (next == NIL) {
                // Lazy invalidation: the map entry stays and now points at a block whose hash no longer matches,
                // which lookups treat as a miss. Removing it would shift the probe chain of a large open-addressing
                // table on every eviction (the top cost of eviction-heavy traces); stale entries are purged in bulk
                // once they outnumber the live ones, so memory stays bounded.
                staleEntries++;
                if (events != null) {
                    events.removed(eventRank, h);
                }
            } else {
                cacheHeads.put(h, next);
            }
        } else {
            dupNext[prev] = next;
        }
        if (next != NIL) {
            dupPrev[next] = prev;
        }
        dupPrev[b] = NIL;
        dupNext[b] = NIL;
        hash[b] = BlockHasher.NO_HASH;
        cachedBlocks--;
        if (staleEntries > cachedBlocks + 4096) {
            purgeStale();
        }
    }

    /** Entries in the hash index, stale ones included (diagnostics: bounded by cached blocks + 4,096 + stale). */
    public int indexEntries() {
        return cacheHeads.size();
    }

    /** Drops every map entry whose block no longer carries its hash (amortised: runs when stale ≥ live). */
    private void purgeStale() {
        cacheHeads.purgeStale(hash);
        staleEntries = 0;
    }

    private void appendFree(int b) {
        freePrev[b] = freeTail;
        freeNext[b] = NIL;
        if (freeTail == NIL) {
            freeHead = b;
        } else {
            freeNext[freeTail] = b;
        }
        freeTail = b;
        listedFree++;
    }

    private void unlinkFree(int b) {
        int prev = freePrev[b];
        int next = freeNext[b];
        if (prev == NIL) {
            freeHead = next;
        } else {
            freeNext[prev] = next;
        }
        if (next == NIL) {
            freeTail = prev;
        } else {
            freePrev[next] = prev;
        }
        freePrev[b] = NIL;
        freeNext[b] = NIL;
        listedFree--;
    }

    /** The free queue from head (next to be allocated) to tail; for tests and diagnostics. */
    public int[] freeQueueSnapshot() {
        int[] out = new int[freeBlocks()];
        int i = 0;
        for (int b = nextFresh; b < numBlocks; b++) {
            out[i++] = b;
        }
        for (int b = freeHead; b != NIL; b = freeNext[b]) {
            out[i++] = b;
        }
        return out;
    }

    /** Sum of ref counts of all usable blocks; for invariant checks. */
    public long totalRefCount() {
        long s = 0;
        for (int b = 1; b < nextFresh; b++) {
            if (refCount[b] < 0) {
                return -1;
            }
            s += refCount[b];
        }
        return s;
    }

    /** Number of usable blocks with ref count &gt; 0, counted by scanning; for invariant checks. */
    public int countReferencedBlocks() {
        int n = 0;
        for (int b = 1; b < nextFresh; b++) {
            if (refCount[b] > 0) {
                n++;
            }
        }
        return n;
    }

    /** True when any usable block has a negative ref count; for invariant checks. */
    public boolean anyNegativeRefCount() {
        for (int b = 1; b < nextFresh; b++) {
            if (refCount[b] < 0) {
                return true;
            }
        }
        return false;
    }
}
