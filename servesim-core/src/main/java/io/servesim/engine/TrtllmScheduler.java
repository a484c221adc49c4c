package io.servesim.engine;

import io.servesim.config.TrtllmConfig;
import io.servesim.kv.BlockTable;
import io.servesim.timing.StepBatch;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * One rank's TensorRT-LLM scheduler (PyTorch backend, inflight batching; with {@code async_scheduling} its overlap
 * scheduler, on the same two-batch engine loop as vLLM's async scheduling), after {@code tensorrt_llm/_torch/pyexecutor/py_executor.py} and the C++ schedulers it binds,
 * {@code cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp} and {@code microBatchScheduler.cpp} (read in 2026;
 * docs/engines.md lists the versions). Each iteration:
 *
 * <ol>
 *   <li><b>Active requests</b> in arrival order (new requests are appended; a paused one keeps its place).
 *   <li><b>Capacity scheduler</b> ({@code capacity_scheduler_policy}):
 *       <ul>
 *         <li>{@code guaranteed_no_evict} ({@code GuaranteedNoEvictScheduler}): starting from the free blocks, every
 *             request in generation is scheduled and reserves its blocks to completion ({@code
 *             getRemainingBlocksToCompletion}: blocks for prompt + max new tokens, less what it holds); then the
 *             context requests in order, each only if its own to-completion blocks fit what is left, stopping at
 *             the first that does not (head-of-line). Never pauses anything.
 *         <li>{@code static_batch}: the same, but new contexts are scheduled only when no request is in
 *             generation.
 *         <li>{@code max_utilization} ({@code MaxUtilizationScheduler}): requests in order, each charged only the
 *             blocks of its next step ({@code getNeededBlocksOneStep}: the whole prompt for a first chunk, 0 for a
 *             later chunk, one block when a generation token crosses a block boundary); when one does not fit, the
 *             last started request not behind the scheduling point is paused (its blocks are released; they stay
 *             cached for reuse) and it and every request after it sit out this iteration; a paused request later
 *             recomputes its prompt and the tokens it generated.
 *       </ul>
 *       At most {@code max_batch_size} requests are scheduled.
 *   <li><b>Micro-batch scheduler</b>, over the scheduled requests in order, within {@code max_batch_size} and
 *       {@code max_num_tokens}: a generation request costs one token and stops the loop if it does not fit; a
 *       context request without chunking costs its uncached prompt (at least one token) and stops the loop if it
 *       does not fit (so generation requests behind it wait); with chunking, contexts are sized after the loop
 *       (first come, first served): each gets the rest of its prompt, or what budget is left rounded down to a
 *       multiple of the block size; a request with a 0-token chunk sits out.
 *   <li><b>Resources</b>: a request's first context chunk allocates the blocks of its <em>whole</em> prompt, after
 *       the blocks it reuses (full blocks of the prompt less its last token, {@code enable_block_reuse}); a
 *       generation token allocates a block when it crosses a boundary. A prompt's blocks become reusable when its
 *       context ends, a generated block when it fills; a released request stores its tokens less the last, the
 *       partly filled last block too, which later prompts can reuse in part (in place when it is an unreferenced
 *       leaf, else copied). With a host pool ({@code engine.kv_cache.host_offload}) evicted blocks are offloaded and
 *       host hits onboarded before the forward.
 * </ol>
 *
 * Not modelled: beam search, draft tokens, two-step lookahead (pipeline
 * parallelism only).
 */
public final class TrtllmScheduler extends RankScheduler {
    private final TrtllmConfig.Policy policy;
    private final boolean partialReuse;
    private final boolean copyOnPartialReuse;
    private final TrtllmConfig.ChunkingPolicy chunkingPolicy;
    /** Active requests in arrival order (TRT-LLM's {@code active_requests}). */
    private final ObjectArrayList<Sequence> active = new ObjectArrayList<>();
    /** Active requests holding blocks (started: a context past its first chunk, or in generation), in order. */
    private final ObjectArrayList<Sequence> started = new ObjectArrayList<>();

    private final ObjectArrayList<Sequence> fitting = new ObjectArrayList<>();
    private final ObjectArrayList<Sequence> pending = new ObjectArrayList<>();
    private final ObjectArrayList<Sequence> toChunk = new ObjectArrayList<>();
    private final IntArrayList hits = new IntArrayList();
    private final IntArrayList skipHits = new IntArrayList();
    /** First new context blocks contributed by requests scheduled this iteration (beneficialToSkip). */
    private final it.unimi.dsi.fastutil.longs.LongOpenHashSet contributed =
            new it.unimi.dsi.fastutil.longs.LongOpenHashSet();

    /** Requests whose cancellation was fetched: terminated when the next outputs are handled. */
    private final ObjectArrayList<Sequence> canceled = new ObjectArrayList<>();
    /** Scratch for cancellations terminated outside an output pass. */
    private final ObjectArrayList<Sequence> terminatedScratch = new ObjectArrayList<>();

    private boolean pausedLastStep;
    private long pauses;
    private long pendingPromptTokens;

    /** Creates a scheduler with its own KV pool. */
    public TrtllmScheduler(SchedulerSettings settings, TrtllmConfig config, SchedulerCounters counters) {
        super(settings, counters);
        this.policy = config.capacitySchedulerPolicy();
        this.partialReuse = config.enablePartialReuse();
        this.copyOnPartialReuse = config.copyOnPartialReuse();
        this.chunkingPolicy = config.contextChunkingPolicy();
    }

    /** Active requests not started (holding no blocks). */
    @Override
    public int numWaiting() {
        return active.size() - started.size();
    }

    /** Active requests holding blocks. */
    @Override
    public int numRunning() {
        return started.size();
    }

    @Override
    public boolean hasWork() {
        return !active.isEmpty();
    }

    @Override
    public void inFlight(ObjectArrayList<Sequence> out) {
        out.addAll(started);
        out.addAll(loading);
        for (Sequence s : active) {
            if (s.table().numBlocks() == 0 || s.loaded()) {
                out.add(s);
            }
        }
    }

