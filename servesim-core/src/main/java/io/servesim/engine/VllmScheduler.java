package io.servesim.engine;

import io.servesim.kv.BlockTable;
import io.servesim.timing.StepBatch;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * One rank's vLLM v1 scheduler (FCFS policy, no speculative decoding, synchronous scheduling), following
 * {@code vllm/v1/core/sched/scheduler.py} {@code schedule()} and {@code update_from_output()}:
 *
 * <ol>
 *   <li><b>Running loop.</b> Running requests are served first, in admission order, from one token budget of
 *       {@code max_num_batched_tokens}: each gets {@code num_tokens - num_computed_tokens} (1 for a decode, the rest
 *       of the prompt for a prefill in progress), capped by {@code long_prefill_token_threshold} (if &gt; 0), the
 *       remaining budget and {@code max_model_len - 1 - num_computed}. A request given 0 tokens is skipped; the loop
 *       ends when the budget is spent, so a long prefill early in {@code running} can starve later decodes in that
 *       step, as in vLLM.
 *   <li><b>Preemption.</b> When blocks cannot be allocated, the <em>last</em> running request is preempted (LIFO):
 *       its blocks are freed (hashed ones stay cached), its computed tokens reset to 0, and it is <em>prepended</em>
 *       to waiting. If the victim is the request itself, the running loop stops.
 *   <li><b>Waiting loop</b>, only if nothing was preempted this step: FCFS while {@code running < max_num_seqs} and
 *       budget remains; a request without computed tokens first looks up its cached prefix; if its blocks do not fit
 *       the loop stops (strict head-of-line blocking: later, smaller requests are not tried). With chunked prefill
 *       off, a prompt larger than the remaining budget also stops the loop.
 *   <li>Every scheduled request's {@code num_computed_tokens} advances at schedule time; blocks full with known
 *       tokens are cached then too (so later requests in the same step can hit them).
 *   <li><b>Outputs</b> at step end: a request whose computed tokens reached its known tokens samples one token
 *       (a non-final prefill chunk samples none); a request reaching its output length (or {@code max_model_len})
 *       finishes, leaves {@code running} and frees its blocks in reverse order.
 * </ol>
 *
 * <p>Two shortcuts of servesim's own leave every output unchanged (docs/architecture.md, "Plain decodes and decode
 * runs"): a running request whose next decodes cannot touch a block or finish skips the per-request checks ({@link
 * Sequence#decodeRunTo}), and a step of nothing but such decodes skips the rest ({@link #scheduleDecodeRun}).
 *
 * <p>Why one class of this size: vLLM's {@code schedule()} is one function whose running loop, preemption and waiting
 * loop share one token budget and one block pool; splitting them would scatter a rule across files that the
 * conformance oracle compares line by line with vLLM's.
 */
public final class VllmScheduler extends RankScheduler {
    private final ObjectArrayList<Sequence> running = new ObjectArrayList<>();
    private final java.util.ArrayDeque<Sequence> waiting = new java.util.ArrayDeque<>();
    private final IntArrayList hits = new IntArrayList();
    private final IntArrayList noHits = new IntArrayList();
    private long preemptions;
    private long pendingPromptTokens;
    private boolean preemptedLastStep;
    private boolean privateBlocks = true;
    // decode runs (see schedule): schedules left that are known to be plain decodes of the whole running list
    private int decodeRun;
    private long decodeRunSteps;
    private long advancedRunSteps; // of decodeRunSteps, those advanced by a driver's loop (advanceRun)
    private long plainDecodes;
    private boolean decodeRuns = true;
    // A decode run's steps touch no request (scheduleDecodeRun): they advance the run as a whole, and settleRun()
    // brings its requests up to date before anything else reads or changes them.
    private boolean runLive;
    private Sequence[] runRequests = new Sequence[0]; // the running list when the run began (in flight steps read it)
    private int[] runContexts = new int[0]; // their computed tokens then
    private int runSize;
    private long runContextSum;
    private int runSteps; // steps of this run scheduled so far
    private int unsettledSteps; // of those, not applied to its requests yet
    private int unsettledOutputs; // outputs of its steps applied to the run, not to its requests yet
    private long runLastTokenNanos; // the latest of those outputs
    private boolean runOutputsEven; // every request of the run sampled its latest token at runLastTokenNanos
    private int runStepsInFlight; // steps of any run whose outputs are still to come

