package io.servesim.engine;

import io.servesim.config.SglangConfig;
import io.servesim.timing.StepBatch;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;
import java.util.SplittableRandom;

/**
 * One rank's SGLang scheduler (its normal event loop, or with {@code async_scheduling} the overlap scheduler on the
 * same two-batch engine loop as vLLM's async scheduling), after {@code
 * python/sglang/srt/managers/scheduler.py} ({@code get_next_batch_to_run}, {@code get_new_batch_prefill}, {@code
 * update_running_batch}), {@code schedule_policy.py} ({@code PrefillAdder}) and {@code schedule_batch.py} ({@code
 * check_decode_mem}, {@code retract_decode}); vllm-semantics.md §5. Each iteration:
 *
 * <ol>
 *   <li><b>Prefill batch</b> ({@code get_new_batch_prefill}): the one chunked request continues first, then waiting
 *       requests in {@code schedule_policy} order while {@code max_running_requests} allows. Budgets: {@code
 *       max_prefill_tokens} of prompt per batch (a single larger request still runs), {@code chunked_prefill_size}
 *       per step, and the KV room: free (and evictable) tokens less a reservation for the running requests' future
 *       tokens, {@code min(max_new - generated, clip) x new_token_ratio} each. A request is admitted if its uncached
 *       prompt plus its whole clipped {@code max_new_tokens} fits that room (else admission stops); one that exceeds
 *       the chunk budget is admitted as a page-aligned chunk and becomes the chunked request.
 *   <li>If the prefill batch is not empty it runs alone: <b>decodes wait</b> for that iteration (unless {@code
 *       enable_mixed_chunk}, off by default: then the running requests decode in it too).
 *   <li>Otherwise a <b>decode batch</b> of every running request. First {@code check_decode_mem}: if the pages the
 *       step needs are not free, {@code retract_decode} takes back the request with the fewest generated tokens
 *       (ties: the longest prompt) until 20 tokens per remaining request are free; retracted requests release their
 *       KV (cached pages stay), go to the <em>end</em> of the waiting queue and recompute later; {@code
 *       new_token_ratio} is then reset to {@code (generated + 20 x remaining) / max_new} of the remaining requests.
 *       Without retraction the ratio decays by {@code (init - min) / 600} per decode step, down to {@code 0.14 x
 *       init}.
 * </ol>
 *
 * Prefix hits are whole pages of the prompt less its last token (page 1: token-granular, as SGLang's radix tree).
 * <p>The overlap scheduler ({@code event_loop_overlap}, SGLang's default): batch N+1 is scheduled and launched before
 * batch N's results are processed (its tokens are futures), so every running request decodes in N+1, also one whose
 * last token N samples (that extra token is dropped), and a request retracted for N+1 loses its token of N ({@code
 * is_retracted}): it recomputes from the tokens it has.
 *
 * <p>HiCache (a rank-local G2 tier, {@code hiradix_cache.py}): write-through backs up the pages a batch inserted when
 * the next batch starts (locked on the device until the copy lands), or with {@code write_back} a page only when the GPU
 * evicts it (the evicting batch lasts at least the copy); at admission the lookup continues into host pages
 * and a run of at least {@value #LOAD_BACK_THRESHOLD} tokens is loaded back during the batch that uses it, which
 * lasts at least the copy ({@code init_load_back}, then the layer-wise load overlapped with the forward).
 *
 * <p>Not modelled: the consecutive-prefill overlap switch ({@code SGLANG_DISABLE_CONSECUTIVE_PREFILL_OVERLAP}, off by
 * default), the extra token's page freed one batch after its request (servesim frees it with the request), the newer
 * policies, priority scheduling, HiCache's L3 storage.
 */
public final class SglangScheduler extends RankScheduler {
    /** {@code retract_decode_steps}: tokens per remaining request a retraction frees room for. */
    static final int RETRACT_DECODE_STEPS = 20;

    /** In-batch prefix deduplication's thresholds (cached tokens at most, shared tokens at least). */
    static final int IN_BATCH_PREFIX_TOKENS = 32;

    /** HiCache loads a host hit back only from this many tokens on ({@code HiRadixCache.load_back_threshold}). */
    static final int LOAD_BACK_THRESHOLD = 10;

    /** Above this many waiting requests {@code lpm} falls back to arrival order. */
    static final int LPM_FALLBACK_QUEUE = 128;

