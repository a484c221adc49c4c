package io.servesim.engine;

import io.servesim.kv.BlockPool;
import io.servesim.kv.KvCacheManager;
import io.servesim.timing.StepBatch;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * One rank's scheduler, whatever the engine ({@code engine.kind}): its queues, its KV pool, one step's schedule and
 * the outputs of a step. {@link EngineRank}, the step drivers, the KV connectors and the run's observers see a rank
 * only through this, so an engine family is a subclass ({@link VllmScheduler} for vLLM v1) chosen by the engine
 * registry in the cluster.
 */
public abstract class RankScheduler {
    /** The rank's limits. */
    protected final SchedulerSettings settings;

    /** The rank's KV block pool. */
    protected final BlockPool pool;

    /** Request-level KV operations on {@link #pool}. */
    protected final KvCacheManager kv;

    /** The cluster's scheduler counters (this rank adds to them). */
    protected final SchedulerCounters counters;

    /** The KV connector (G2 host tier, KVCR, P/D transfers), or null. */
    protected KvConnector connector;

    /** Requests waiting for KV copies: they hold blocks and are not running. */
    protected final ObjectArrayList<Sequence> loading = new ObjectArrayList<>();

    /** Blocks held by waiting requests whose copies landed (not admitted yet). */
    protected long heldByWaiting;

    /** Blocks of finished P/D prefills held until their decode worker has read them (vLLM NIXL's delayed free). */
    protected long heldForHandoffs;

    /**
     * Steps scheduled whose outputs are not applied yet (two with an async or overlap loop), oldest first, linked
     * through {@link ScheduledStep#next}: the rank reaches its step records without a deque and its array in between
     * (at thousands of ranks each of those is a cache miss per step).
     */
    private ScheduledStep oldestInFlight;

    private ScheduledStep newestInFlight;
    /** Step records for reuse, linked through {@link ScheduledStep#next}. */
    private ScheduledStep spareSteps;

    /** The step scheduled last. */
    protected ScheduledStep latest = new ScheduledStep();

    /** Tokens of the step scheduled last. */
    protected int lastStepTokens;

    private long gapValue = -1;
    private long gapCount;

    /** A scheduler with its own KV pool of {@code settings.numGpuBlocks()} blocks. */
    protected RankScheduler(SchedulerSettings settings, SchedulerCounters counters) {
        this.settings = settings;
        this.pool = new BlockPool(settings.numGpuBlocks());
        this.kv = new KvCacheManager(pool, settings.blockSize(), settings.prefixCaching());
        this.counters = counters;
    }

    /** The settings. */
    public final SchedulerSettings settings() {
        return settings;
    }

    /** The rank's KV block pool. */
    public final BlockPool pool() {
        return pool;
    }

    /**
     * Records a token's inter-token gap (ns); most tokens of a step share one gap (the pass time), so runs of equal
     * gaps reach the counters as one entry ({@link #flushGaps}).
     */
    protected final void recordGap(long gap) {
        recordGaps(gap, 1);
    }

    /** {@code n} calls of {@link #recordGap}{@code (gap)}. */
    protected final void recordGaps(long gap, int n) {
        if (gap != gapValue) {
            counters.gaps(gapValue, gapCount);
            gapValue = gap;
            gapCount = 0;
        }
        gapCount += n;
    }

    /** Hands the current run of equal gaps to the counters (at the end of each step's outputs). */
    protected final void flushGaps() {
        counters.gaps(gapValue, gapCount);
        gapCount = 0;
    }

    /** Requests waiting (new, preempted or paused). */
    public abstract int numWaiting();

    /** Requests running. */
    public abstract int numRunning();

    /** Whether any request is waiting or running. */
    public abstract boolean hasWork();

    /** Requests waiting for KV copies (holding blocks, not running). */
    public int numLoading() {
        return loading.size();
    }

    /** The i-th request waiting for KV copies. */
    public Sequence loading(int i) {
        return loading.get(i);
    }

    /** G1 blocks held by waiting requests whose copies landed. */
    public long heldByWaiting() {
        return heldByWaiting;
    }