    /** {@link #privateBlocksWithEvents}. */
    private boolean privateBlocksWithEvents;

    /** Creates a scheduler with its own KV pool. */
    public VllmScheduler(SchedulerSettings settings, SchedulerCounters counters) {
        super(settings, counters);
    }

    /** Requests waiting (new, preempted). */
    @Override
    public int numWaiting() {
        return waiting.size();
    }

    /** Requests running. */
    @Override
    public int numRunning() {
        return running.size();
    }

    /** Whether any request is waiting or running (requests loading from G2 wake the rank when they land). */
    @Override
    public boolean hasWork() {
        return !running.isEmpty() || !waiting.isEmpty();
    }

    /** A one-line description of the waiting head, for diagnostics. */
    @Override
    String describeHead() {
        Sequence h = waiting.peekFirst();
        if (h == null) {
            return "none";
        }
        return "tokens=" + h.numTokens() + " computed=" + h.numComputedTokens() + " blocks="
                + h.table().numBlocks() + " loaded=" + h.loaded() + " hashes="
                + h.table().numHashes();
    }

    /** Adds every request this rank holds (running, then copying, then waiting) to {@code out}, leaving them. */
    @Override
    public void inFlight(ObjectArrayList<Sequence> out) {
        settleRun();
        out.addAll(running);
        out.addAll(loading);
        out.addAll(waiting);
    }

    /**
     * The rank failed: every request it holds (running in admission order, then copying, then waiting in queue
     * order) is moved to {@code out}, and the rank forgets them. Its KV pool is gone with it, so nothing is freed.
     */
    @Override
    void abandon(ObjectArrayList<Sequence> out) {
        settleRun();
        runLive = false;
        runStepsInFlight = 0; // its steps are forgotten below
        forgetRunRequests();
        out.addAll(running);
        out.addAll(loading);
        out.addAll(waiting);
        running.clear();
        loading.clear();
        waiting.clear();
        clearSteps();
        decodeRun = 0;
        heldByWaiting = 0;
        heldForHandoffs = 0;
        pendingPromptTokens = 0;
        if (connector != null) {
            connector.abortAll();
        }
    }

    /** Its copies landed: it waits at the head of the queue, holding its blocks, to be scheduled. */
    @Override
    void requeueLanded(Sequence s) {
        waiting.addFirst(s);
    }

    /** The running request at position i (admission order). */
    @Override
    public Sequence running(int i) {
        settleRun();
        return running.get(i);
    }

    /** The waiting request at the head of the queue, or null. */
    @Override
    public Sequence waitingHead() {
        return waiting.isEmpty() ? null : waiting.peekFirst();
    }

    /** Preemptions on this rank so far. */
    @Override
    public long preemptions() {
        return preemptions;
    }

    /** Whether the latest step preempted. */
    @Override
    public boolean preemptedLastStep() {
        return preemptedLastStep;
    }

    /**
     * Indexes every cached block, also those only their own request could look up ({@link BlockTable#markPrivate}
     * is then never used); results are the same either way, which tests check by comparing the two.
     */
    @Override
    public void indexEveryBlock() {
        privateBlocks = false;
    }

    /**
     * Lets requests keep private blocks even when this rank's pool publishes KV events to a router. Only safe when
     * every request is routed once, on arrival (no worker fails, so nothing is re-routed): the router looks up only
     * arriving prompts' hashes, and a private block's hash belongs to a prompt that was routed before the block
     * existed; a preempted request still publishes its blocks (and their events) before it looks them up.
     */
    @Override
    public void privateBlocksWithEvents() {
        privateBlocksWithEvents = true;
    }

    /**
     * Runs this rank's KV cache as vLLM's hybrid one, with a sliding-window group of {@code windowTokens}
     * ({@link io.servesim.kv.KvCacheManager#slidingWindowGroup}; the sliding-window group is vLLM's group 0, as for
     * gpt-oss, whose first layer is a sliding-window one). Decode runs end before a block leaves the window
     * ({@link io.servesim.kv.KvCacheManager#decodeRunBound}).
     */
    public void hybridKv(int windowTokens) {
        kv.slidingWindowGroup(windowTokens, true, settings.maxNumBatchedTokens(), settings.maxModelLen());
    }