    private final SglangConfig config;
    private final int maxRunning;
    private final SplittableRandom rng;
    private final double initRatio;
    private final double minRatio;
    private final double decay;
    private double newTokenRatio;
    private final ObjectArrayList<Sequence> waiting = new ObjectArrayList<>();
    private final ObjectArrayList<Sequence> running = new ObjectArrayList<>();
    private final ObjectArrayList<Sequence> order = new ObjectArrayList<>();
    private final IntArrayList hits = new IntArrayList();
    private Sequence chunked;
    private boolean retractedLastStep;
    private long retractions;
    private long pendingPromptTokens;
    private long inStepLoadNanos;
    private int stepLoadBlocks;

    /**
     * Creates a scheduler with its own KV pool.
     *
     * @param maxRunning {@code max_running_requests} resolved
     * @param rng this rank's stream for the {@code random} policy
     */
    public SglangScheduler(
            SchedulerSettings settings,
            SglangConfig config,
            int maxRunning,
            SplittableRandom rng,
            SchedulerCounters counters) {
        super(settings, counters);
        this.config = config;
        this.maxRunning = maxRunning;
        this.rng = rng;
        this.initRatio = Math.min(0.7 * config.scheduleConservativeness(), 1.0);
        this.minRatio = initRatio * 0.14;
        this.decay = (initRatio - minRatio) / 600;
        this.newTokenRatio = initRatio;
    }

    /** The current {@code new_token_ratio}. */
    public double newTokenRatio() {
        return newTokenRatio;
    }

    @Override
    public int numWaiting() {
        return waiting.size();
    }

    /** Running requests, and the chunked one (it holds KV). */
    @Override
    public int numRunning() {
        return running.size() + (chunked == null ? 0 : 1);
    }

    @Override
    public boolean hasWork() {
        return !waiting.isEmpty() || !running.isEmpty() || chunked != null; // loading requests wake it when they land
    }

    @Override
    public void inFlight(ObjectArrayList<Sequence> out) {
        out.addAll(running);
        if (chunked != null) {
            out.add(chunked);
        }
        out.addAll(prefilled);
        out.addAll(loading);
        out.addAll(waiting);
    }

    @Override
    public Sequence running(int i) {
        return i < running.size() ? running.get(i) : chunked;
    }

    @Override
    public Sequence waitingHead() {
        return waiting.isEmpty() ? null : waiting.get(0);
    }

    /** Requests retracted so far (counted as preemptions). */
    @Override
    public long preemptions() {
        return retractions;
    }

    @Override
    public boolean preemptedLastStep() {
        return retractedLastStep;
    }

    @Override
    public void indexEveryBlock() {
        // every page is indexed (SGLang's radix tree holds every cached page)
    }

    @Override
    public void privateBlocksWithEvents() {
        // no private pages here
    }

    @Override
    public void addRequest(Sequence s) {
        waiting.add(s);
        pendingPromptTokens += s.promptLength();
    }

    @Override
    public long pendingPromptTokens() {
        return pendingPromptTokens;
    }

    /**
     * SGLang's {@code Scheduler.abort_request} for one request (its client disconnected): a waiting request is popped
     * from the queue ("abort method 1": it holds no pages); any other — running, in the batch in flight, or being
     * chunk-prefilled — is marked {@code to_finish} ("abort method 3": it "will still run one decode forward pass",
     * then the usual finish path frees its pages when that pass's result comes back). servesim also marks a
     * chunked request between two of its chunks, which SGLang's scan of the running and current batches can miss.
     */
    @Override
    void abort(Sequence s) {
        int i = waiting.indexOf(s);
        if (i < 0) {
            s.finishAtNextOutput(true);
            return;
        }
        waiting.remove(i);
        if (s.awaitingFirstToken()) {
            pendingPromptTokens -= s.promptLength() - Math.min(s.numComputedTokens(), s.promptLength());
        }
        kv.free(s.table());
        s.finish();
    }

    private int page() {
        return settings.blockSize();
    }

    /** {@code min(max_new_tokens - generated, CLIP_MAX_NEW_TOKENS)}, max_new_tokens capped by the context limit. */
    private int clippedNew(Sequence r) {
        return Math.min(r.remainingOutputTokens(), config.clipMaxNewTokens());
    }

    private int prefixHit(Sequence r) {
        if (!settings.prefixCaching()) {
            hits.clear();
            return 0;
        }
        r.ensureHashes(page());
        return kv.findPrefixHit(r.table(), r.numTokens(), hits);
    }