    /** Blocks of finished P/D prefills held until their decode worker has read them. */
    public long heldForHandoffs() {
        return heldForHandoffs;
    }

    /** Blocks of this rank held as the source of KVCR pulls in flight. */
    public int heldForPulls() {
        return connector == null ? 0 : connector.heldForPulls();
    }

    /** G1 blocks pinned by G2 stores in flight. */
    public int pinnedForStore() {
        return connector == null ? 0 : connector.pinnedForStore();
    }

    /** Adds every request this rank holds (running, then copying, then waiting) to {@code out}, leaving them. */
    public abstract void inFlight(ObjectArrayList<Sequence> out);

    /** The running request at position i. */
    public abstract Sequence running(int i);

    /** The waiting request at the head of the queue, or null. */
    public abstract Sequence waitingHead();

    /**
     * Whether the step just scheduled may finish a request when its outputs are applied (with tokens in flight, one
     * whose output length is reached once every token in flight for it has landed: an over-approximation).
     */
    public final boolean latestStepMayFinish() {
        return lastStepTokens > 0 && latest.mayFinish;
    }

    /**
     * Whether nothing a load report reads (queues, used blocks, pending prompt tokens) changed since the last report:
     * after a decode-run step of {@link VllmScheduler} on a rank without a KV connector.
     */
    boolean latestWasDecodeRun() {
        return false;
    }

    /** Number of requests scheduled in the latest step. */
    public final int scheduledCount() {
        return latest.count;
    }

    /** The i-th request scheduled in the latest step. */
    public final Sequence scheduled(int i) {
        return latest.seq(i);
    }

    /** Tokens given to the i-th scheduled request in the latest step. */
    public final int scheduledTokens(int i) {
        return latest.tokens(i);
    }

    /** Total tokens scheduled in the latest step. */
    public final int lastStepTokens() {
        return lastStepTokens;
    }

    /** Starts a step record: it becomes {@link #latest}. */
    protected final ScheduledStep beginStepRecord() {
        ScheduledStep step = spareSteps;
        if (step == null) {
            step = new ScheduledStep();
        } else {
            spareSteps = step.next;
            step.next = null;
        }
        latest = step;
        return step;
    }

    /** The step record is complete with {@code total} tokens: in flight until its outputs are applied, if any. */
    protected final void endStepRecord(ScheduledStep step, int total) {
        lastStepTokens = total;
        if (total > 0) {
            // its outputs come back with applyOutputs, in schedule order
            if (newestInFlight == null) {
                oldestInFlight = step;
            } else {
                newestInFlight.next = step;
            }
            newestInFlight = step;
        } else {
            step.decodeRun = false; // a spare record must not make the full path's next step look like a run
            step.next = spareSteps;
            spareSteps = step;
        }
    }

    /** The oldest step in flight, whose outputs are being applied. */
    protected final ScheduledStep oldestStep() {
        ScheduledStep step = oldestInFlight;
        if (step == null) {
            throw new IllegalStateException("outputs applied with no step in flight");
        }
        oldestInFlight = step.next;
        if (oldestInFlight == null) {
            newestInFlight = null;
        }
        step.next = null;
        return step;
    }

    /** Whether no step is in flight (every scheduled step's outputs have been applied). */
    protected final boolean nothingInFlight() {
        return oldestInFlight == null;
    }

    /** Whether {@code step} is the only step in flight. */
    protected final boolean onlyInFlight(ScheduledStep step) {
        return oldestInFlight == step && newestInFlight == step;
    }

    /**
     * How many more steps of a decode run a driver may advance without scheduling each through {@link #schedule}
     * ({@link #fillRunBatch}, {@link #advanceRun}); 0 (the default) when the scheduler has no such runs or is not in
     * one.
     */
    int fusableRunSteps() {
        return 0;
    }

    /** Fills {@code batch} with the decode run's next step, changing nothing else ({@link #fusableRunSteps} > 0). */
    void fillRunBatch(StepBatch batch) {
        throw new UnsupportedOperationException("no decode run to advance");
    }