    /** Appends a new request to the waiting queue. */
    @Override
    public void addRequest(Sequence s) {
        if (privateBlocks
                && settings.prefixCaching()
                && !kv.hybrid()
                && connector == null
                && (!pool.publishesEvents() || privateBlocksWithEvents)
                && s.table().numBlocks() == 0) {
            // no G2 store or KV event needs these blocks indexed (BlockTable.markPrivate, markPrivateFrom)
            if (s.request().blocksUnique()) {
                s.table().markPrivate();
            } else {
                int from = s.request().privateFromBlock(settings.blockSize());
                if (from >= 0) {
                    s.table().markPrivateFrom(from);
                }
            }
        }
        waiting.addLast(s);
        pendingPromptTokens += s.promptLength();
    }

    /** Brings the live decode run's requests up to date ({@link #settleRun}). */
    @Override
    void settle() {
        settleRun();
    }

    /**
     * vLLM's {@code Scheduler.finish_requests(request_id, RequestStatus.FINISHED_ABORTED)} for one request, as the
     * engine core runs it when its client disconnects (the API server's {@code AsyncLLM.abort}, processed from the
     * engine core's input queue before its next {@code schedule()}): the request leaves {@code running} or {@code
     * waiting}, its blocks are freed ({@code _free_request}: at once, no connector delays them here), and it is
     * finished, so {@code update_from_output} drops the outputs of a step in flight that included it (the request
     * is no longer in {@code self.requests}). A decode run it belonged to ends: the run's requests are brought up to
     * date and the next step takes the full path.
     */
    @Override
    void abort(Sequence s) {
        settleRun();
        if (runLive) {
            endRun();
        }
        decodeRun = 0;
        if (s.awaitingFirstToken()) {
            // its prompt no longer waits to be computed (the same share the other paths count: pendingPromptTokens)
            pendingPromptTokens -= s.promptLength() - Math.min(s.numComputedTokens(), s.promptLength());
        }
        if (loading.contains(s)) {
            // WAITING_FOR_REMOTE_KVS: finish_requests delays freeing its blocks until its receive finishes
            // (delay_free_blocks); they are freed when the copy lands (RankScheduler.copyLanded)
            s.finish();
            return;
        }
        if (s.running()) {
            running.remove(s);
        } else {
            waiting.remove(s);
            if (s.loaded()) {
                heldByWaiting -= s.loadedBlocks(); // its copies had landed: it held their blocks in waiting
            }
        }
        kv.free(s.table());
        s.finish();
    }

    /**
     * Prompt tokens not yet computed, summed over this rank's requests that have not produced their first token
     * (Dynamo's "active prefill tokens").
     */
    @Override
    public long pendingPromptTokens() {
        return pendingPromptTokens;
    }