    @Override
    public Sequence running(int i) {
        return started.get(i);
    }

    @Override
    public Sequence waitingHead() {
        for (Sequence s : active) {
            if (s.table().numBlocks() == 0) {
                return s;
            }
        }
        return null;
    }

    /** Requests paused by {@code max_utilization} so far. */
    @Override
    public long preemptions() {
        return pauses;
    }

    @Override
    public boolean preemptedLastStep() {
        return pausedLastStep;
    }

    @Override
    public void indexEveryBlock() {
        // every block is indexed already (TRT-LLM's radix tree holds every stored block)
    }

    @Override
    public void privateBlocksWithEvents() {
        // no private blocks here
    }

    /** Without chunked context a prompt longer than {@code max_num_tokens} fails ({@code microBatchScheduler.cpp}). */
    @Override
    public boolean rejectsPrompt(int promptLength) {
        return !settings.chunkedPrefill() && promptLength > settings.maxNumBatchedTokens();
    }

    @Override
    public void addRequest(Sequence s) {
        active.add(s);
        pendingPromptTokens += s.promptLength();
    }

    @Override
    public long pendingPromptTokens() {
        return pendingPromptTokens;
    }

    /**
     * In generation: it has output tokens (sampled, or in flight with the overlap scheduler) and its KV is complete up
     * to the last one, which the next step computes.
     */
    private boolean inGeneration(Sequence r) {
        return r.numOutputTokens() + r.placeholders() > 0
                && r.numComputedTokens() == r.numTokens() + r.placeholders() - 1;
    }

    /**
     * Overlap scheduler: the step in flight samples its last token ({@code GENERATION_TO_COMPLETE}): it keeps its
     * capacity but the micro-batch scheduler leaves it out.
     */
    private boolean toComplete(Sequence r) {
        return r.placeholders() > 0 && r.mayFinishWithin(r.placeholders());
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    /** Tokens the request holds when it completes: prompt + max new tokens, capped by the context limit. */
    private int completionTokens(Sequence r) {
        return Math.min(r.promptLength() + r.maxTokens(), settings.maxModelLen());
    }

    /**
     * {@code getRemainingBlocksToCompletion}: blocks for its whole life less what it holds; a request not yet started
     * also counts as held the prefix blocks it will reuse that other requests hold (they are not taken from the free
     * blocks).
     */
    private int remainingBlocksToCompletion(Sequence r) {
        int held = r.table().numBlocks();
        if (held == 0) {
            held = referencedHits(r);
        }
        return Math.max(0, ceilDiv(completionTokens(r), settings.blockSize()) - held);
    }

    /** The prompt's reusable prefix blocks that other requests hold right now (cost no free block). */
    private int referencedHits(Sequence r) {
        int n = prefixHit(r);
        int referenced = 0;
        for (int i = 0; i < n; i++) {
            if (pool.refCount(hits.getInt(i)) > 0) {
                referenced++;
            }
        }
        return referenced;
    }

    /** Looks up the reusable prefix (full blocks of the prompt less its last token) into {@link #hits}. */
    private int prefixHit(Sequence r) {
        if (!settings.prefixCaching()) {
            hits.clear();
            return 0;
        }
        r.ensureHashes(settings.blockSize());
        return kv.findPrefixHit(r.table(), r.numTokens(), hits);
    }

    /** {@code getNeededBlocksOneStep}: the next step's new blocks. */
    private int neededBlocksOneStep(Sequence r) {
        int bs = settings.blockSize();
        if (r.table().numBlocks() == 0) {
            return ceilDiv(r.numTokens(), bs) - referencedHits(r); // a first chunk allocates the whole prompt
        }
        if (r.loaded() && firstTokenWithKv(r)) {
            return ceilDiv(r.numTokens() + 1, bs) - ceilDiv(r.numTokens(), bs); // the context server's first token
        }
        if (!inGeneration(r)) {
            return 0; // a later chunk: the prompt's blocks are allocated
        }
        int cur = r.numComputedTokens();
        if (cur + 1 > completionTokens(r)) {
            return 0;
        }
        return ceilDiv(cur + 1, bs) - ceilDiv(cur, bs);
    }

    @Override
    public int schedule(long nowNanos, StepBatch batch) {
        fitting.clear();
        pausedLastStep = false;
        HostOffload secondary = secondary();
        if (secondary != null) {
            secondary.offloadOnEviction();
        }
        startTransfers();
        int maxRequests = settings.maxNumSeqs();
        if (policy == TrtllmConfig.Policy.MAX_UTILIZATION) {
            maxUtilization(maxRequests);
        } else {
            guaranteedNoEvict(maxRequests, policy == TrtllmConfig.Policy.STATIC_BATCH);
        }
        ScheduledStep step = beginStepRecord();
        microBatch(nowNanos);
        if (step.count == 0 && heldByWaiting > 0) {
            // landed P/D requests hold the blocks nothing else can run without: they give them back (cached) and
            // recompute what they lose, as vLLM's decode side does
            for (int i = 0, n = active.size(); i < n; i++) {
                Sequence w = active.get(i);
                if (w.loaded()) {
                    releaseLanded(w);
                }
            }
            fitting.clear();
            if (policy == TrtllmConfig.Policy.MAX_UTILIZATION) {
                maxUtilization(maxRequests);
            } else {
                guaranteedNoEvict(maxRequests, policy == TrtllmConfig.Policy.STATIC_BATCH);
            }
            microBatch(nowNanos);
        }
        batch.reset((long) pool.usableBlocks() * settings.blockSize());
        boolean overlap = settings.asyncScheduling();
        int total = 0;
        for (int k = 0; k < step.count; k++) {
            Sequence r = step.seq(k);
            int n = step.tokens(k);
            int context = r.numComputedTokens();
            int prompt = r.promptLength();
            int known = r.numTokens() + r.placeholders();
            // a generation token, or (without chunking) a paused request's dropped token generated again
            boolean decode = n == 1 && context >= prompt && (context == known - 1 || !settings.chunkedPrefill());
            batch.add(n, context, decode);
            r.computedTo(context + n);
            boolean samples = context + n >= known; // a context chunk that is not the last samples nothing
            step.samples(k, samples);
            if (overlap && samples) {
                r.placeholderAdded(); // the next step is scheduled before this token is known
            }
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= Math.max(0, Math.min(context + n, prompt) - Math.min(context, prompt));
            }
            if (samples && r.mayFinishWithin(overlap ? r.placeholders() : 1)) {
                step.mayFinish = true;
            }
            total += n;
        }
        endStepRecord(step, total);
        if (total == 0 && !canceled.isEmpty() && nothingInFlight()) {
            // An iteration that schedules nothing handles no cancellation in TRT-LLM (both loops call
            // _handle_canceled_requests only after a forward), so a canceled request nothing lets run would stay
            // active. In an aggregated cluster that cannot happen (a pool holds at least one max_model_len request,
            // and a request in generation is always scheduled); should it, servesim terminates the request now (it
            // holds no blocks then) and schedules the iteration again without it, so it cannot pin the rank.
            terminateCanceled(terminatedScratch);
            terminatedScratch.clear();
            return schedule(nowNanos, batch);
        }
        counters.stepScheduled(total, batch.prefillTokens());
        copyNanos = secondary == null ? 0 : secondary.takeCopyNanos();
        return total;
    }