    /**
     * Advances the decode run by one step: schedules its next step (the batch {@link #fillRunBatch} gave) and applies
     * the outputs of the step in flight at {@code nowNanos}; returns the tokens scheduled.
     */
    int advanceRun(long nowNanos) {
        throw new UnsupportedOperationException("no decode run to advance");
    }

    /** A step whose outputs were applied goes back for reuse. */
    protected final void recycle(ScheduledStep step) {
        step.clear();
        step.next = spareSteps;
        spareSteps = step;
    }

    /** Forgets every step (the rank failed). */
    protected final void clearSteps() {
        for (ScheduledStep step = oldestInFlight; step != null; ) {
            ScheduledStep next = step.next;
            step.next = null;
            step.clear();
            step = next;
        }
        oldestInFlight = null;
        newestInFlight = null;
        latest.clear();
    }

    /** Preemptions (or pauses) on this rank so far. */
    public abstract long preemptions();

    /** Whether the latest step preempted (or paused) a request. */
    public abstract boolean preemptedLastStep();

    /** Indexes every cached block, also private ones (tests compare both ways). */
    public abstract void indexEveryBlock();

    /**
     * Schedules every step through the engine's full path, never as a decode run ({@link VllmScheduler}); results are
     * the same either way, which tests check by comparing the two. Engines without decode runs ignore it.
     */
    public void noDecodeRuns() {}

    /** Steps this rank scheduled as decode runs (0 for engines without them). */
    public long decodeRunSteps() {
        return 0;
    }

    /** Of those, steps its driver advanced in one loop without scheduling each ({@link #advanceRun}). */
    public long advancedRunSteps() {
        return 0;
    }

    /** Lets requests keep private blocks when the pool publishes KV events (see {@link VllmScheduler}). */
    public abstract void privateBlocksWithEvents();

    /**
     * Whether the engine fails a prompt of this length at once, beyond the context limit every engine applies
     * (TRT-LLM without chunked context: a prompt longer than {@code max_num_tokens}).
     */
    public boolean rejectsPrompt(int promptLength) {
        return false;
    }

    /** Appends a new request. */
    public abstract void addRequest(Sequence s);

    /** Brings every request this rank holds up to date, so its fields can be read (a decode run defers them). */
    void settle() {}

    /**
     * Aborts {@code s}, which is waiting or running here and not finished: it leaves the queues, its blocks are freed
     * and it is finished, so outputs of steps in flight that include it are dropped. Engines whose abort is not
     * modelled refuse (the config refuses {@code workload.client_timeout_s} for them first).
     */
    void abort(Sequence s) {
        throw new UnsupportedOperationException(
                "aborting a request is not modelled for " + getClass().getSimpleName());
    }

    /** Prompt tokens not yet computed of requests without a first token. */
    public abstract long pendingPromptTokens();

    /**
     * Schedules one step: fills {@code batch} and advances computed tokens.
     *
     * @return tokens scheduled (0: nothing could run)
     */
    public abstract int schedule(long nowNanos, StepBatch batch);

    /** Applies the outputs of the oldest step in flight at its end; the requests that finished replace {@code finishedOut}. */
    public final void applyOutputs(long nowNanos, ObjectArrayList<Sequence> finishedOut) {
        finishedOut.clear();
        appendOutputs(nowNanos, finishedOut);
    }

    /**
     * {@link #applyOutputs}, appending the requests that finished to {@code finishedOut}, which is touched only when
     * one does (a rank's step reaches no list of its own when nothing finishes).
     *
     * @return how many were appended
     */
    abstract int appendOutputs(long nowNanos, ObjectArrayList<Sequence> finishedOut);

    /** A one-line description of the waiting head, for diagnostics. */
    abstract String describeHead();

    /** The KV manager over this rank's pool. */
    final KvCacheManager kv() {
        return kv;
    }

    /** Installs the KV connector (G2 host tier, KVCR, P/D transfers) this rank's scheduler talks to. */
    void connector(KvConnector kvConnector) {
        this.connector = kvConnector;
    }