    /**
     * Runs {@code schedule()}: fills {@code batch} with this step's work and advances computed tokens.
     *
     * @param nowNanos the step's start time (recorded as first-scheduled time)
     * @param batch receives the step composition for the timing model
     * @return tokens scheduled (0 means nothing could run)
     */
    @Override
    public int schedule(long nowNanos, StepBatch batch) {
        if (decodeRun > 0 && waiting.isEmpty() && !running.isEmpty()) {
            // (a rank with nothing at all, stepped by a synchronous driver, takes the full path: it schedules nothing)
            decodeRun--;
            return scheduleDecodeRun(batch);
        }
        decodeRun = 0;
        if (runLive) {
            endRun();
        }
        final int blockSize = settings.blockSize();
        final int threshold = settings.longPrefillTokenThreshold();
        final int maxModelLen = settings.maxModelLen();
        int budget = settings.maxNumBatchedTokens();
        final boolean async = settings.asyncScheduling();
        ScheduledStep step = beginStepRecord();
        boolean preempted = false;
        if (connector != null && kv.storesQueued()) {
            connector.beforeSchedule(kv);
        }

        // A. Running loop.
        int i = 0;
        while (i < running.size() && budget > 0) {
            Sequence r = running.get(i);
            int computed = r.numComputedTokens();
            if (decodeRuns && computed < r.decodeRunTo() && r.numTokens() + r.placeholders() - computed == 1) {
                // a plain decode within its bound (Sequence.decodeRunTo): the checks below would find one token, a
                // held slot and nothing to cache or hash, so it skips them
                step.addPlainDecode(r);
                plainDecodes++;
                budget--;
                i++;
                continue;
            }
            if (async
                    && r.placeholders() > 0
                    && r.numComputedTokens() + 2 - r.placeholders() >= r.promptLength() + r.maxTokens()) {
                // the step in flight samples its last token (max_tokens): no extra step (AsyncScheduler, R5)
                i++;
                continue;
            }
            int numNew = r.numTokens() + r.placeholders() - r.numComputedTokens();
            if (threshold > 0 && numNew > threshold) {
                numNew = threshold;
            }
            numNew = Math.min(numNew, budget);
            numNew = Math.min(numNew, maxModelLen - 1 - r.numComputedTokens());
            if (numNew <= 0) {
                i++;
                continue;
            }
            if (settings.prefixCaching()) {
                r.ensureHashes(blockSize);
            }
            boolean allocated;
            while (true) {
                allocated = kv.allocateSlots(r.table(), r.numComputedTokens(), numNew, r.numTokens(), maxModelLen);
                if (allocated) {
                    break;
                }
                if (running.size() == 1 && heldByWaiting > 0) {
                    // the last running request would preempt itself while landed G2 loads behind it hold blocks:
                    // release those instead (their blocks stay cached), or the two wait on each other forever
                    releaseLandedLoads();
                    continue;
                }
                Sequence victim = running.remove(running.size() - 1);
                preempt(victim);
                preempted = true;
                if (victim == r) {
                    break;
                }
            }
            if (!allocated) {
                break;
            }
            step.add(r, numNew, false, false);
            budget -= numNew;
            i++;
        }

        // B. Waiting loop: no admission in a step that preempted.
        if (!preempted) {
            budget = admitWaiting(nowNanos, budget, step);
            if (step.count == 0
                    && running.isEmpty()
                    && heldByWaiting > 0
                    && loading.isEmpty()
                    && pinnedForStore() == 0) {
                // Landed G2 loads waiting at the head hold blocks that none of them can complete, and nothing is
                // running or in flight to free more: release them (their blocks stay cached, so re-admission hits
                // them) and admit again. vLLM's pools are large enough that this never arises; tiny pools can.
                releaseLandedLoads();
                budget = admitWaiting(nowNanos, budget, step);
            }
        }

        // C. _update_after_schedule: computed tokens advance now, before the forward pass.
        batch.reset((long) pool.usableBlocks() * blockSize);
        int total = 0;
        // the decode run that may follow (see scheduleDecodeRun): every running request decodes in this step
        int run = !preempted && step.count == running.size() ? Integer.MAX_VALUE : 0;
        for (int k = 0; k < step.count; k++) {
            Sequence r = step.seq(k);
            if (step.plainDecode(k)) {
                int context = r.numComputedTokens();
                batch.addDecode(context);
                r.computedTo(context + 1);
                if (async) {
                    r.placeholderAdded();
                }
                total++;
                if (run > 0) {
                    run = Math.min(run, r.decodeRunTo() - (context + 1));
                }
                continue;
            }
            int n = step.tokens(k);
            int context = r.numComputedTokens();
            int prompt = r.promptLength();
            int known = r.numTokens() + r.placeholders();
            boolean decode = n == 1 && context >= prompt && context == known - 1;
            batch.add(n, context, decode);
            r.computedTo(context + n);
            // a non-final prefill chunk samples no token (vLLM's is_prefill_chunk, fixed at schedule time)
            boolean samples = context + n >= known;
            step.samples(k, samples);
            if (async && samples) {
                r.placeholderAdded(); // AsyncScheduler._update_after_schedule
            }
            if (samples && r.mayFinishWithin(async ? r.placeholders() : 1)) {
                step.mayFinish = true; // its outputs may end a request (never run ahead: see EventQueue)
            }
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= Math.max(0, Math.min(context + n, prompt) - Math.min(context, prompt));
            }
            total += n;
            int limit = decode ? r.decodeLimit(kv.decodeRunBound(r.table()), maxModelLen) : -1;
            r.decodeRunTo(limit);
            if (run > 0) {
                run = decode ? Math.min(run, limit - (context + n)) : 0;
            }
        }
        decodeRun = decodeRuns ? Math.max(0, run) : 0;
        endStepRecord(step, total);
        if (connector != null && kv.hasNewlyCached()) {
            connector.afterSchedule(kv);
        }
        preemptedLastStep = preempted;
        counters.stepScheduled(total, batch.prefillTokens());
        return total;
    }

    /**
     * One step of a decode run: every running request decodes one token, and nothing else can happen — no block to
     * allocate or cache, no hash to extend, no request able to finish, nothing waiting (a KV connector still gets its
     * calls, as on the full path: stores queued by the step before go out first). The step that started the run
     * proved this for {@link #decodeRun} more steps (each request's bound: {@link Sequence#decodeRunTo}); an
     * arrival ends the run (the next schedule takes the full path). Exactly what {@code schedule()} does on such a
     * step — the same batch, record, placeholders and counters in the same order — without its per-request checks:
     * a lightly loaded rank spends most of its steps here (servesim's own shortcut, not a vLLM rule).
     */
    private int scheduleDecodeRun(StepBatch batch) {
        ScheduledStep step = beginStepRecord();
        if (connector != null && kv.storesQueued()) {
            connector.beforeSchedule(kv); // G2 stores of the step before (the offloading connector defers them)
        }
        batch.reset((long) pool.usableBlocks() * settings.blockSize());
        if (!runLive) {
            beginRun();
        }
        // every request of the run decodes one token on its context: computed tokens (and async placeholders) advance
        // for the run as a whole, the batch gets the run's contexts, the record the run's requests
        int n = runSize;
        batch.addDecodeRun(runContexts, n, runSteps, runContextSum + (long) n * runSteps);
        runSteps++;
        unsettledSteps++;
        if (n > 0) {
            step.planRun(runRequests, n);
            runStepsInFlight++; // (a step without tokens is not in flight: endStepRecord)
        }
        step.decodeRun = true;
        decodeRunSteps++;
        plainDecodes += n;
        endStepRecord(step, n);
        if (connector != null && kv.hasNewlyCached()) {
            connector.afterSchedule(kv);
        }
        preemptedLastStep = false;
        counters.stepScheduled(n, 0);
        return n;
    }

    /**
     * A driver may advance the live run without {@link #schedule} while it goes on ({@link #decodeRun} more steps),
     * nothing waits, no KV connector takes calls, and the one step in flight is a step of this run whose outputs are
     * even (every request's latest token came with the run's latest outputs): then a step is exactly {@link
     * #advanceRun}, and the record in flight stands for each next one (a run's records differ in nothing).
     */
    @Override
    @SuppressWarnings("ReferenceEquality") // a step of the live run holds the run's very array (ScheduledStep.planRun)
    int fusableRunSteps() {
        ScheduledStep inFlight = latest;
        if (decodeRun <= 0
                || !runLive
                || !runOutputsEven
                || connector != null
                || runSize == 0
                || runStepsInFlight != 1
                || !waiting.isEmpty()
                || running.isEmpty()
                || !inFlight.decodeRun
                || inFlight.run != runRequests
                || !onlyInFlight(inFlight)) {
            return 0;
        }
        return decodeRun;
    }

    @Override
    void fillRunBatch(StepBatch batch) {
        batch.reset((long) pool.usableBlocks() * settings.blockSize());
        batch.addDecodeRun(runContexts, runSize, runSteps, runContextSum + (long) runSize * runSteps);
    }

    /**
     * One step of the run without its record: {@link #scheduleDecodeRun}'s counting, then {@link
     * #appendDecodeRunOutputs}' even case for the step in flight (which stays in flight for the step scheduled).
     */
    @Override
    int advanceRun(long nowNanos) {
        int n = runSize;
        decodeRun--;
        runSteps++;
        unsettledSteps++;
        decodeRunSteps++;
        advancedRunSteps++;
        plainDecodes += n;
        counters.stepScheduled(n, 0);
        counters.tokensSampled(n);
        recordGaps(nowNanos - runLastTokenNanos, n);
        unsettledOutputs++;
        runLastTokenNanos = nowNanos;
        flushGaps();
        return n;
    }

    /** The run's first step: it takes the running list and its computed tokens (the list stays as is until it ends). */
    private void beginRun() {
        int n = running.size();
        if (runStepsInFlight > 0 || runRequests.length < n) {
            // a step of an earlier run still reads its array (or it is too small): a new one
            int cap = Math.max(n, runRequests.length);
            runRequests = new Sequence[cap];
            runContexts = new int[cap];
        } else if (runSize > n) {
            java.util.Arrays.fill(runRequests, n, runSize, null);
        }
        long sum = 0;
        for (int k = 0; k < n; k++) {
            Sequence r = running.get(k);
            int context = r.numComputedTokens();
            runRequests[k] = r;
            runContexts[k] = context;
            sum += context;
        }
        runSize = n;
        runContextSum = sum;
        runSteps = 0;
        unsettledSteps = 0;
        unsettledOutputs = 0;
        runOutputsEven = false;
        runLive = true;
    }

    /**
     * Applies what the run's steps and outputs did as a whole to each of its requests ({@link Sequence#catchUp}); the
     * run goes on. Every reader of a running request outside the scheduler goes through it ({@link #running}, {@link
     * #inFlight}); tests that hold requests themselves call it before reading them.
     */
    void settleRun() {
        if (unsettledSteps == 0 && unsettledOutputs == 0) {
            return;
        }
        final boolean async = settings.asyncScheduling();
        for (int k = 0; k < runSize; k++) {
            runRequests[k].catchUp(unsettledSteps, unsettledOutputs, runLastTokenNanos, async);
        }
        unsettledSteps = 0;
        unsettledOutputs = 0;
    }

    /** The run is over: its requests are brought up to date (steps of it in flight apply their outputs one by one). */
    private void endRun() {
        settleRun();
        runLive = false;
        if (runStepsInFlight == 0) {
            forgetRunRequests();
        }
    }

    /** Drops the references of a finished run (no step reads them any more), so its requests can be collected. */
    private void forgetRunRequests() {
        java.util.Arrays.fill(runRequests, 0, runSize, null);
        runSize = 0;
    }

    /** Plain decode entries scheduled so far (see {@link Sequence#decodeRunTo}), those of decode runs included. */
    long plainDecodes() {
        return plainDecodes;
    }

    /** Every step takes the full path (tests compare the two). */
    @Override
    public void noDecodeRuns() {
        decodeRuns = false;
    }

    /** Steps this rank scheduled as decode runs ({@link #scheduleDecodeRun}). */
    @Override
    public long decodeRunSteps() {
        return decodeRunSteps;
    }

    @Override
    public long advancedRunSteps() {
        return advancedRunSteps;
    }

    /**
     * Whether the step scheduled last was a decode-run step on a rank without a KV connector: nothing a load report
     * reads changed since the last one (with a connector, copies and pulls can pin blocks between steps).
     */
    @Override
    boolean latestWasDecodeRun() {
        return latest.decodeRun && connector == null;
    }

    /**
     * vLLM's full-sequence admission gate ({@code scheduler_reserve_full_isl}, on by default from v0.19.0): checked
     * inside {@code allocate_slots} before this step's own blocks, for every waiting request it admits (asynchronous
     * loads included), never for running ones. Its failure stops admission like any allocation failure.
     */
    private boolean wholeSequenceFits(Sequence r, IntArrayList admissionHits, int maxModelLen) {
        return !settings.reserveFullIsl()
                || kv.wholeSequenceFits(r.table(), admissionHits, Math.min(r.numTokens(), maxModelLen));
    }

    /** The waiting loop (FCFS, head-of-line blocking); returns the budget left. */
    private int admitWaiting(long nowNanos, int budgetIn, ScheduledStep step) {
        final int blockSize = settings.blockSize();
        final int threshold = settings.longPrefillTokenThreshold();
        final int maxModelLen = settings.maxModelLen();
        int budget = budgetIn;
        while (!waiting.isEmpty() && budget > 0) {
            if (running.size() >= settings.maxNumSeqs()) {
                break;
            }
            Sequence r = waiting.peekFirst();
            if (settings.prefixCaching()) {
                r.ensureHashes(blockSize);
            }
            int computed;
            int g2Tokens = 0;
            int remoteTokens = 0;
            IntArrayList admissionHits = hits;
            if (r.loaded()) {
                // back from a G2 load or KVCR pull: its blocks are held and cached; vLLM counts them as computed
                computed = Math.min(r.loadedBlocks() * blockSize, r.numTokens() - 1);
                g2Tokens = r.pendingG2Tokens();
                remoteTokens = r.pendingRemoteTokens();
                admissionHits = noHits;
            } else {
                int hitBlocks = kv.findPrefixHit(r.table(), r.numTokens(), hits);
                computed = hitBlocks * blockSize;
                boolean remotePrefill = r.awaitingRemotePrefill();
                if (connector != null && (settings.prefixCaching() || remotePrefill)) {
                    // vLLM's get_num_new_matched_tokens: KV beyond the local hit that can be loaded asynchronously
                    // (a P/D decode request: its whole prompt, the partial last block too; nixl_connector.py)
                    int maxHit = remotePrefill
                            ? (r.numTokens() + blockSize - 1) / blockSize
                            : Math.min(
                                    (r.numTokens() - 1) / blockSize, r.table().numHashes());
                    int external = connector.matchExternal(r, hitBlocks, maxHit);
                    if (external > 0) {
                        r.lookedUp(computed + external * blockSize);
                        if (!wholeSequenceFits(r, hits, maxModelLen)
                                || !kv.allocateForLoad(r.table(), hits, external)) {
                            break; // head-of-line blocking, as for any allocation failure
                        }
                        waiting.pollFirst();
                        loading.add(r);
                        connector.startLoad(r, hitBlocks); // update_state_after_alloc
                        continue; // async copies use no token budget and no running slot
                    }
                }
            }
            if (!r.loaded()) {
                r.lookedUp(computed); // vLLM's prefill_stats, set before the allocation is tried
            }
            int numNew = r.numTokens() - computed;
            if (threshold > 0 && numNew > threshold) {
                numNew = threshold;
            }
            if (!settings.chunkedPrefill() && numNew > budget) {
                break;
            }
            numNew = Math.min(numNew, budget);
            if (!wholeSequenceFits(r, admissionHits, maxModelLen)) {
                break;
            }
            if (!kv.allocateSlots(
                    r.table(), r.loaded() ? computed : 0, admissionHits, numNew, r.numTokens(), maxModelLen)) {
                break;
            }
            // a P/D decode request admitted over its pulled prompt: the prompt was prefilled (and counted) on its
            // prefill worker, so the engine totals do not count it again as a prefix hit
            boolean handedOff = r.loaded() && r.handoff() != null && remoteTokens > 0;
            if (r.loaded()) {
                heldByWaiting -= r.loadedBlocks();
                connector.loadConsumed(r);
                r.loadConsumed();
            }
            waiting.pollFirst();
            running.add(r);
            if (r.awaitingFirstToken()) {
                pendingPromptTokens -= Math.min(computed, r.promptLength());
            }
            if (!handedOff) {
                counters.admitted(r.numTokens(), computed);
            }
            boolean first = r.admitted(nowNanos, computed, g2Tokens, remoteTokens);
            if (first && !handedOff) {
                counters.firstAdmission(r.promptLength(), computed, g2Tokens, remoteTokens);
            }
            step.add(r, numNew, false, false);
            step.markFirst(first);
            budget -= numNew;
        }
        return budget;
    }

    /**
     * {@code update_from_output()} for a decode-run step: each request samples its token (every one was running and
     * decoding when scheduled, none can finish, and no block fills: {@link Sequence#decodeRunTo}).
     */
    @SuppressWarnings("ReferenceEquality") // a step of the live run holds the run's very array (ScheduledStep.planRun)
    private void appendDecodeRunOutputs(ScheduledStep step, long nowNanos, boolean async) {
        runStepsInFlight--;
        int n = step.count;
        if (runLive && step.run == runRequests && runOutputsEven) {
            // every request's gap is the time since the run's latest outputs: sampled for the run as a whole
            counters.tokensSampled(n);
            recordGaps(nowNanos - runLastTokenNanos, n);
            unsettledOutputs++;
            runLastTokenNanos = nowNanos;
        } else {
            // the run's first outputs (each request's latest token came at its own time), or a step of a run that
            // ended (its requests are up to date): one request at a time
            for (int k = 0; k < n; k++) {
                Sequence r = step.seq(k);
                if (!r.finished()) { // an aborted request's token is dropped
                    samplePlain(r, nowNanos, async);
                }
            }
            if (runLive && step.run == runRequests) {
                runOutputsEven = true;
                runLastTokenNanos = nowNanos;
            } else if (!runLive && runStepsInFlight == 0) {
                forgetRunRequests();
            }
        }
        flushGaps();
        recycle(step);
    }

    /**
     * A plain decode's output: it samples its token and nothing else happens (it cannot finish, fills no block, and
     * its first token has arrived: {@link Sequence#decodeRunTo}).
     */
    private void samplePlain(Sequence r, long nowNanos, boolean async) {
        counters.tokenSampled();
        long gap = r.tokenSampled(nowNanos);
        if (gap >= 0) {
            recordGap(gap);
        }
        if (async) {
            r.placeholderFilled();
        }
    }

    private void releaseLandedLoads() {
        for (Sequence w : waiting) {
            if (w.loaded()) {
                connector.loadReleased(w);
                w.loadReleased();
                kv.free(w.table());
            }
        }
        heldByWaiting = 0;
    }

    /**
     * Runs {@code update_from_output()} at the step's end: samples tokens, finishes requests.
     *
     * @param nowNanos the step's end time (token timestamps)
     * @param finishedOut receives the requests that finished, in schedule order
     */
    @Override
    int appendOutputs(long nowNanos, ObjectArrayList<Sequence> finishedOut) {
        int finishedCount = 0;
        ScheduledStep step = oldestStep();
        final boolean async = settings.asyncScheduling();
        if (step.decodeRun) {
            appendDecodeRunOutputs(step, nowNanos, async);
            return 0;
        }
        settleRun(); // the run's requests are read one by one below
        boolean finishedWaiting = false;
        // async: a run that began after this step was scheduled (its first step is in flight) starts with even outputs
        // if this step samples a token for each of its requests, now (see the end)
        boolean evenForRun =
                runLive && !runOutputsEven && runSteps == 1 && runStepsInFlight == 1 && step.count == runSize;
        for (int k = 0; k < step.count; k++) {
            Sequence r = step.seq(k);
            if (evenForRun && runRequests[k] != r) {
                evenForRun = false;
            }
            if (step.plainDecode(k)) {
                if (r.finished()) {
                    evenForRun = false; // aborted while its token was in flight: dropped
                    continue;
                }
                samplePlain(r, nowNanos, async);
                continue;
            }
            if (!step.samples(k) || r.finished()) {
                evenForRun = false;
                continue; // a non-final prefill chunk samples no token; a finished request's token is dropped
            }
            boolean wasRunning = r.running();
            counters.tokenSampled();
            if (r.awaitingFirstToken() && !wasRunning) {
                // preempted while its prefill's token was in flight (async, R8): it no longer waits for a prefill
                pendingPromptTokens -= r.promptLength() - Math.min(r.numComputedTokens(), r.promptLength());
            }
            long gap = r.tokenSampled(nowNanos);
            if (gap >= 0) {
                recordGap(gap);
            }
            if (async) {
                // AsyncScheduler._update_request_with_output: the placeholder is filled; a running request caches
                // the blocks its known tokens now fill (a preempted one does not)
                r.placeholderFilled();
                if (wasRunning && settings.prefixCaching()) {
                    r.ensureHashes(settings.blockSize());
                    kv.cacheBlocks(r.table(), r.numComputedTokens() - r.placeholders());
                }
            }
            if (r.reachedTarget()) {
                r.finish();
                if (r.prefillOnly()) {
                    heldForHandoffs += r.table().numBlocks(); // delayed free until the decode side has read them
                } else {
                    kv.free(r.table());
                }
                finishedOut.add(r);
                finishedCount++;
                finishedWaiting |= !wasRunning;
            }
        }
        flushGaps();
        if (finishedCount > 0) {
            int w = 0;
            for (int k = 0, n = running.size(); k < n; k++) {
                Sequence s = running.get(k);
                if (!s.finished()) {
                    running.set(w++, s);
                }
            }
            running.size(w);
            if (runLive) {
                endRun(); // the running list changed: a run that goes on takes it again (beginRun)
            }
            if (finishedWaiting) {
                waiting.removeIf(
                        Sequence::finished); // stopped while preempted (update_from_output's stopped_preempted_reqs)
            }
        } else if (evenForRun) {
            // every request of the run sampled its latest token now: the run's first outputs can be sampled for the
            // run as a whole (appendDecodeRunOutputs), and its next steps advanced in one loop (fusableRunSteps)
            runOutputsEven = true;
            runLastTokenNanos = nowNanos;
        }
        recycle(step);
        return finishedCount;
    }

    private void preempt(Sequence victim) {
        decodeRun = 0;
        if (victim.awaitingFirstToken()) {
            pendingPromptTokens += Math.min(victim.numComputedTokens(), victim.promptLength());
        }
        kv.publish(victim.table()); // it looks its own cached blocks up when admitted again
        kv.free(victim.table());
        victim.preempted();
        waiting.addFirst(victim);
        counters.preempted();
        preemptions++;
    }
}