    private long copyNanos;

    /** The host offloads and onboards this iteration's allocations issued; its forward waits for them. */
    @Override
    long copyBeforeForwardNanos() {
        return copyNanos;
    }

    /** This rank's secondary (host) KV pool ({@code engine.kv_cache.host_offload}), or null. */
    private HostOffload secondary() {
        return connector instanceof TieredConnector t ? t.offload() : null;
    }

    /**
     * Blocks after the GPU hit that the host pool holds, continuing the prompt less its last token (the reuse tree
     * spans both pools: {@code loadOrAllocateBlocks} onboards a matched host block); touched as most recent when
     * {@code touch} (at allocation), not when sizing.
     */
    private int hostRun(Sequence r, int hit, boolean touch) {
        HostOffload g2 = secondary();
        if (g2 == null || !settings.prefixCaching() || r.table().isPrivate()) {
            return 0;
        }
        int max = Math.min((r.numTokens() - 1) / settings.blockSize(), r.table().numHashes());
        if (max <= hit) {
            return 0;
        }
        long[] hashes = r.table().hashesView();
        return touch ? g2.readyRun(hashes, hit, max) : g2.peekReadyRun(hashes, hit, max);
    }

    /** GUARANTEED_NO_EVICT and STATIC_BATCH ({@code GuaranteedNoEvictScheduler::impl}). */
    private void guaranteedNoEvict(int maxRequests, boolean staticBatch) {
        long avail = pool.freeBlocks();
        pending.clear();
        for (int i = 0, n = active.size(); i < n; i++) {
            if (fitting.size() >= maxRequests) {
                break;
            }
            Sequence r = active.get(i);
            if (inGeneration(r) || (r.table().numBlocks() > 0 && !r.loaded())) {
                // in progress: generating, or a chunked context past its first chunk; each had its blocks to
                // completion when it started (a landed P/D request is checked as a pending one). (TRT-LLM keeps a
                // chunked context among the pending
                // contexts, behind an earlier one that may not fit: when a skipped duplicate let it start first, that
                // order can stall both, so servesim continues it first.)
                fitting.add(r);
                avail -= remainingBlocksToCompletion(r);
            } else if (!awaitingTransfer(r)) {
                pending.add(r);
            }
        }
        if (staticBatch && !fitting.isEmpty()) {
            return; // a static batch takes new contexts only when nothing is generating
        }
        if (!staticBatch) {
            contextsAlreadyExecuting();
        }
        for (int i = 0, n = pending.size(); i < n; i++) {
            Sequence r = pending.get(i);
            if (!staticBatch && beneficialToSkip(r)) {
                continue;
            }
            if (fitting.size() >= maxRequests) {
                break;
            }
            int need = remainingBlocksToCompletion(r);
            if (need > avail) {
                break; // head-of-line: later contexts wait too
            }
            fitting.add(r);
            avail -= need;
        }
    }

    /** MAX_UTILIZATION ({@code MaxUtilizationScheduler::operator()}). */
    private void maxUtilization(int maxRequests) {
        long free = pool.freeBlocks();
        long claimed = 0;
        int end = active.size();
        int i = 0;
        contextsAlreadyExecuting();
        while (i < end) {
            Sequence r = active.get(i);
            if (beneficialToSkip(r) || awaitingTransfer(r)) {
                i++;
                continue;
            }
            int need = neededBlocksOneStep(r);
            if (fitting.size() < maxRequests && claimed + need <= free) {
                fitting.add(r);
                claimed += need;
                i++;
                continue;
            }
            int victim = -1;
            for (int j = end - 1; j >= i; j--) {
                if (active.get(j).table().numBlocks() > 0) {
                    victim = j;
                    break;
                }
            }
            if (victim < 0) {
                break;
            }
            Sequence v = active.get(victim);
            int released = 0;
            for (int b = 0, nb = v.table().numBlocks(); b < nb; b++) {
                if (pool.refCount(v.table().block(b)) == 1) {
                    released++; // shared blocks stay with their other holders
                }
            }
            free += released;
            pause(v);
            end = victim; // it and every request after it sit out this iteration
        }
    }

    /**
     * {@code prefillWithChunkedContextsAlreadyExecuting}: a chunked context past its first chunk cannot be skipped; its
     * first new block counts as contributed this iteration.
     */
    private void contextsAlreadyExecuting() {
        contributed.clear();
        if (!settings.prefixCaching()) {
            return;
        }
        for (int i = 0, n = active.size(); i < n; i++) {
            Sequence r = active.get(i);
            if (r.table().numBlocks() > 0 && !inGeneration(r)) {
                long key = firstNewContextBlock(r);
                if (key != NO_BLOCK) {
                    contributed.add(key);
                }
            }
        }
    }