    /**
     * One copy (G2 load, KVCR pull or P/D transfer) of a waiting request landed; when all have, its blocks are cached
     * and it waits, holding them, where its engine admits it next ({@link #requeueLanded}).
     */
    void copyLanded(Sequence s) {
        if (!s.copyLanded()) {
            return; // another copy of it is still in flight
        }
        loading.remove(s);
        if (s.finished()) {
            // aborted while its copies were in flight: vLLM frees its (never hashed) blocks once they have landed
            kv.free(s.table());
            return;
        }
        int heldBlocks = s.targetBlocks();
        kv.cacheLoaded(s.table(), heldBlocks);
        heldByWaiting += s.table().numBlocks();
        s.landed(heldBlocks);
        requeueLanded(s);
    }

    /** Puts a request whose copies all landed back in the engine's queue (vLLM: the head of waiting). */
    abstract void requeueLanded(Sequence s);

    /**
     * A pull into blocks [{@code from}, target) of waiting request {@code s} was aborted (its source failed): the blocks
     * meant for it are freed and the request will recompute those tokens; any other copy it waits for still lands.
     */
    void pullAborted(Sequence s, int from) {
        kv.freeTail(s.table(), from);
        s.pullAborted(from);
        copyLanded(s);
    }

    /**
     * Admits P/D decode request {@code r} over its landed KV, {@code computed} tokens of it counted as computed: it
     * gets the slots of the rest of its prompt (within its landed blocks) and consumes the load. The prompt was
     * prefilled (and counted) on its prefill worker, so no admission counts here.
     *
     * @return whether this is its first admission
     */
    protected final boolean admitOverLanded(Sequence r, int computed, long nowNanos) {
        int tokens = r.numTokens() - computed;
        if (!kv.allocateSlots(r.table(), computed, tokens, r.numTokens(), settings.maxModelLen())) {
            throw new IllegalStateException("decode request " + r.request().id()
                    + " landed but its last prompt token has no slot (" + pool.freeBlocks() + " free)");
        }
        int remoteTokens = r.pendingRemoteTokens();
        consumeLoad(r);
        return r.admitted(nowNanos, computed, 0, remoteTokens);
    }

    /** The landed load of {@code r} is used (or, with no block landed, over): its blocks are its own again. */
    protected final void consumeLoad(Sequence r) {
        heldByWaiting -= r.loadedBlocks();
        connector.loadConsumed(r);
        r.loadConsumed();
    }

    /** A request whose copies landed gives its blocks back before admission (they stay cached); it recomputes. */
    protected final void releaseLanded(Sequence s) {
        heldByWaiting -= s.table().numBlocks();
        connector.loadReleased(s);
        s.loadReleased();
        kv.free(s.table());
    }

    /** The rank failed: every request it holds moves to {@code out}. */
    abstract void abandon(ObjectArrayList<Sequence> out);

    /** The blocks of finished P/D prefill {@code s} are read (or can no longer be): free them. */
    void releaseHandoff(Sequence s) {
        heldForHandoffs -= s.table().numBlocks();
        kv.free(s.table());
    }

    /** The shortest GPU time of the step just scheduled: KV it loads during its forward (SGLang HiCache), else 0. */
    long inStepLoadNanos() {
        return 0;
    }

    /**
     * Copies the step just scheduled waits for before its forward starts, issued while it was prepared (TensorRT-LLM's
     * host offloads and onboards): part of its CPU side, which the overlap scheduler hides behind the step before; 0 if
     * none.
     */
    long copyBeforeForwardNanos() {
        return 0;
    }

    /** The latest step reaches the GPU at {@code nanos} (after its CPU part): its first admissions count as scheduled then. */
    final void firstScheduledAt(long nanos) {
        if (!latest.anyFirst) {
            return;
        }
        for (int k = 0; k < latest.count; k++) {
            if (latest.first(k)) {
                latest.seq(k).firstScheduledAt(nanos);
            }
        }
    }
}