    @Override
    public int schedule(long nowNanos, StepBatch batch) {
        retractedLastStep = false;
        ScheduledStep step = beginStepRecord();
        stepLoadBlocks = 0;
        batchPrefills = 0;
        HostOffload host = hiCache();
        if (host != null && config.hicacheWritePolicy() == io.servesim.config.SglangConfig.WritePolicy.WRITE_BACK) {
            host.writeBack();
        } else if (host != null
                && config.hicacheWritePolicy() == io.servesim.config.SglangConfig.WritePolicy.WRITE_THROUGH_SELECTIVE) {
            host.selective();
        }
        if (connector != null) {
            connector.beforeSchedule(kv); // HiCache write-through: back up what the previous batch cached
        }
        if (!prefillBatch(nowNanos)) {
            decodeBatch();
        }
        if (step.count == 0 && heldByWaiting > 0) {
            releaseAllLanded(); // nothing could run while landed P/D requests hold pages: they give them back
            if (!prefillBatch(nowNanos)) {
                decodeBatch();
            }
        }
        if (connector != null) {
            connector.afterSchedule(kv);
        }
        HostOffload g2 = hiCache();
        inStepLoadNanos = stepLoadBlocks > 0 && g2 != null ? g2.loadInStep(stepLoadBlocks) : 0;
        if (g2 != null) {
            // write-back copies run device to host, loads host to device: the batch lasts at least the longer
            inStepLoadNanos = Math.max(inStepLoadNanos, g2.takeWriteBackNanos());
        }
        batch.reset((long) pool.usableBlocks() * page());
        boolean overlap = settings.asyncScheduling();
        int total = 0;
        for (int k = 0; k < step.count; k++) {
            Sequence r = step.seq(k);
            int n = step.tokens(k);
            int context = r.numComputedTokens();
            int prompt = r.promptLength();
            int known = r.numTokens() + r.placeholders();
            boolean decode = n == 1 && context >= prompt && context == known - 1;
            batch.add(n, context, decode);
            r.computedTo(context + n);
            boolean samples = context + n >= known; // a chunk that is not the prompt's last samples nothing
            step.samples(k, samples);
            step.preemptions(k, r.preemptions());
            if (overlap && samples) {
                r.placeholderAdded(); // the next batch is scheduled before this token is known (FutureMap)
            }
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= Math.max(0, Math.min(context + n, prompt) - Math.min(context, prompt));
            }
            if (samples && (r.mayFinishWithin(overlap ? r.placeholders() : 1) || r.finishAtNextOutput())) {
                step.mayFinish = true;
            }
            total += n;
        }
        endStepRecord(step, total);
        counters.stepScheduled(total, batch.prefillTokens());
        return total;
    }

    /** {@code get_new_batch_prefill} with {@code PrefillAdder}; true when it scheduled anything. */
    private boolean prefillBatch(long nowNanos) {
        // --enable-mixed-chunk: the running batch (before this batch's admissions) decodes in the prefill batch, and
        // its tokens come off the prefill budgets first (PrefillAdder's mixed_with_decode_tokens)
        int decoding = config.enableMixedChunk() ? running.size() : 0;
        if (!prefillRequests(nowNanos, decoding)) {
            return false;
        }
        if (decoding > 0) {
            mixDecodes(decoding);
        }
        return true;
    }

    /**
     * {@code mix_with_running}: the first {@code decoding} running requests decode one token each in the prefill
     * batch, if the pages their tokens need are free (SGLang relies on its reservation here; servesim leaves them to a
     * later decode batch otherwise).
     */
    private void mixDecodes(int decoding) {
        int need = 0;
        for (int i = 0; i < decoding; i++) {
            Sequence r = running.get(i);
            if (r.numComputedTokens() + 1 > r.table().numBlocks() * page()) {
                need++;
            }
        }
        if (pool.freeBlocks() < need) {
            return;
        }
        for (int i = 0; i < decoding; i++) {
            Sequence r = running.get(i);
            if (settings.prefixCaching()) {
                r.ensureHashes(page());
            }
            if (!kv.allocateSlots(r.table(), r.numComputedTokens(), 1, r.numTokens(), settings.maxModelLen())) {
                throw new IllegalStateException(
                        "SGLang mixed decode of request " + r.request().id() + " found no page");
            }
            add(r, 1, false);
        }
    }

    /** {@code get_new_batch_prefill}'s requests; true when it scheduled any. */
    private boolean prefillRequests(long nowNanos, int decoding) {
        long reserved = 0;
        for (int i = 0, n = running.size(); i < n; i++) {
            Sequence r = running.get(i);
            reserved += (long) Math.ceil(clippedNew(r) * newTokenRatio);
        }
        long remTotal = (long) pool.freeBlocks() * page() - reserved;
        long remInput = (long) config.maxPrefillTokens() - decoding;
        int chunkSize = config.chunkTokens();
        long remChunk = chunkSize > 0 ? (long) chunkSize - decoding : Long.MAX_VALUE;
        if (chunked != null) {
            // the chunked request continues first
            Sequence r = chunked;
            int rest = r.numTokens() - r.numComputedTokens();
            int n = (int) Math.min(rest, remChunk);
            if (n < rest) {
                n = n / page() * page();
            }
            if (n > 0 && allocate(r, n, false, nowNanos)) {
                add(r, n, false);
                remTotal -= n;
                remInput -= n;
                remChunk -= n;
                if (n == rest) {
                    chunked = null; // its last chunk: it joins the running batch when this step ends
                    joinRunning(r);
                }
            }
            if (chunked != null) {
                return latest.count > 0; // still chunking: one chunked request at a time
            }
        }
        if (running.size() + batchPrefills >= maxRunning) {
            return latest.count > 0;
        }
        int admitted = 0;
        for (int i = 0; i < waiting.size() && running.size() < maxRunning; i++) {
            Sequence r = waiting.get(i);
            if (r.loaded() && r.loadedBlocks() * page() >= r.numTokens() && r.remainingOutputTokens() > 1) {
                // the whole prompt's KV landed with the first token the prefill worker sampled: SGLang's decode
                // server streams that token at once (a prebuilt extend batch runs no forward) and the request joins
                // the running batch, whose next decode computes it (process_prebuilt)
                if (r.awaitingFirstToken()) {
                    pendingPromptTokens -= r.promptLength();
                }
                admitOverLanded(r, r.numTokens(), nowNanos);
                counters.tokenSampled();
                r.tokenSampled(nowNanos);
                waiting.remove(i--);
                running.add(r);
                continue;
            }
            if (r.loaded() && r.numTokens() - Math.min(r.loadedBlocks() * page(), r.numTokens() - 1) <= remChunk) {
                // a P/D decode request whose KV landed only in part (its prefill worker failed mid-transfer), or that
                // wants no token beyond the first, joins the running batch computing the rest of its prompt
                int tokens = admitLanded(r, nowNanos);
                waiting.remove(i--);
                add(r, tokens, true);
                admitted++;
                running.add(r);
                remInput -= tokens;
                remChunk -= tokens;
            }
        }
        orderWaiting();
        for (int k = 0, n = order.size(); k < n; k++) {
            if (running.size() + (chunked == null ? 0 : 1) + batchPrefills >= maxRunning) {
                // admitted requests join the running list at once, so it counts them
                break;
            }
            Sequence r = order.get(k);
            if (r.loaded()) {
                continue; // joined above, or waits for a running slot
            }
            int devicePages = prefixHit(r);
            if (r.awaitingRemotePrefill() && connector != null) {
                int remote = connector.matchExternal(r, devicePages, (r.numTokens() + page() - 1) / page());
                if (remote > 0) {
                    long need = r.numTokens() - (long) devicePages * page() + clippedNew(r);
                    if (need >= remTotal && !(running.isEmpty() && admitted == 0)) {
                        break; // DecodePreallocQueue: not enough room for its prompt and future tokens yet
                    }
                    r.lookedUp((devicePages + remote) * page());
                    if (!kv.allocateForLoad(r.table(), hits, remote)) {
                        break;
                    }
                    waiting.remove(r);
                    loading.add(r);
                    connector.startLoad(r, devicePages); // the transfer (no batch tokens, no running slot)
                    remTotal -= need;
                    continue;
                }
            }
            int prefix = devicePages * page();
            int extend = r.numTokens() - prefix;
            long total = extend + (long) clippedNew(r);
            if (total >= remTotal && !(running.isEmpty() && admitted == 0 && total <= remTotal)) {
                // NO_TOKEN: the batch is full. (A request that fills an idle pool exactly is let in: SGLang would wait
                // for it forever.) The host-hit tokens count here: they need device pages too.
                break;
            }
            int hostPages = hostHit(r, devicePages);
            extend -= hostPages * page(); // init_load_back: loaded, not computed
            if (extend > remInput && admitted > 0) {
                break;
            }
            int tokens = extend;
            boolean truncated = extend > remChunk;
            if (truncated) {
                tokens = (int) (remChunk / page() * page());
                if (tokens <= 0) {
                    break;
                }
            }
            pendingHostPages = hostPages;
            if (!allocate(r, tokens, true, nowNanos)) {
                break;
            }
            waiting.remove(r);
            add(r, tokens, true);
            admitted++;
            if (truncated) {
                chunked = r;
                break; // the chunk budget is spent
            }
            joinRunning(r);
            remTotal -= total;
            remInput -= extend;
            remChunk -= extend;
        }
        return latest.count > 0;
    }

    /** The waiting queue in {@code schedule_policy} order, into {@link #order}. */
    private void orderWaiting() {
        order.clear();
        order.addAll(waiting);
        switch (config.schedulePolicy()) {
            case FCFS -> {}
            case LPM -> {
                if (order.size() <= LPM_FALLBACK_QUEUE && settings.prefixCaching()) {
                    // longest cached prefix first (a stable sort); in-batch prefix deduplication: a request with at
                    // most 32 cached tokens whose first 32 tokens an earlier waiting request shares goes last, so
                    // only one of them fills the cache first (IN_BATCH_PREFIX_CACHING_* = 32)
                    int n = order.size();
                    int[] key = new int[n];
                    Integer[] idx = new Integer[n];
                    int dedupPages = (IN_BATCH_PREFIX_TOKENS + page() - 1) / page();
                    it.unimi.dsi.fastutil.longs.LongOpenHashSet seen =
                            new it.unimi.dsi.fastutil.longs.LongOpenHashSet();
                    for (int i = 0; i < n; i++) {
                        Sequence r = order.get(i);
                        int hitTokens = prefixHit(r) * page();
                        key[i] = -hitTokens;
                        if (hitTokens <= IN_BATCH_PREFIX_TOKENS && r.table().numHashes() >= dedupPages) {
                            long prefix = r.table().hash(dedupPages - 1);
                            if (!seen.add(prefix)) {
                                key[i] = 1; // temporarily deprioritised
                            }
                        }
                        idx[i] = i;
                    }
                    java.util.Arrays.sort(idx, (a, b) -> Integer.compare(key[a], key[b]));
                    ObjectArrayList<Sequence> sorted = new ObjectArrayList<>(n);
                    for (Integer i : idx) {
                        sorted.add(order.get(i));
                    }
                    order.clear();
                    order.addAll(sorted);
                }
            }
            case DFS_WEIGHT -> {
                if (settings.prefixCaching() && order.size() > 1) {
                    dfsWeight();
                }
            }
            case LOF -> order.sort((a, b) -> Integer.compare(b.maxTokens(), a.maxTokens()));
            case RANDOM -> {
                for (int i = order.size() - 1; i > 0; i--) {
                    int j = rng.nextInt(i + 1);
                    Sequence t = order.get(i);
                    order.set(i, order.get(j));
                    order.set(j, t);
                }
            }
        }
    }

    /**
     * {@code dfs-weight} ({@code schedule_policy.py} {@code _sort_by_dfs_weight}, {@code _calc_weight}, {@code
     * _get_dfs_priority}): each waiting request hangs at the radix-tree node where its cached prefix ends (the root
     * without a hit); a node weighs the waiting requests in its subtree; the queue is rebuilt by a post-order walk
     * from the root that visits heavier children first and emits a node's own requests after its subtrees (so
     * requests without a hit come last). Nodes are the requests' cached page chains: a node branches where their
     * page hashes differ. Children of equal weight keep the order of their first waiting request (SGLang keeps the
     * tree's child insertion order, which servesim does not track).
     */
    private void dfsWeight() {
        int n = order.size();
        if (dfsDepth.length < n) {
            dfsDepth = new int[n];
        }
        int[] members = new int[n];
        for (int i = 0; i < n; i++) {
            dfsDepth[i] = prefixHit(order.get(i));
            members[i] = i;
        }
        ObjectArrayList<Sequence> out = new ObjectArrayList<>(n);
        dfsVisit(members, 0, out);
        order.clear();
        order.addAll(out);
    }

    private int[] dfsDepth = new int[16];

    /** Emits the requests of one subtree: {@code members} share their first {@code depth} cached pages. */
    private void dfsVisit(int[] members, int depth, ObjectArrayList<Sequence> out) {
        if (members.length == 1) {
            out.add(order.get(members[0]));
            return;
        }
        int minDepth = Integer.MAX_VALUE;
        for (int m : members) {
            minDepth = Math.min(minDepth, dfsDepth[m]);
        }
        // the node's end: the deepest page count all members share (chained page hashes: equal at t, equal below t)
        int lo = depth;
        int hi = minDepth;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (sharePage(members, mid - 1)) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        int end = lo;
        // children: members that go on past the node, grouped by their next page, in first-appearance order
        it.unimi.dsi.fastutil.longs.Long2IntLinkedOpenHashMap groupOf =
                new it.unimi.dsi.fastutil.longs.Long2IntLinkedOpenHashMap();
        ObjectArrayList<IntArrayList> groups = new ObjectArrayList<>();
        IntArrayList own = new IntArrayList();
        for (int m : members) {
            if (dfsDepth[m] == end) {
                own.add(m);
                continue;
            }
            long next = order.get(m).table().hash(end);
            int g = groupOf.getOrDefault(next, -1);
            if (g < 0) {
                g = groups.size();
                groupOf.put(next, g);
                groups.add(new IntArrayList());
            }
            groups.get(g).add(m);
        }
        groups.sort((a, b) -> Integer.compare(b.size(), a.size())); // heavier first (a stable sort)
        for (IntArrayList g : groups) {
            dfsVisit(g.toIntArray(), end + 1, out);
        }
        for (int i = 0; i < own.size(); i++) {
            out.add(order.get(own.getInt(i)));
        }
    }

    /** Whether every member's page {@code page} has the same hash. */
    private boolean sharePage(int[] members, int page) {
        long h = order.get(members[0]).table().hash(page);
        for (int i = 1; i < members.length; i++) {
            if (order.get(members[i]).table().hash(page) != h) {
                return false;
            }
        }
        return true;
    }

    /** {@code update_running_batch}: the memory check, retraction if needed, then one token per running request. */
    private void decodeBatch() {
        if (running.isEmpty()) {
            return;
        }
        int page = page();
        if ((long) pool.freeBlocks() < pagesNeeded()) {
            retract();
            if (pool.freeBlocks() < pagesNeeded() && heldByWaiting > 0) {
                releaseAllLanded();
            }
            if (pool.freeBlocks() < pagesNeeded() && (!loading.isEmpty() || pinnedForStore() > 0)) {
                // P/D transfers or HiCache write-throughs in flight hold the pages: the batch waits for one to land
                // (it wakes the rank)
                return;
            }
        } else {
            newTokenRatio = Math.max(newTokenRatio - decay, minRatio);
        }
        for (int i = 0, n = running.size(); i < n; i++) {
            Sequence r = running.get(i);
            if (settings.prefixCaching()) {
                r.ensureHashes(page);
            }
            if (!kv.allocateSlots(r.table(), r.numComputedTokens(), 1, r.numTokens(), settings.maxModelLen())) {
                throw new IllegalStateException("SGLang decode of request "
                        + r.request().id() + " found no free page after retraction (" + pool.freeBlocks() + " free)");
            }
            add(r, 1, false);
        }
    }

    /** Pages the running requests' next tokens need ({@code check_decode_mem}). */
    private int pagesNeeded() {
        int need = 0;
        for (int i = 0, n = running.size(); i < n; i++) {
            Sequence r = running.get(i);
            if (r.numComputedTokens() + 1 > r.table().numBlocks() * page()) {
                need++;
            }
        }
        return need;
    }

    /**
     * {@code retract_decode}: the request with the fewest generated tokens (ties: the longest prompt) goes first,
     * until {@value #RETRACT_DECODE_STEPS} tokens per remaining request are free; then the ratio is reset.
     */
    private void retract() {
        running.sort((a, b) -> a.numOutputTokens() != b.numOutputTokens()
                ? Integer.compare(b.numOutputTokens(), a.numOutputTokens())
                : Integer.compare(a.promptLength(), b.promptLength()));
        while (running.size() > 1
                && ((long) pool.freeBlocks() * page() < (long) running.size() * RETRACT_DECODE_STEPS
                        || pool.freeBlocks() < pagesNeeded())) {
            takeBack(running.remove(running.size() - 1));
        }
        if (pool.freeBlocks() < pagesNeeded() && chunked != null) {
            // one running request left and a chunked prefill holding the pages it needs: SGLang stops with "no space
            // left for only one request"; servesim takes the chunked request back too, so the run goes on
            Sequence c = chunked;
            chunked = null;
            takeBack(c);
        }
        running.sort((a, b) -> Integer.compare(a.request().id(), b.request().id()));
        long generated = 0;
        long maxNew = 0;
        for (int i = 0, n = running.size(); i < n; i++) {
            generated += running.get(i).numOutputTokens();
            maxNew += running.get(i).maxTokens();
        }
        newTokenRatio = Math.min(1.0, (generated + (double) RETRACT_DECODE_STEPS * running.size()) / maxNew);
    }

    /** A retracted request releases its KV (cached pages stay) and joins the end of the waiting queue. */
    private void takeBack(Sequence v) {
        if (v.awaitingFirstToken()) {
            pendingPromptTokens += Math.min(v.numComputedTokens(), v.promptLength());
        }
        kv.free(v.table()); // its cached pages stay in the radix cache
        v.preempted();
        // overlap scheduler: a token in flight for it is dropped when its batch's results come back
        // (process_batch_result_decode skips a request that is_retracted); it recomputes from what it has
        v.placeholdersDropped();
        waiting.add(v); // the end of the queue (vLLM prepends)
        counters.preempted();
        retractions++;
        retractedLastStep = true;
    }

    /**
     * Allocates {@code tokens} more tokens of {@code r} (with its prefix pages on admission, and the {@link
     * #pendingHostPages} HiCache loads back after them); false if short.
     */
    private boolean allocate(Sequence r, int tokens, boolean admission, long nowNanos) {
        if (!admission) {
            return kv.allocateSlots(r.table(), r.numComputedTokens(), tokens, r.numTokens(), settings.maxModelLen());
        }
        int hit = prefixHit(r);
        int host = pendingHostPages;
        pendingHostPages = 0;
        int computed = (hit + host) * page();
        r.lookedUp(computed);
        if (host > 0) {
            // init_load_back: device pages for the host-hit run (evicting as needed), then the request's new tokens
            if (!kv.allocateForLoad(r.table(), hits, host)) {
                return false;
            }
            if (!kv.allocateSlots(r.table(), computed, tokens, r.numTokens(), settings.maxModelLen())) {
                kv.free(r.table()); // nothing was loaded: the pages go back uncached
                return false;
            }
            kv.cacheLoaded(r.table(), hit + host);
            stepLoadBlocks += host;
        } else if (!kv.allocateSlots(r.table(), 0, hits, tokens, r.numTokens(), settings.maxModelLen())) {
            return false;
        }
        int g2Tokens = host * page();
        countHits();
        boolean first = r.admitted(nowNanos, computed, g2Tokens, 0);
        counters.admitted(r.numTokens(), computed);
        if (first) {
            counters.firstAdmission(r.promptLength(), computed, g2Tokens, 0);
        }
        if (r.awaitingFirstToken()) {
            pendingPromptTokens -= Math.min(computed, r.promptLength());
        }
        pendingFirst = first;
        return true;
    }

    /** Whether the latest {@link #allocate} on admission was the request's first admission. */
    private boolean pendingFirst;

    /**
     * Admits a P/D decode request whose prompt KV landed: its pages count as computed up to its last prompt token,
     * which this batch computes (as vLLM's decode side does; SGLang's decode server gets the first token with the KV).
     *
     * @return tokens it computes in this batch
     */
    private int admitLanded(Sequence r, long nowNanos) {
        int computed = Math.min(r.loadedBlocks() * page(), r.numTokens() - 1);
        int tokens = r.numTokens() - computed;
        if (r.awaitingFirstToken()) {
            pendingPromptTokens -= Math.min(computed, r.promptLength());
        }
        pendingFirst = admitOverLanded(r, computed, nowNanos);
        return tokens;
    }

    /** Pages of P/D prefills held for their decode worker, and of those whose token is still in flight. */
    @Override
    public long heldForHandoffs() {
        long pages = heldForHandoffs;
        for (int i = 0, n = prefilled.size(); i < n; i++) {
            pages += prefilled.get(i).table().numBlocks();
        }
        return pages;
    }

    /** The prompt KV of P/D decode request {@code s} landed: it waits at the head of the queue to join the batch. */
    @Override
    void requeueLanded(Sequence s) {
        waiting.add(0, s);
    }

    /**
     * A request whose prompt is computed joins the running batch, except a P/D prefill: SGLang's prefill server runs
     * no decode batches (its requests go from the prefill batch to the KV sender), so it waits for its one token
     * apart.
     */
    private void joinRunning(Sequence r) {
        if (r.prefillOnly()) {
            prefilled.add(r);
            batchPrefills++; // it still counts against max_running_requests in this batch (can_run_list)
        } else {
            running.add(r);
        }
    }

    /** P/D prefills that finished their prompt in the batch being formed. */
    private int batchPrefills;

    /** P/D prefills whose batch has run, waiting for their token (then they hold their pages until read). */
    private final ObjectArrayList<Sequence> prefilled = new ObjectArrayList<>();

    /**
     * P/D decode requests whose KV landed but that wait for a running slot give their pages back (cached, so they hit
     * them again unless evicted) when the running requests need them: they recompute what they lose, as vLLM's decode
     * side does.
     */
    private void releaseAllLanded() {
        for (int i = 0; i < waiting.size(); i++) {
            Sequence w = waiting.get(i);
            if (w.loaded()) {
                releaseLanded(w);
            }
        }
    }

    /** Per page (block id): how many requests hit it under its current hash (HiCache's {@code hit_count}). */
    private int[] hitCount = new int[0];

    private long[] hitCountHash = new long[0];

    /**
     * {@code write_through_selective}: the pages just reused count a hit each ({@code _inc_hit_count} when a request
     * inserts them again); one whose count reaches 2 ({@code write_through_threshold}) is backed up to the host.
     */
    private void countHits() {
        HostOffload host = hiCache();
        if (host == null
                || config.hicacheWritePolicy() != io.servesim.config.SglangConfig.WritePolicy.WRITE_THROUGH_SELECTIVE) {
            return;
        }
        for (int i = 0, n = hits.size(); i < n; i++) {
            int b = hits.getInt(i);
            if (b >= hitCount.length) {
                int grown = Math.max(b + 1, hitCount.length * 2);
                hitCount = java.util.Arrays.copyOf(hitCount, grown);
                hitCountHash = java.util.Arrays.copyOf(hitCountHash, grown);
            }
            long h = pool.blockHash(b);
            if (hitCountHash[b] != h) {
                hitCountHash[b] = h;
                hitCount[b] = 1; // its first insertion
            }
            if (++hitCount[b] == SELECTIVE_THRESHOLD) {
                host.storeHit(b, h);
            }
        }
    }

    /** HiCache's {@code write_through_threshold} under {@code write_through_selective}. */
    static final int SELECTIVE_THRESHOLD = 2;

    /** Host pages the next admission loads back ({@link #hostHit}). */
    private int pendingHostPages;

    /** This rank's HiCache host tier, or null. */
    private HostOffload hiCache() {
        return connector instanceof TieredConnector t ? t.offload() : null;
    }

    /**
     * HiCache's {@code match_prefix} past the device hit: ready host pages that continue the prompt (less its last
     * token), touched as most recent; loaded back only from {@code load_back_threshold} (10) tokens on.
     */
    private int hostHit(Sequence r, int devicePages) {
        HostOffload g2 = hiCache();
        if (g2 == null || !settings.prefixCaching()) {
            return 0;
        }
        int maxPages = Math.min((r.numTokens() - 1) / page(), r.table().numHashes());
        if (maxPages <= devicePages) {
            return 0;
        }
        int run = g2.readyRun(r.table().hashesView(), devicePages, maxPages);
        return run * page() >= LOAD_BACK_THRESHOLD ? run : 0;
    }

    @Override
    long inStepLoadNanos() {
        return inStepLoadNanos;
    }

    private void add(Sequence r, int tokens, boolean admission) {
        latest.add(r, tokens, admission && pendingFirst, false);
    }

    /**
     * {@code process_batch_result}: the oldest batch in flight. With the overlap scheduler ({@code
     * event_loop_overlap}) this runs after the next batch was scheduled and launched, so that batch already holds a
     * decode slot for every request this one finishes (their extra token is dropped: {@code enable_overlap and
     * req.finished()}) and for every request it retracted since (dropped too: {@code is_retracted}).
     */
    @Override
    int appendOutputs(long nowNanos, ObjectArrayList<Sequence> finishedOut) {
        int finishedCount = 0;
        ScheduledStep step = oldestStep();
        boolean overlap = settings.asyncScheduling();
        for (int k = 0; k < step.count; k++) {
            Sequence r = step.seq(k);
            if (!step.samples(k) || r.finished() || r.preemptions() != step.preemptions(k)) {
                continue; // a chunk that is not the prompt's last, a finished request's extra token, a retracted one
            }
            counters.tokenSampled();
            long gap = r.tokenSampled(nowNanos);
            if (gap >= 0) {
                recordGap(gap);
            }
            if (overlap) {
                r.placeholderFilled();
            }
            if (settings.prefixCaching()) {
                r.ensureHashes(page());
                kv.cacheBlocks(r.table(), r.numComputedTokens() - r.placeholders());
            }
            if (r.reachedTarget() || r.finishAtNextOutput()) {
                r.finish();
                if (r.prefillOnly()) {
                    heldForHandoffs += r.table().numBlocks(); // held until the decode side has read them
                } else {
                    kv.free(r.table()); // cache_finished_req: its pages stay cached
                }
                if (r.prefillOnly()) {
                    prefilled.remove(r);
                } else {
                    running.remove(r);
                }
                finishedOut.add(r);
                finishedCount++;
            }
        }
        flushGaps();
        recycle(step);
        if (connector != null) {
            // HiCache write-through backs a node up when it is inserted (cache_unfinished_req / cache_finished_req,
            // here): the next batch's start sends the copies
            connector.afterSchedule(kv);
        }
        return finishedCount;
    }

    @Override
    String describeHead() {
        Sequence h = waitingHead();
        return h == null ? "none" : "tokens=" + h.numTokens() + " computed=" + h.numComputedTokens();
    }

    @Override
    void abandon(ObjectArrayList<Sequence> out) {
        inFlight(out);
        waiting.clear();
        running.clear();
        loading.clear();
        prefilled.clear();
        heldByWaiting = 0;
        heldForHandoffs = 0;
        chunked = null;
        clearSteps();
        pendingPromptTokens = 0;
        if (connector != null) {
            connector.abortAll();
        }
    }
}