    /**
     * {@code beneficialToSkip} ({@code capacityScheduler.cpp}): with block reuse on, a context request on its first
     * chunk whose first new block (the first full block of its tokens the reuse tree lacks, {@code
     * findNewContextBlock}) an earlier request scheduled this iteration also computes sits this iteration out, to reuse
     * that block in the next; otherwise its own first new block is registered. SGLang's in-batch prefix deduplication
     * is the same idea.
     */
    private boolean beneficialToSkip(Sequence r) {
        if (!settings.prefixCaching() || r.table().numBlocks() > 0) {
            return false;
        }
        long key = firstNewContextBlock(r);
        if (key == NO_BLOCK) {
            return false; // every full block is cached
        }
        return !contributed.add(key);
    }

    private static final long NO_BLOCK = Long.MIN_VALUE;

    /** The hash of the first full block of {@code r}'s tokens that is not cached (it names the whole prefix). */
    private long firstNewContextBlock(Sequence r) {
        int bs = settings.blockSize();
        r.ensureHashes(bs);
        int full = Math.min(r.numTokens() / bs, r.table().numHashes());
        // all full blocks of its tokens, not the prompt less one token as for reuse
        int hit = kv.findPrefixHit(r.table(), r.numTokens() + 1, skipHits);
        return hit < full ? r.table().hash(hit) : NO_BLOCK;
    }

    /**
     * P/D decode requests not started ({@code DISAGG_GENERATION_INIT}), considered before the context requests as
     * TRT-LLM's capacity schedulers do: in order, each gets the blocks of its prompt (its local prefix hit claimed) and
     * its transfer starts, if its blocks to completion ({@code guaranteed_no_evict}) or its prompt's blocks ({@code
     * max_utilization}) fit what the requests in generation leave; the first that does not fit stops the pass. It waits
     * off the active list until its KV lands ({@code DISAGG_GENERATION_TRANS_IN_PROGRESS}).
     */
    private void startTransfers() {
        if (connector == null) {
            return;
        }
        long avail = -1;
        for (int i = 0; i < active.size(); i++) {
            Sequence r = active.get(i);
            if (!r.awaitingRemotePrefill() || r.table().numBlocks() > 0) {
                continue;
            }
            if (avail < 0) {
                avail = pool.freeBlocks();
                if (policy != TrtllmConfig.Policy.MAX_UTILIZATION) {
                    for (int j = 0, n = active.size(); j < n; j++) {
                        Sequence g = active.get(j);
                        if (g.table().numBlocks() > 0) {
                            avail -= remainingBlocksToCompletion(g);
                        }
                    }
                    for (int j = 0, n = loading.size(); j < n; j++) {
                        avail -= remainingBlocksToCompletion(loading.get(j)); // transfers in flight will need theirs
                    }
                }
            }
            int hit = prefixHit(r);
            int remote = connector.matchExternal(r, hit, ceilDiv(r.numTokens(), settings.blockSize()));
            if (remote == 0) {
                continue; // nothing to pull after all: a context request
            }
            int need = policy == TrtllmConfig.Policy.MAX_UTILIZATION
                    ? remote
                    : Math.max(remote, remainingBlocksToCompletion(r));
            if (need > avail || !kv.allocateForLoad(r.table(), hits, remote)) {
                break;
            }
            avail -= need;
            r.lookedUp((hit + remote) * settings.blockSize());
            active.remove(i--);
            loading.add(r);
            connector.startLoad(r, hit);
        }
    }

    /**
     * Stored blocks by the hash of the block before them (the root for a first block): the reuse tree's children, for
     * partial reuse and for telling a leaf. Entries go stale when their block is evicted or stored again elsewhere;
     * they are dropped when visited, and all at once when they outnumber twice the pool.
     */
    private final it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap<IntArrayList> children =
            new it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap<>();

    private long childEntries;

    /** Per block id: the hash it was stored under, its parent's hash, its tokens and how many (valid while the hash holds). */
    private long[] indexedHash = new long[0];

    private long[] indexedParent = new long[0];
    private int[][] indexedTokens = new int[0][];
    private int[] indexedLength = new int[0];
    /** The block {@link #partialMatch} chose (-1: none). */
    private int partialBlock = -1;

    private long partialInPlace;

    /** Partial matches reused in place so far (an unreferenced leaf block taken over instead of copied). */
    long partialReusesInPlace() {
        return partialInPlace;
    }

    /** Records the first {@code blocks} (full) blocks of {@code r}'s tokens as stored, for partial reuse. */
    private void indexForPartialReuse(Sequence r, int blocks) {
        if (!partialReuse || r.table().isPrivate()) {
            return;
        }
        int bs = settings.blockSize();
        for (int i = 0; i < blocks; i++) {
            long parent = i == 0 ? io.servesim.kv.BlockHasher.ROOT : r.table().hash(i - 1);
            indexBlock(r.table().block(i), r.table().hash(i), parent, r, i * bs, bs);
        }
    }

    /** Records block {@code b}, stored under {@code hash} after {@code parent}, holding {@code r}'s tokens [from, from + length). */
    private void indexBlock(int b, long hash, long parent, Sequence r, int from, int length) {
        if (b >= indexedHash.length) {
            int n = Math.max(b + 1, indexedHash.length * 2);
            indexedHash = java.util.Arrays.copyOf(indexedHash, n);
            indexedParent = java.util.Arrays.copyOf(indexedParent, n);
            indexedTokens = java.util.Arrays.copyOf(indexedTokens, n);
            indexedLength = java.util.Arrays.copyOf(indexedLength, n);
        }
        if ((indexedHash[b] == hash && indexedTokens[b] != null) || pool.blockHash(b) != hash) {
            return; // indexed already, or another copy of that block is the stored one
        }
        int bs = settings.blockSize();
        int[] tokens = indexedTokens[b] == null ? new int[bs] : indexedTokens[b];
        for (int t = 0; t < length; t++) {
            tokens[t] = r.request().tokenAt(from + t);
        }
        indexedHash[b] = hash;
        indexedParent[b] = parent;
        indexedTokens[b] = tokens;
        indexedLength[b] = length;
        children.computeIfAbsent(parent, p -> new IntArrayList()).add(b);
        if (++childEntries > 2L * pool.numBlocks() + 4096) {
            purgeChildren();
        }
    }

