package io.servesim.kv;

import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * Request-level KV operations on one rank's {@link BlockPool}: prefix lookup, slot allocation and free.
 *
 * <p>Mirrors vLLM v1 {@code KVCacheManager} for full attention ({@code vllm/v1/core/kv_cache_manager.py},
 * {@code single_type_kv_cache_manager.py}):
 *
 * <ul>
 *   <li>{@link #findPrefixHit}: only full blocks can hit, and the last prompt token never does
 *       ({@code max_cache_hit_length = num_tokens - 1}); the walk stops at the first miss.
 *   <li>{@link #allocateSlots}: blocks needed = ceil(slots / block_size) - hit blocks - held blocks, plus every hit
 *       block with ref count 0 (it sits in the free queue); fail when that exceeds the free blocks. On success hit
 *       blocks are touched, new blocks popped from the free-queue head, and every block that is full with
 *       tokens up to min(computed + new, known tokens) is cached <em>at schedule time</em>, so a later request
 *       in the same step can hit it.
 *   <li>{@link #free}: blocks are released in reverse order, so a request's deepest block reaches the free queue
 *       first and is evicted before its prefix blocks.
 * </ul>
 */
public final class KvCacheManager {
    private final BlockPool pool;
    private final int blockSize;
    private final boolean prefixCaching;
    private boolean trackNewlyCached;
    // blocks recorded in the lists below: read on every step instead of the lists (one cache line fewer per rank)
    private int newlyCachedCount;
    private boolean storesQueued;
    private final it.unimi.dsi.fastutil.ints.IntArrayList newlyCachedBlocks =
            new it.unimi.dsi.fastutil.ints.IntArrayList();
    private final it.unimi.dsi.fastutil.longs.LongArrayList newlyCachedHashes =
            new it.unimi.dsi.fastutil.longs.LongArrayList();

    /** Creates a manager over {@code pool} for blocks of {@code blockSize} tokens. */
    public KvCacheManager(BlockPool pool, int blockSize, boolean prefixCaching) {
        this.pool = pool;
        this.blockSize = blockSize;
        this.prefixCaching = prefixCaching;
    }

    /** Records every block cached from now on (for G2 stores), drained with {@link #drainNewlyCached}. */
    public void trackNewlyCached() {
        this.trackNewlyCached = true;
    }

    /** Stops recording newly cached blocks (a host tier that stores on eviction only) and drops what was recorded. */
    public void stopTrackingNewlyCached() {
        this.trackNewlyCached = false;
        newlyCachedCount = 0;
        newlyCachedBlocks.clear();
        newlyCachedHashes.clear();
    }

    /**
     * Whether the KV connector queued stores for the next step's start (set and cleared by the connector; read by the
     * scheduler on every step, so a step with nothing to store reaches none of the connector's objects).
     */
    public boolean storesQueued() {
        return storesQueued;
    }

    /** Sets {@link #storesQueued()}. */
    public void storesQueued(boolean queued) {
        this.storesQueued = queued;
    }

    /** Whether blocks were cached (and recorded) since the last drain. */
    public boolean hasNewlyCached() {
        return newlyCachedCount != 0;
    }

    /** Moves the blocks cached since the last drain (block ids and hashes) into the given lists. */
    public void drainNewlyCached(
            it.unimi.dsi.fastutil.ints.IntArrayList blocks, it.unimi.dsi.fastutil.longs.LongArrayList hashes) {
        if (newlyCachedCount == 0) {
            return;
        }
        newlyCachedCount = 0;
        blocks.addAll(newlyCachedBlocks);
        hashes.addAll(newlyCachedHashes);
        newlyCachedBlocks.clear();
        newlyCachedHashes.clear();
    }

    /**
     * Allocates blocks for a request that will load {@code loadBlocks} blocks asynchronously after its G1 hits
     * (vLLM's {@code allocate_slots} with {@code num_new_tokens = 0} and {@code delay_cache_blocks}): hit blocks are
     * touched, new blocks allocated, nothing new is cached until the load lands ({@link #cacheLoaded}).
     *
     * @return false (nothing changed) when the free blocks do not suffice
     */
    public boolean allocateForLoad(BlockTable table, IntArrayList hits, int loadBlocks) {
        return allocateAfterHits(table, hits, -1, loadBlocks);
    }

    /**
     * As {@link #allocateForLoad}, but the block after the hits is {@code claimed}, a free cached block taken over in
     * place (TensorRT-LLM's partial reuse of an unreferenced leaf, {@code BlockPool#detach}): it leaves the prefix
     * cache, joins the table uncached (it is cached again under its new content when that is full), and {@code
     * newBlocks} fresh blocks follow it.
     *
     * @return false (nothing changed) when the free blocks do not suffice
     */
    public boolean allocateClaiming(BlockTable table, IntArrayList hits, int claimed, int newBlocks) {
        return allocateAfterHits(table, hits, claimed, newBlocks);
    }

    /** The hits touched, then {@code claimed} (if not -1) detached and taken, then {@code newBlocks} fresh blocks. */
    private boolean allocateAfterHits(BlockTable table, IntArrayList hits, int claimed, int newBlocks) {
        int numHits = hits.size();
        int reactivated = claimed >= 0 ? 1 : 0; // a claimed block is free
        for (int i = 0; i < numHits; i++) {
            if (pool.refCount(hits.getInt(i)) == 0) {
                reactivated++;
            }
        }
        if (newBlocks + reactivated > pool.freeBlocks()) {
            return false;
        }
        table.ensureBlockCapacity(numHits + (claimed >= 0 ? 1 : 0) + newBlocks, blockSize);
        for (int i = 0; i < numHits; i++) {
            int b = hits.getInt(i);
            pool.touch(b);
            table.addBlock(b);
        }
        table.setCached(numHits);
        if (claimed >= 0) {
            pool.detach(claimed);
            pool.touch(claimed);
            table.addBlock(claimed);
        }
        for (int i = 0; i < newBlocks; i++) {
            table.addBlock(pool.allocate());
        }
        return true;
    }

    /**
     * Whether the blocks for a waiting request's whole known sequence fit (vLLM's {@code allocate_slots} with {@code
     * full_sequence_must_fit}, the {@code scheduler_reserve_full_isl} admission gate; {@code kv_cache_manager.py} and
     * {@code get_num_blocks_to_allocate} in {@code single_type_kv_cache_manager.py} at 9aaf83ef). A request that holds
     * blocks already (back from an asynchronous load) needs {@code ceil(tokens / block) - held} more; one that holds
     * none needs {@code ceil(tokens / block) - hits} plus every hit block with ref count 0, as any allocation does.
     *
     * @param table the request's table
     * @param hits the prefix hits about to be taken (empty for a request that holds blocks)
     * @param fullTokens {@code min(known tokens, max_model_len)}
     */
    public boolean wholeSequenceFits(BlockTable table, IntArrayList hits, int fullTokens) {
        int required = ceilDiv(fullTokens, blockSize);
        int held = table.numBlocks();
        int need;
        if (held > 0) {
            need = Math.max(required - held, 0);
        } else {
            int numHits = hits.size();
            need = Math.max(required - numHits, 0);
            for (int i = 0; i < numHits; i++) {
                if (pool.refCount(hits.getInt(i)) == 0) {
                    need++;
                }
            }
        }
        return need <= pool.freeBlocks();
    }

    /** The loaded blocks landed: they get their hashes (up to {@code fullBlocks}) and become hittable. */
    public void cacheLoaded(BlockTable table, int fullBlocks) {
        boolean track = trackNewlyCached;
        trackNewlyCached = false; // they came from G2: no store back
        cacheFullBlocks(table, fullBlocks);
        trackNewlyCached = track;
    }

    /** The underlying pool. */
    public BlockPool pool() {
        return pool;
    }

    /** Tokens per block. */
    public int blockSize() {
        return blockSize;
    }

    /** Whether prefix caching is on. */
    public boolean prefixCaching() {
        return prefixCaching;
    }

    /**
     * Finds the cached prefix of a request that holds no blocks yet.
     *
     * @param table the request's table, with hashes for at least its full prompt blocks
     * @param numTokens tokens known for the request (prompt plus any generated tokens)
     * @param outHits receives the hit blocks, in order (cleared first)
     * @return the number of hit blocks
     */
    public int findPrefixHit(BlockTable table, int numTokens, IntArrayList outHits) {
        outHits.clear();
        if (!prefixCaching || numTokens <= 1 || table.isPrivate()) {
            return 0; // a private table's hashes are in no index and no other block carries them
        }
        // blocks from privateFrom on are cached unindexed, but a request that ended may have left indexed blocks with
        // their hashes (BlockTable.markPrivateFrom): the walk goes on to the first miss
        int maxBlocks = Math.min((numTokens - 1) / blockSize, table.numHashes());
        long[] hashes = table.hashesView();
        for (int i = 0; i < maxBlocks; i++) {
            int b = pool.lookup(hashes[i]);
            if (b < 0) {
                break;
            }
            outHits.add(b);
        }
        return outHits.size();
    }

    /** The empty hit list of a request already running (never modified). */
    private static final IntArrayList NO_HITS = new IntArrayList(0);

    /**
     * {@link #allocateSlots(BlockTable, int, IntArrayList, int, int, int)} for a request with no new prefix hits (one
     * already running): the same, through one shared empty hit list rather than one per caller (at thousands of ranks
     * each of those is a cache miss per step).
     */
    public boolean allocateSlots(
            BlockTable table, int numComputedTokens, int numNewTokens, int numKnownTokens, int maxModelLen) {
        return allocateSlots(table, numComputedTokens, NO_HITS, numNewTokens, numKnownTokens, maxModelLen);
    }

    /**
     * Allocates the slots for {@code numNewTokens} more tokens; vLLM's {@code allocate_slots}.
     *
     * @param table the request's table
     * @param numComputedTokens tokens already computed and held in {@code table}
     * @param hits newly hit prefix blocks (empty for running requests)
     * @param numNewTokens tokens to compute this step
     * @param numKnownTokens tokens whose ids are known (prompt plus generated), bounding what can be cached
     * @param maxModelLen the model's context limit
     * @return false (and nothing changed) when the free blocks do not suffice
     */
    public boolean allocateSlots(
            BlockTable table,
            int numComputedTokens,
            IntArrayList hits,
            int numNewTokens,
            int numKnownTokens,
            int maxModelLen) {
        int numHits = hits.size();
        int totalComputed = Math.min(numComputedTokens + numHits * blockSize, maxModelLen);
        int needSlots = Math.min(totalComputed + numNewTokens, maxModelLen);
        int held = table.numBlocks();
        if (numHits == 0 && needSlots <= held * blockSize) {
            // fast path (most decode steps): no block to allocate (ceil(slots / block) <= held, without dividing);
            // cache blocks that just became full
            if (prefixCaching) {
                cacheBlocksWithin(table, Math.min(totalComputed + numNewTokens, numKnownTokens));
            }
            return true;
        }
        int blocksNeeded = ceilDiv(needSlots, blockSize) - numHits - held;
        if (blocksNeeded < 0) {
            blocksNeeded = 0;
        }
        int reactivated = 0;
        for (int i = 0; i < numHits; i++) {
            if (pool.refCount(hits.getInt(i)) == 0) {
                reactivated++;
            }
        }
        if (blocksNeeded + reactivated > pool.freeBlocks()) {
            return false;
        }
        table.ensureBlockCapacity(held + numHits + blocksNeeded, blockSize);
        for (int i = 0; i < numHits; i++) {
            int b = hits.getInt(i);
            pool.touch(b);
            table.addBlock(b);
        }
        if (numHits > 0) {
            table.cachedUpTo(numHits);
        }
        for (int i = 0; i < blocksNeeded; i++) {
            table.addBlock(pool.allocate());
        }
        if (prefixCaching) {
            cacheFullBlocks(table, Math.min(totalComputed + numNewTokens, numKnownTokens) / blockSize);
        }
        return true;
    }

    /**
     * Caches the request's blocks that are full within its first {@code numTokens} tokens (vLLM's
     * {@code KVCacheManager.cache_blocks}; async scheduling calls it when a sampled token arrives).
     */
    public void cacheBlocks(BlockTable table, int numTokens) {
        if (prefixCaching) {
            cacheBlocksWithin(table, numTokens);
        }
    }

    /**
     * The most tokens {@code table}'s request may have computed after a decode step such that the step changed nothing
     * here: its slot was already held ({@link #allocateSlots}'s fast path) and, with prefix caching, no block beyond
     * the cached ones filled and no block beyond the hashed ones is full of known tokens (known tokens never exceed
     * computed ones plus one).
     */
    public int decodeRunBound(BlockTable table) {
        int bound = table.numBlocks() * blockSize;
        if (prefixCaching) {
            bound = Math.min(bound, (Math.min(table.numCachedBlocks(), table.numHashes()) + 1) * blockSize - 1);
        }
        return bound;
    }

    /** Caches the blocks full within the first {@code numTokens} tokens; on the per-step path, so no division first. */
    private void cacheBlocksWithin(BlockTable table, int numTokens) {
        if ((table.numCachedBlocks() + 1) * blockSize > numTokens) {
            return; // no block beyond the cached ones is full: floor(numTokens / block) <= cached
        }
        cacheFullBlocks(table, numTokens / blockSize);
    }

    private void cacheFullBlocks(BlockTable table, int fullBlocks) {
        int full = Math.min(fullBlocks, Math.min(table.numBlocks(), table.numHashes()));
        for (int i = table.numCachedBlocks(); i < full; i++) {
            int b = table.block(i);
            if (pool.blockHash(b) == BlockHasher.NO_HASH) {
                if (i >= table.privateFrom()) {
                    pool.cachePrivate(b, table.hash(i));
                    continue; // private tables never feed G2 stores (no connector: VllmScheduler.addRequest)
                }
                pool.cache(b, table.hash(i));
                if (trackNewlyCached) {
                    newlyCachedBlocks.add(b);
                    newlyCachedHashes.add(table.hash(i));
                    newlyCachedCount++;
                }
            }
        }
        if (full > table.numCachedBlocks()) {
            table.setCached(full);
        }
    }

    /**
     * A private table's request was preempted and will look its own blocks up when it is admitted again: its cached
     * blocks join the pool's index now, exactly as if indexed when cached (nothing else can hold their hashes, so
     * no index entry existed for them). From then on the table is an ordinary one.
     */
    public void publish(BlockTable table) {
        if (table.privateFrom() == BlockTable.NONE_PRIVATE) {
            return;
        }
        int[] blocks = table.blocksView();
        for (int i = table.privateFrom(), n = Math.min(table.numCachedBlocks(), table.numBlocks()); i < n; i++) {
            pool.publish(blocks[i]);
        }
        table.published();
    }

    /** Frees all blocks of a request, last block first; hashed blocks stay cached until evicted. */
    public void free(BlockTable table) {
        int[] blocks = table.blocksView();
        for (int i = table.numBlocks() - 1; i >= 0; i--) {
            pool.release(blocks[i]);
        }
        table.clearBlocks();
    }

    /** Frees the blocks of a request past its first {@code keepBlocks}, last first (an aborted load's target). */
    public void freeTail(BlockTable table, int keepBlocks) {
        int[] blocks = table.blocksView();
        for (int i = table.numBlocks() - 1; i >= keepBlocks; i--) {
            pool.release(blocks[i]);
        }
        table.truncate(keepBlocks);
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }
}
