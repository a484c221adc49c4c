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
    // vLLM's hybrid KV cache: a second, sliding-window group of layers sharing the pool (0: none)
    private int window;
    private boolean windowGroupFirst;
    private int windowAdmissionCapBlocks;
    // the sliding-window group's hit blocks of the latest findPrefixHit (null blocks before the window's run)
    private final IntArrayList windowHits = new IntArrayList();
    private IntArrayList windowHitsFor;

    /** Creates a manager over {@code pool} for blocks of {@code blockSize} tokens. */
    public KvCacheManager(BlockPool pool, int blockSize, boolean prefixCaching) {
        this.pool = pool;
        this.blockSize = blockSize;
        this.prefixCaching = prefixCaching;
    }

    /**
     * Makes this a hybrid KV cache as vLLM's {@code HybridKVCacheCoordinator} runs it for a model with full-attention
     * and sliding-window layers (gpt-oss): two KV cache groups of as many layers each share the pool, and a block
     * holds one group's layers for {@code blockSize} tokens. Every request has a block table per group. The
     * sliding-window group's table drops blocks whose tokens have all left the window (they return to the pool,
     * cached, and become the null block in the table), its prefix hits need only the window's last blocks, and a
     * cache hit must be one for both groups. Rules and their sources: {@code vllm/v1/core/kv_cache_coordinator.py},
     * {@code single_type_kv_cache_manager.py} ({@code SlidingWindowManager}), {@code kv_cache_manager.py} at
     * 9aaf83ef; each method names the part it follows.
     *
     * @param windowTokens the sliding window in tokens (the current token included)
     * @param groupFirst whether the sliding-window group is vLLM's group 0 (the model's first layer is a
     *     sliding-window one: gpt-oss), which decides the order in which the groups take and return blocks
     * @param maxNumBatchedTokens the step budget (for the admission cap)
     * @param maxModelLen the context limit (for the admission cap)
     */
    public void slidingWindowGroup(int windowTokens, boolean groupFirst, int maxNumBatchedTokens, int maxModelLen) {
        this.window = windowTokens;
        this.windowGroupFirst = groupFirst;
        // SlidingWindowSpec.max_admission_blocks_per_request: the window's last tokens plus one step's, plus one
        this.windowAdmissionCapBlocks =
                ceilDiv(Math.min(windowTokens - 1 + maxNumBatchedTokens, maxModelLen), blockSize) + 1;
    }

    /** Whether a sliding-window group shares the pool ({@link #slidingWindowGroup}). */
    public boolean hybrid() {
        return window > 0;
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
        if (window > 0) {
            need += windowNeed(table, hits, Math.min(required, windowAdmissionCapBlocks));
        }
        return need <= pool.freeBlocks();
    }

    /**
     * The sliding-window group's blocks in the full-sequence gate ({@code get_num_blocks_to_allocate} with the
     * admission cap, {@code SlidingWindowSpec.max_admission_blocks_per_request}), for a request that holds no blocks
     * (with a connector the hybrid cache is off: {@code timing.Deployment}).
     */
    private int windowNeed(BlockTable table, IntArrayList hits, int requiredCapped) {
        return windowBlocksToAllocate(table.window(), windowHitsOf(hits), hits.size() * blockSize, requiredCapped);
    }

    /**
     * {@code SingleTypeKVCacheManager.get_num_blocks_to_allocate} for the sliding-window group: blocks for the
     * {@code required} ones not yet held, counting only from the first block still in the window of a request with
     * {@code computedTokens} computed, plus each hit block in the window with ref count 0 (taking it from the free
     * queue uses a free block). For a running request ({@code wHits} empty, its table held) this is required − held.
     */
    private int windowBlocksToAllocate(BlockTable win, IntArrayList wHits, int computedTokens, int required) {
        int skippedBlocks = skippedTokens(computedTokens) / blockSize;
        int need = Math.max(required - Math.max(skippedBlocks, wHits.size() + win.numBlocks()), 0);
        for (int i = Math.max(0, skippedBlocks - win.numBlocks()); i < wHits.size(); i++) {
            int b = wHits.getInt(i);
            if (b != BlockPool.NULL_BLOCK && pool.refCount(b) == 0) {
                need++;
            }
        }
        return need;
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
        if (window > 0) {
            findWindowHit(hashes, outHits);
        }
        return outHits.size();
    }

    /**
     * The sliding-window group's part of a hybrid prefix hit ({@code HybridKVCacheCoordinator.find_longest_cache_hit}
     * with one full-attention and one other group: full attention first, left to right, then {@code
     * SlidingWindowManager.find_longest_cache_hit} within that length, one pass). Scanning right to left, the hit ends
     * after the first run of {@code ceil((window - 1) / block)} consecutive cached blocks (the blocks before the run
     * are null blocks); with no such run, a run that starts at block 0 is a hit however short. The full-attention hits
     * are cut to the same length. Block sizes are equal, so no alignment applies.
     */
    private void findWindowHit(long[] hashes, IntArrayList fullHits) {
        windowHits.clear();
        windowHitsFor = fullHits;
        int maxBlocks = fullHits.size();
        int needed = ceilDiv(window - 1, blockSize);
        int run = 0;
        int end = -1;
        for (int i = maxBlocks - 1; i >= 0; i--) {
            if (pool.lookup(windowHash(hashes[i])) >= 0) {
                run++;
                if (run >= needed) {
                    end = i + run; // blocks [i, i + run) hit; nothing after them
                    break;
                }
            } else {
                run = 0;
            }
        }
        int length = end >= 0 ? end : run; // no full run: the run reaching block 0 (possibly none)
        int firstReal = end >= 0 ? end - run : 0;
        for (int i = 0; i < length; i++) {
            windowHits.add(i < firstReal ? BlockPool.NULL_BLOCK : pool.lookup(windowHash(hashes[i])));
        }
        fullHits.size(length);
    }

    /**
     * The key of a block hash in the sliding-window group: vLLM keys cached blocks by (hash, group id), so the two
     * groups' blocks of one prefix are distinct cache entries. A fixed bijective mix keeps them apart here.
     */
    static long windowHash(long blockHash) {
        return Long.rotateLeft(blockHash, 29) ^ 0x5851F42D4C957F2DL;
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
        if (window > 0) {
            return allocateHybrid(table, numComputedTokens, hits, numNewTokens, numKnownTokens, maxModelLen);
        }
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
     * {@link #allocateSlots} on a hybrid KV cache ({@code KVCacheManager.allocate_slots} over the two groups in vLLM's
     * group order): first the sliding-window group drops the blocks that left the window ({@code
     * remove_skipped_blocks}, done even when the allocation then fails); then the blocks both groups need are counted
     * ({@code get_num_blocks_to_allocate}: a new request's window needs blocks only from the first one still in the
     * window, and hit blocks with ref count 0 count as used); if they fit, the hits are taken (the window's first
     * skipped ones as null blocks), each group takes its new blocks from the free queue in group order, and the full
     * blocks are cached in both groups.
     */
    private boolean allocateHybrid(
            BlockTable table, int computed, IntArrayList hits, int newTokens, int known, int len) {
        BlockTable win = table.window();
        int numHits = hits.size();
        int totalComputed = Math.min(computed + numHits * blockSize, len);
        int needSlots = Math.min(totalComputed + newTokens, len);
        removeSkipped(win, totalComputed);
        int required = ceilDiv(needSlots, blockSize);
        int newFull = Math.max(required - numHits - table.numBlocks(), 0);
        int used = newFull;
        for (int i = 0; i < numHits; i++) {
            if (pool.refCount(hits.getInt(i)) == 0) {
                used++;
            }
        }
        IntArrayList wHits = windowHitsOf(hits);
        int skippedBlocks = skippedTokens(totalComputed) / blockSize;
        used += windowBlocksToAllocate(win, wHits, totalComputed, required);
        if (used > pool.freeBlocks()) {
            return false;
        }
        if (numHits > 0) {
            // allocate_new_computed_blocks (the touches leave the free queue's order otherwise unchanged)
            table.ensureBlockCapacity(numHits + newFull, blockSize);
            for (int i = 0; i < numHits; i++) {
                int b = hits.getInt(i);
                pool.touch(b);
                table.addBlock(b);
            }
            table.cachedUpTo(numHits);
            int skipped = Math.min(skippedBlocks, wHits.size());
            win.ensureBlockCapacity(Math.max(required, wHits.size()), blockSize);
            for (int i = 0; i < wHits.size(); i++) {
                int b = i < skipped ? BlockPool.NULL_BLOCK : wHits.getInt(i);
                if (b != BlockPool.NULL_BLOCK) {
                    pool.touch(b);
                }
                win.addBlock(b);
            }
            win.nullUpTo(skipped);
            win.cachedUpTo(wHits.size());
        }
        // allocate_new_blocks, group by group in vLLM's order
        if (windowGroupFirst) {
            addNewBlocks(win, required - win.numBlocks());
            addNewBlocks(table, required - table.numBlocks());
        } else {
            addNewBlocks(table, required - table.numBlocks());
            addNewBlocks(win, required - win.numBlocks());
        }
        if (prefixCaching) {
            int fullBlocks = Math.min(totalComputed + newTokens, known) / blockSize;
            if (windowGroupFirst) {
                cacheWindowBlocks(table, win, fullBlocks);
                cacheFullBlocks(table, fullBlocks);
            } else {
                cacheFullBlocks(table, fullBlocks);
                cacheWindowBlocks(table, win, fullBlocks);
            }
        }
        return true;
    }

    /** The window hits found with {@code fullHits} by the latest lookup (none when {@code fullHits} is empty). */
    @SuppressWarnings("ReferenceEquality") // the very list the lookup filled, not an equal one
    private IntArrayList windowHitsOf(IntArrayList fullHits) {
        if (fullHits.isEmpty()) {
            return NO_HITS;
        }
        if (fullHits != windowHitsFor || windowHits.size() != fullHits.size()) {
            throw new IllegalStateException("hybrid KV: hits not from this manager's latest lookup");
        }
        return windowHits;
    }

    /** {@code SlidingWindowManager.get_num_skipped_tokens}: tokens before the window of the next token. */
    private int skippedTokens(int computedTokens) {
        return Math.max(0, computedTokens - window + 1);
    }

    /**
     * {@code SingleTypeKVCacheManager.remove_skipped_blocks}: the blocks wholly before the window of the next token
     * become null blocks and return to the pool, the latest first (cached ones stay cached until evicted).
     */
    private void removeSkipped(BlockTable win, int totalComputed) {
        int skipped = Math.min(skippedTokens(totalComputed) / blockSize, win.numBlocks());
        int from = win.leadingNulls();
        if (skipped <= from) {
            return;
        }
        for (int i = skipped - 1; i >= from; i--) {
            pool.release(win.block(i));
        }
        win.nullUpTo(skipped);
    }

    private void addNewBlocks(BlockTable t, int count) {
        if (count <= 0) {
            return;
        }
        t.ensureBlockCapacity(t.numBlocks() + count, blockSize);
        for (int i = 0; i < count; i++) {
            t.addBlock(pool.allocate());
        }
    }

    /** Caches the sliding-window group's blocks full within {@code fullBlocks}, null blocks skipped. */
    private void cacheWindowBlocks(BlockTable table, BlockTable win, int fullBlocks) {
        int full = Math.min(fullBlocks, Math.min(win.numBlocks(), table.numHashes()));
        for (int i = win.numCachedBlocks(); i < full; i++) {
            int b = win.block(i);
            if (b != BlockPool.NULL_BLOCK && pool.blockHash(b) == BlockHasher.NO_HASH) {
                pool.cache(b, windowHash(table.hash(i)));
            }
        }
        if (full > win.numCachedBlocks()) {
            win.setCached(full);
        }
    }

    /**
     * Caches the request's blocks that are full within its first {@code numTokens} tokens (vLLM's
     * {@code KVCacheManager.cache_blocks}; async scheduling calls it when a sampled token arrives).
     */
    public void cacheBlocks(BlockTable table, int numTokens) {
        if (prefixCaching) {
            if (window > 0) {
                int fullBlocks = numTokens / blockSize;
                if (windowGroupFirst) {
                    cacheWindowBlocks(table, table.window(), fullBlocks);
                    cacheFullBlocks(table, fullBlocks);
                } else {
                    cacheFullBlocks(table, fullBlocks);
                    cacheWindowBlocks(table, table.window(), fullBlocks);
                }
                return;
            }
            cacheBlocksWithin(table, numTokens);
        }
    }

    /**
     * The most tokens {@code table}'s request may have computed after a decode step such that the step changed nothing
     * here: its slot was already held ({@link #allocateSlots}'s fast path) and, with prefix caching, no block beyond
     * the cached ones filled and no block beyond the hashed ones is full of known tokens (known tokens never exceed
     * computed ones plus one), and on a hybrid KV cache no block left the window (the window group's blocks are taken
     * and cached with the full-attention group's).
     */
    public int decodeRunBound(BlockTable table) {
        int bound = table.numBlocks() * blockSize;
        if (prefixCaching) {
            bound = Math.min(bound, (Math.min(table.numCachedBlocks(), table.numHashes()) + 1) * blockSize - 1);
        }
        if (window > 0) {
            // and no window-group block leaves the window: a step from c computed tokens drops block k when
            // c - window + 1 >= (k + 1) x block, so steps stay clear of the first block still held
            bound = Math.min(bound, (table.window().leadingNulls() + 1) * blockSize + window - 1);
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
        if (window > 0) {
            // KVCacheCoordinator.free: group by group in vLLM's order, each last block first; null blocks skipped
            if (windowGroupFirst) {
                freeWindow(table.window());
                freeBlocks(table);
            } else {
                freeBlocks(table);
                freeWindow(table.window());
            }
            return;
        }
        freeBlocks(table);
    }

    private void freeBlocks(BlockTable table) {
        int[] blocks = table.blocksView();
        for (int i = table.numBlocks() - 1; i >= 0; i--) {
            pool.release(blocks[i]);
        }
        table.clearBlocks();
    }

    private void freeWindow(BlockTable win) {
        int[] blocks = win.blocksView();
        for (int i = win.numBlocks() - 1; i >= win.leadingNulls(); i--) {
            pool.release(blocks[i]);
        }
        win.clearBlocks();
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