    /** Whether block {@code b} still holds what it was indexed with, as a child of {@code parent}. */
    private boolean validChild(int b, long parent) {
        return pool.blockHash(b) == indexedHash[b] && indexedParent[b] == parent;
    }

    /** Drops every stale child entry (amortised: runs when entries outnumber twice the pool). */
    private void purgeChildren() {
        childEntries = 0;
        for (var it = children.long2ObjectEntrySet().fastIterator(); it.hasNext(); ) {
            var e = it.next();
            IntArrayList list = e.getValue();
            long parent = e.getLongKey();
            int kept = 0;
            for (int i = 0, n = list.size(); i < n; i++) {
                int b = list.getInt(i);
                if (validChild(b, parent)) {
                    list.set(kept++, b);
                }
            }
            list.size(kept);
            if (kept == 0) {
                it.remove();
            }
            childEntries += kept;
        }
    }

    /**
     * A stored block is a leaf when no stored block follows it ({@code KVCacheBlock::isLeaf}); a partial block always
     * is. (servesim knows the blocks stored at a context's end and at a request's release as children; a generated
     * block another running request stored meanwhile is not seen, and that request holds its parent anyway.)
     */
    private boolean isLeaf(int b) {
        if (indexedLength[b] < settings.blockSize()) {
            return true;
        }
        long h = indexedHash[b];
        IntArrayList kids = children.get(h);
        if (kids == null) {
            return true;
        }
        for (int i = 0, n = kids.size(); i < n; i++) {
            if (validChild(kids.getInt(i), h)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Partial reuse ({@code enable_partial_reuse}, on by default; {@code WindowBlockManager::loadOrAllocateBlocks},
     * {@code KVCacheBlock::findMatchingBlock}): after its {@code hit} fully reused blocks, the prompt's next block (of
     * the prompt less its last token, so possibly short) is compared with the stored blocks that follow the same
     * prefix, full ones and the partial blocks stored at requests' release; the longest run of matching first tokens
     * is reused. With {@code copy_on_partial_reuse} off only unreferenced leaf blocks are candidates. With partial
     * reuse off only a stored partial block with exactly that block's tokens matches (TRT-LLM's exact-key branch is
     * not gated by the flag). Sets {@link #partialBlock}.
     *
     * @return tokens reused from that block (0: none)
     */
    private int partialMatch(Sequence r, int hit) {
        partialBlock = -1;
        if (!settings.prefixCaching() || r.table().isPrivate()) {
            return 0;
        }
        int bs = settings.blockSize();
        int start = hit * bs;
        int limit = Math.min(bs, r.numTokens() - 1 - start);
        if (limit <= 0) {
            return 0;
        }
        long parent = hit == 0 ? io.servesim.kv.BlockHasher.ROOT : r.table().hash(hit - 1);
        IntArrayList list = children.get(parent);
        if (list == null) {
            return 0;
        }
        int best = 0;
        for (int i = 0; i < list.size(); i++) {
            int b = list.getInt(i);
            if (!validChild(b, parent)) {
                list.removeInt(i--); // evicted or stored again for another block since
                childEntries--;
                continue;
            }
            if (!copyOnPartialReuse && (pool.refCount(b) > 0 || !isLeaf(b))) {
                continue;
            }
            int[] tokens = indexedTokens[b];
            int length = indexedLength[b];
            if (!partialReuse && (length != limit || length == bs)) {
                continue; // only an identical partial block (the exact key) matches
            }
            int most = Math.min(length, limit);
            int matched = 0;
            while (matched < most && tokens[matched] == r.request().tokenAt(start + matched)) {
                matched++;
            }
            if (!partialReuse && matched < most) {
                continue;
            }
            if (matched > best) {
                best = matched;
                partialBlock = b;
            }
        }
        if (list.isEmpty()) {
            children.remove(parent);
        }
        if (best == bs) {
            partialBlock = -1;
            return 0; // a whole matching block is a full hit, found by the prefix lookup
        }
        return best;
    }

    private static final long PARTIAL_SALT = 0x7F4A_7C15_9E37_79B9L;

    /**
     * {@code storeBlocksForReuse} at a request's release ({@code WindowBlockManager::releaseBlocks}): its tokens less
     * the last one (whose KV is not written) are stored, the last block even when only partly filled (under a key of
     * its tokens, findable only by {@link #partialMatch}); whether or not partial reuse is on, which only governs
     * lookups. The full blocks are cached already (at the context's end and as generated blocks filled).
     */
    private void storeForReuse(Sequence r) {
        BlockTable t = r.table();
        if (!settings.prefixCaching() || t.isPrivate() || t.numBlocks() == 0) {
            return;
        }
        int bs = settings.blockSize();
        int usable = Math.min(r.numTokens() - 1, r.numComputedTokens());
        if (usable <= 0) {
            return;
        }
        r.ensureHashes(bs);
        int full = Math.min(usable / bs, t.numBlocks());
        kv.cacheBlocks(t, full * bs);
        indexForPartialReuse(r, full); // (a block another copy of which is the cached one is skipped)
        int rest = usable - full * bs;
        if (rest == 0 || full >= t.numBlocks()) {
            return;
        }
        int b = t.block(full);
        if (pool.blockHash(b) != io.servesim.kv.BlockHasher.NO_HASH || pool.refCount(b) != 1) {
            return;
        }
        long parent = full == 0 ? io.servesim.kv.BlockHasher.ROOT : t.hash(full - 1);
        long s = io.servesim.kv.BlockHasher.begin(parent ^ PARTIAL_SALT);
        for (int i = full * bs, e = full * bs + rest; i < e; i++) {
            s = io.servesim.kv.BlockHasher.add(s, r.request().tokenAt(i));
        }
        long key = io.servesim.kv.BlockHasher.finish(io.servesim.kv.BlockHasher.add(s, rest));
        pool.cachePrivate(b, key); // cached, evicted as any cached block, but no full-block lookup can hit it
        indexBlock(b, key, parent, r, full * bs, rest);
    }

    /** A P/D decode request whose transfer did not start yet: only {@link #startTransfers} takes it. */
    private boolean awaitingTransfer(Sequence r) {
        return r.awaitingRemotePrefill() && r.table().numBlocks() == 0;
    }

    /** The KV of P/D decode request {@code s} landed: it goes back to its place in the active list. */
    @Override
    void requeueLanded(Sequence s) {
        int at = active.size();
        while (at > 0 && active.get(at - 1).request().id() > s.request().id()) {
            at--;
        }
        active.add(at, s);
    }

    /**
     * A paused request gives its blocks back (full ones stay cached for reuse) and goes back to context: it recomputes
     * its prompt and the tokens it generated ({@code LlmRequest::pause}).
     */
    private void pause(Sequence v) {
        if (v.awaitingFirstToken()) {
            pendingPromptTokens += Math.min(v.numComputedTokens(), v.promptLength());
        }
        if (v.loaded()) {
            releaseLanded(v); // a landed P/D request gives its blocks back (they stay cached)
        } else {
            storeForReuse(v); // removeSequence releases its blocks for reuse, the partial last one too
            kv.free(v.table());
        }
        started.remove(v);
        v.preempted();
        counters.preempted();
        pauses++;
        pausedLastStep = true;
    }

    /** The micro-batch scheduler over {@link #fitting}, then the resources of what it chose. */
    private void microBatch(long nowNanos) {
        ScheduledStep step = latest;
        toChunk.clear();
        int maxTokens = settings.maxNumBatchedTokens();
        int maxBatch = settings.maxNumSeqs();
        boolean chunking = settings.chunkedPrefill();
        int batchTokens = 0;
        int chunkTokens = 0;
        boolean allFit = true;
        for (int k = 0, n = fitting.size(); k < n; k++) {
            Sequence r = fitting.get(k);
            if (inGeneration(r)) {
                if (toComplete(r)) {
                    continue; // outside the micro-batch scheduler's window
                }
                if (batchTokens + 1 > maxTokens) {
                    break;
                }
                addAndAllocate(r, 1, nowNanos);
                batchTokens += 1;
            } else {
                int remaining = contextRemaining(r);
                if (!chunking) {
                    int size = remaining;
                    if (r.table().numBlocks() > 0 && r.preemptions() > 0 && r.numComputedTokens() >= maxTokens) {
                        size = 1; // regenerating a paused request's dropped tokens, one per iteration (below)
                    } else if (r.preemptions() > 0 && r.numTokens() > maxTokens) {
                        // LlmRequest::pause keeps min(maxInputLen, prompt + generated) tokens as the new prompt and
                        // drops the rest, which are generated again one per iteration; without chunking the longest
                        // prompt TRT-LLM runs is max_num_tokens, which servesim takes as maxInputLen
                        size = Math.max(1, maxTokens - (r.numTokens() - remaining));
                    }
                    if (size > maxTokens && r.handoff() != null && !r.prefillOnly()) {
                        // a P/D generation-side request recomputing a prompt longer than max_num_tokens (its pull was
                        // cut short by a failed context server): TRT-LLM would fail it; servesim runs it in chunks of
                        // what the iteration leaves, so the request is not lost (docs/engines.md)
                        size = maxTokens - batchTokens;
                        if (size <= 0) {
                            break;
                        }
                    }
                    int cost = Math.max(1, size);
                    if (batchTokens + cost > maxTokens) {
                        break; // the whole loop stops: generation requests behind it wait too
                    }
                    addAndAllocate(r, size, nowNanos);
                    batchTokens += cost;
                } else {
                    toChunk.add(r);
                    int cost = Math.min(remaining, maxTokens);
                    allFit &= cost == remaining;
                    chunkTokens += cost;
                }
            }
            if (step.count + toChunk.size() >= maxBatch) {
                break;
            }
        }
        if (chunking && !toChunk.isEmpty()) {
            int capacity = maxTokens - batchTokens;
            allFit &= chunkTokens <= capacity;
            int unit = settings.blockSize();
            if (!allFit && chunkingPolicy == TrtllmConfig.ChunkingPolicy.EQUAL_PROGRESS) {
                equalProgress(capacity, unit, maxTokens, nowNanos);
                toChunk.clear();
            }
            for (int k = 0, n = toChunk.size(); k < n; k++) {
                Sequence r = toChunk.get(k);
                int remaining = contextRemaining(r);
                int chunk = remaining;
                if (chunk > capacity) { // (with allFit only if an earlier allocation evicted part of its prefix)
                    chunk = capacity / unit * unit; // trimmed: a multiple of the chunk unit (FIRST_COME_FIRST_SERVED)
                }
                if (chunk > 0) {
                    addAndAllocate(r, chunk, nowNanos);
                    capacity -= chunk;
                }
            }
        }
    }

    /**
     * Adds a request to the micro-batch and claims its resources at once ({@code prepare_resources} runs in the same
     * order), so the next request is sized against the cache as these allocations leave it: a context sized on a
     * reused prefix finds that prefix when it is allocated, and without chunking it completes in one iteration.
     */
    private void addAndAllocate(Sequence r, int tokens, long nowNanos) {
        add(r, tokens);
        ScheduledStep step = latest;
        step.markFirst(allocate(step, step.count - 1, nowNanos));
    }

    /**
     * EQUAL_PROGRESS ({@code setCtxRequestsChunkSize}): rounds in which every context takes one more chunk unit (or
     * the rest of its prompt), an increase refused if it would pass the budget left or {@code max_num_tokens};
     * until the budget is spent or a round makes no progress.
     */
    private void equalProgress(int capacity, int unit, int maxTokens, long nowNanos) {
        int n = toChunk.size();
        int[] chunk = new int[n];
        int[] remaining = new int[n];
        for (int k = 0; k < n; k++) {
            remaining[k] = contextRemaining(toChunk.get(k));
        }
        int left = capacity;
        boolean progress = true;
        while (left > 0 && progress) {
            progress = false;
            for (int k = 0; k < n; k++) {
                int inc = Math.min(unit, remaining[k] - chunk[k]);
                if (inc <= 0 || inc > left || chunk[k] + inc > maxTokens) {
                    continue;
                }
                chunk[k] += inc;
                left -= inc;
                progress = true;
            }
        }
        for (int k = 0; k < n; k++) {
            if (chunk[k] > 0) {
                addAndAllocate(toChunk.get(k), chunk[k], nowNanos);
            }
        }
    }

    /** Context tokens still to compute; for a request not started, the prompt less its reusable prefix. */
    private int contextRemaining(Sequence r) {
        if (r.table().numBlocks() == 0) {
            int hit = prefixHit(r);
            int host = hostRun(r, hit, false);
            return r.numTokens() - (hit + host) * settings.blockSize() - (host > 0 ? 0 : partialMatch(r, hit));
        }
        if (r.loaded()) {
            return r.numTokens() - landedComputed(r); // a P/D decode request over its landed KV
        }
        return r.numTokens() - r.numComputedTokens();
    }

    /**
     * A landed P/D decode request that gets its first token from the context server: the whole prompt's KV landed and
     * it wants more than one token (TRT-LLM's disaggregated server answers a one-token request from the context
     * server alone; servesim's generation side then computes that token, as vLLM's does).
     */
    private boolean firstTokenWithKv(Sequence r) {
        return r.numOutputTokens() == 0
                && r.loadedBlocks() * settings.blockSize() >= r.numTokens()
                && r.remainingOutputTokens() > 1;
    }

    /** A landed P/D decode request's KV counts as computed up to its last prompt token, which it computes itself. */
    private int landedComputed(Sequence r) {
        return Math.min(r.loadedBlocks() * settings.blockSize(), r.numTokens() - 1);
    }

    private void add(Sequence r, int tokens) {
        latest.add(r, tokens, false, !inGeneration(r));
    }

    /**
     * {@code prepare_resources}: a first chunk claims the reused prefix blocks and allocates the rest of the whole
     * prompt (nothing new is reusable until the context ends); a generation token allocates across a block boundary.
     *
     * @return whether this was the request's first admission
     */
    private boolean allocate(ScheduledStep step, int k, long nowNanos) {
        Sequence r = step.seq(k);
        int tokens = step.tokens(k);
        if (r.table().numBlocks() == 0) {
            int hit = prefixHit(r);
            int host = hostRun(r, hit, true);
            // (a partial match is looked for among the GPU's blocks after a GPU hit only)
            int partial = host > 0 ? 0 : partialMatch(r, hit);
            int computed = (hit + host) * settings.blockSize() + partial;
            // the reused prefix is looked up again here, after the step's earlier allocations (a generation token
            // stores the block holding its last prompt token, storeNewBlock, which a later request can reuse): never
            // compute past the prompt's end if it grew since the chunk was sized
            step.tokens(k, Math.min(tokens, r.numTokens() - computed));
            int blocks = ceilDiv(r.numTokens(), settings.blockSize()) - hit;
            HostOffload secondary = secondary();
            long[] hashes = r.table().hashesView();
            if (host > 0) {
                secondary.pinRun(hashes, hit, host); // the allocation's offloads must not evict them
            }
            boolean inPlace = partial > 0 && pool.refCount(partialBlock) == 0 && isLeaf(partialBlock);
            // an unreferenced leaf that matches in part is taken over in place (freeLeafBlock, claimBlock), any other
            // is copied into a new block (copy_on_partial_reuse); either way one free block is used
            if (inPlace
                    ? !kv.allocateClaiming(r.table(), hits, partialBlock, blocks - 1)
                    : !kv.allocateForLoad(r.table(), hits, blocks)) {
                throw new IllegalStateException(
                        "TRT-LLM capacity check admitted request " + r.request().id() + " but its " + blocks
                                + " blocks do not fit (" + pool.freeBlocks() + " free)");
            }
            if (inPlace) {
                partialInPlace++;
            }
            if (host > 0) {
                secondary.onboard(hashes, hit, host); // copied back, the host slots freed (onboardBlock)
                kv.cacheLoaded(r.table(), hit + host);
            }
            if (r.loaded()) {
                consumeLoad(r); // a P/D request whose pull was cut short before any block landed: it starts afresh
            }
            r.lookedUp(computed);
            int hostTokens = host * settings.blockSize();
            boolean first = r.admitted(nowNanos, computed, hostTokens, 0);
            counters.admitted(r.numTokens(), computed);
            if (first) {
                counters.firstAdmission(r.promptLength(), computed, hostTokens, 0);
            }
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= Math.min(computed, r.promptLength());
            }
            insertStarted(r);
            return first;
        }
        if (r.loaded() && firstTokenWithKv(r)) {
            // DISAGG_GENERATION_TRANS_COMPLETE with the whole prompt's KV: the context server's first token joins it
            // unstreamed (_prepare_disagg_gen_transmission_complete: add_new_token(first_gen_tokens), in generation),
            // and this step computes it and samples the second; the client gets both then (the disaggregated server
            // forwards only the generation server's stream)
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= r.promptLength();
            }
            insertStarted(r);
            boolean first = admitOverLanded(r, r.numTokens(), nowNanos);
            r.firstTokenReceived();
            if (!kv.allocateSlots(r.table(), r.numTokens() - 1, 1, r.numTokens(), settings.maxModelLen())) {
                throw new IllegalStateException("TRT-LLM capacity check scheduled P/D request "
                        + r.request().id() + " but the slot of its first token does not fit");
            }
            return first;
        }
        if (r.loaded()) {
            // a P/D decode request (DISAGG_GENERATION_TRANS_COMPLETE) whose KV landed only in part (its context server
            // failed mid-transfer), or that wants one token: its blocks came with the KV, it computes the rest
            int computed = landedComputed(r);
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= Math.min(computed, r.promptLength());
            }
            insertStarted(r);
            return admitOverLanded(r, computed, nowNanos);
        }
        if (inGeneration(r)) {
            int cur = r.numComputedTokens();
            if (settings.prefixCaching()) {
                r.ensureHashes(settings.blockSize());
            }
            if (!kv.allocateSlots(r.table(), cur, tokens, r.numTokens(), settings.maxModelLen())) {
                throw new IllegalStateException("TRT-LLM capacity check scheduled request "
                        + r.request().id() + " but its next block does not fit");
            }
        }
        return false;
    }

    /** Keeps {@link #started} in arrival order (a re-admitted paused request goes back to its place). */
    private void insertStarted(Sequence r) {
        int at = started.size();
        while (at > 0 && started.get(at - 1).request().id() > r.request().id()) {
            at--;
        }
        started.add(at, r);
    }

    @Override
    int appendOutputs(long nowNanos, ObjectArrayList<Sequence> finishedOut) {
        int finishedCount = 0;
        ScheduledStep step = oldestStep();
        boolean overlap = settings.asyncScheduling();
        int bs = settings.blockSize();
        for (int k = 0; k < step.count; k++) {
            Sequence r = step.seq(k);
            if (!step.samples(k) || r.finished()) {
                continue; // a context chunk that is not the last samples nothing
            }
            boolean holds = r.table().numBlocks() > 0; // not paused since
            if (step.context(k) && holds && settings.prefixCaching()) {
                int stored = (r.numTokens() - 1) / bs;
                kv.cacheLoaded(r.table(), stored); // storeContextBlocks: its context less one token
                indexForPartialReuse(r, stored);
            }
            if (r.firstTokenHeld()) {
                r.streamHeldFirstToken(nowNanos); // P/D: the context server's token, streamed with this one
                counters.tokenSampled();
            }
            counters.tokenSampled();
            long gap = r.tokenSampled(nowNanos);
            if (gap >= 0) {
                recordGap(gap);
            }
            if (overlap) {
                r.placeholderFilled();
                if (holds && settings.prefixCaching()) {
                    r.ensureHashes(bs);
                    kv.cacheBlocks(r.table(), r.numComputedTokens() - r.placeholders()); // blocks its token filled
                }
            }
            if (r.reachedTarget()) {
                r.finish();
                if (holds) {
                    if (r.prefillOnly()) {
                        heldForHandoffs += r.table().numBlocks(); // held until the decode side has read them
                    } else {
                        storeForReuse(r);
                        kv.free(r.table());
                    }
                    started.remove(r);
                }
                active.remove(r);
                finishedOut.add(r);
                finishedCount++;
            }
        }
        if (!canceled.isEmpty()) {
            finishedCount += terminateCanceled(finishedOut);
        }
        flushGaps();
        recycle(step);
        return finishedCount;
    }

    /**
     * TensorRT-LLM's cancellation of one request whose client disconnected ({@code PyExecutor}, @ the versions read
     * above): the cancel is fetched with new requests at the start of an iteration, and the request stays active — it
     * may be scheduled in that iteration — until {@code _handle_canceled_requests} finishes it ({@code
     * FinishReason.CANCELLED}) after the next outputs are handled (this iteration's in the synchronous loop, the
     * previous iteration's in the overlap loop, whose batch in flight may then hold it: that token is dropped), and
     * {@code _handle_responses} terminates it at once, its blocks released for reuse as a finished request's. servesim
     * calls this before the iteration's schedule, which is where the fetch is.
     */
    @Override
    void abort(Sequence s) {
        canceled.add(s);
    }

    /**
     * Finishes and terminates every canceled request not finished meanwhile ({@code _handle_canceled_requests}, then
     * {@code _handle_responses}), appending them to {@code out}.
     *
     * @return how many it terminated
     */
    private int terminateCanceled(ObjectArrayList<Sequence> out) {
        int n = 0;
        for (int i = 0, size = canceled.size(); i < size; i++) {
            Sequence c = canceled.get(i);
            if (c.finished()) {
                continue; // it reached its end in the outputs just handled
            }
            if (c.awaitingFirstToken()) {
                pendingPromptTokens -= c.promptLength() - Math.min(c.numComputedTokens(), c.promptLength());
            }
            if (c.table().numBlocks() > 0) {
                storeForReuse(c); // _terminate_request: free_resources stores its blocks for reuse
                kv.free(c.table());
            }
            started.remove(c);
            active.remove(c);
            c.finish();
            out.add(c);
            n++;
        }
        canceled.clear();
        return n;
    }

    /** A P/D context's blocks are read: released for reuse as any request's, the partial last one too. */
    @Override
    void releaseHandoff(Sequence s) {
        storeForReuse(s);
        super.releaseHandoff(s);
    }

    @Override
    String describeHead() {
        Sequence h = waitingHead();
        return h == null ? "none" : "tokens=" + h.numTokens() + " computed=" + h.numComputedTokens();
    }

    @Override
    void abandon(ObjectArrayList<Sequence> out) {
        inFlight(out);
        active.clear();
        started.clear();
        loading.clear();
        heldByWaiting = 0;
        heldForHandoffs = 0;
        if (connector != null) {
            connector.abortAll();
        }
        clearSteps();
        pendingPromptTokens = 0;
        canceled.clear();
    }
}
