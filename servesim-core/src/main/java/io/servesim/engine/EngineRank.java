package io.servesim.engine;

import io.servesim.sim.SimClock;
import io.servesim.timing.StepBatch;
import io.servesim.timing.TimingModel;
import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * One attention-DP rank of a worker: its own {@link VllmScheduler}, queues and KV pool, plus per-rank counters. A
 * {@link StepDriver} decides when it steps ({@link IndependentStepper}: on its own; {@link LockstepWorker}: with
 * the other ranks of its worker). An idle rank has no pending event and costs nothing.
 */
public final class EngineRank {
    private final int workerId;
    private final int rankId;
    private final int globalIndex;
    private final RankScheduler scheduler;
    private final TimingModel timing;
    private final SimClock clock;
    private final EngineListener listener;
    private final OffloadCounters offloadCounters;
    private StepBatch batch = new StepBatch();
    private final ObjectArrayList<Sequence> finished = new ObjectArrayList<>();
    private boolean maxTokensSent; // workload.max_tokens_sent: the API server checks prompt + max_tokens
    // requests whose clients gave up, to abort before the next schedule (the engine core's input queue)
    private final ObjectArrayList<Sequence> aborts = new ObjectArrayList<>();
    private StepDriver driver;
    private TieredConnector connector;
    private StepObserver observer;
    private long busyNanos;
    private long passes;
    private long prefillTokens;
    private long decodeTokens;
    private long requests;
    private int peakUsedBlocks;
    private boolean failed;
    private long registryWakeups;
    // the load last reported to the listener ({@link #loadChanged}): waiting (with loading), running, used blocks and
    // pending prompt tokens; -1 before the first report
    private int reportedWaiting = -1;
    private int reportedRunning = -1;
    private int reportedUsedBlocks = -1;
    private long reportedPendingPrompt = -1;

    /**
     * Creates a rank.
     *
     * @param workerId the worker's id
     * @param rankId the rank's index within its worker
     * @param globalIndex a cluster-wide stable index (event tie-breaker)
     */
    public EngineRank(
            int workerId,
            int rankId,
            int globalIndex,
            SchedulerSettings settings,
            TimingModel timing,
            SimClock clock,
            EngineListener listener,
            SchedulerCounters schedulerCounters,
            OffloadCounters offloadCounters) {
        this(
                workerId,
                rankId,
                globalIndex,
                new VllmScheduler(settings, schedulerCounters),
                timing,
                clock,
                listener,
                offloadCounters);
    }

    /**
     * Creates a rank around the scheduler of its engine kind (the engine registry in the cluster picks it).
     *
     * @param workerId the worker's id
     * @param rankId the rank's index within its worker
     * @param globalIndex a cluster-wide stable index (event tie-breaker)
     */
    public EngineRank(
            int workerId,
            int rankId,
            int globalIndex,
            RankScheduler scheduler,
            TimingModel timing,
            SimClock clock,
            EngineListener listener,
            OffloadCounters offloadCounters) {
        this.workerId = workerId;
        this.rankId = rankId;
        this.globalIndex = globalIndex;
        this.scheduler = scheduler;
        this.timing = timing;
        this.clock = clock;
        this.listener = listener;
        this.offloadCounters = offloadCounters;
    }

    /** The worker id. */
    public int workerId() {
        return workerId;
    }

    /** The rank index within its worker. */
    public int rankId() {
        return rankId;
    }

    /** The cluster-wide rank index. */
    public int globalIndex() {
        return globalIndex;
    }

    /** The rank's scheduler. */
    public RankScheduler scheduler() {
        return scheduler;
    }

    /** This rank's step-time model (its pool's, in a heterogeneous fleet). */
    public TimingModel timing() {
        return timing;
    }

    /**
     * Uses {@code shared} as this rank's step batch. The ranks of one simulation may share one: a step's batch is
     * filled by its schedule and read (step time, observers) before any other rank schedules.
     */
    public void shareStepBatch(StepBatch shared) {
        this.batch = java.util.Objects.requireNonNull(shared);
    }

    /** Virtual time this rank spent in passes it took part in. */
    public long busyNanos() {
        return busyNanos;
    }

    /** Passes (engine steps) this rank took part in. */
    public long passes() {
        return passes;
    }

    /** Prompt (prefill and recompute) tokens computed. */
    public long prefillTokens() {
        return prefillTokens;
    }

    /** Decode tokens computed. */
    public long decodeTokens() {
        return decodeTokens;
    }

    /** Requests routed to this rank. */
    public long requests() {
        return requests;
    }

    /** Highest number of KV blocks in use after any schedule. */
    public int peakUsedBlocks() {
        return peakUsedBlocks;
    }

    /** Whether any request is waiting or running. */
    public boolean hasWork() {
        return scheduler.hasWork();
    }

    /** Whether this rank's worker failed (it does nothing more). */
    public boolean failed() {
        return failed;
    }

    /**
     * Times the KVCR registry woke this rank (a pull it takes part in changed state). servesim never polls ranks for
     * deadlines, so a rank that never staged or served a pull stays at 0.
     */
    public long registryWakeups() {
        return registryWakeups;
    }

    /** The KVCR registry wakes this rank: one of its pulls landed, aborted or released source holds. */
    void wakeByRegistry() {
        registryWakeups++;
        wakeAfterLoad();
    }

    /**
     * The worker failed: this rank stops for good. Its requests (running, copying, waiting) are moved to
     * {@code out}, its G2 copies in flight are cancelled; pending step events find it failed and do nothing.
     */
    public void fail(ObjectArrayList<Sequence> out) {
        failed = true;
        scheduler.abandon(out);
    }

    /** Installs the driver (done once by the worker). */
    void driver(StepDriver stepDriver) {
        this.driver = stepDriver;
    }

    /**
     * Connects this rank to a G2 host tier (see {@link HostOffload}).
     *
     * @param host the G2 pool (this rank's own, or the cluster's shared one)
     * @param gpuEndpoint this rank's transfer endpoint (egress = d2h, ingress = h2d)
     * @param hostEndpoint the G2 pool's endpoint
     * @param sharedPool whether {@code host} is the cluster's shared pool
     * @param h2dGbytesPerS the rank's host-to-GPU bandwidth (for loads inside a step; 0 = unlimited)
     * @param d2hGbytesPerS the rank's GPU-to-host bandwidth (for write-backs inside a step; 0 = unlimited)
     */
    public void enableHostOffload(
            io.servesim.kv.HostPool host,
            io.servesim.transfer.TransferService transfers,
            CopyJobs jobs,
            int gpuEndpoint,
            int hostEndpoint,
            long blockBytes,
            long firstByteNanos,
            boolean sharedPool,
            double h2dGbytesPerS,
            double d2hGbytesPerS) {
        HostOffload o = new HostOffload(
                this,
                host,
                transfers,
                jobs,
                gpuEndpoint,
                hostEndpoint,
                blockBytes,
                firstByteNanos,
                sharedPool,
                offloadCounters,
                h2dGbytesPerS,
                d2hGbytesPerS);
        connector().offload(o);
    }

    /** This rank's G2 link, or null without host offload. */
    HostOffload hostOffload() {
        return connector == null ? null : connector.offload();
    }

    /** This rank's KV connector, created when the first tier behind it is installed. */
    TieredConnector connector() {
        if (connector == null) {
            connector = new TieredConnector(this, scheduler.settings().blockSize());
            scheduler.connector(connector);
        }
        return connector;
    }

    /** A G2 copy landed: queues may have changed and blocks may be free again. */
    void wakeAfterLoad() {
        if (failed) {
            return;
        }
        loadChanged();
        if (hasWork()) {
            driver.wake(this);
        }
    }

    /** Whether G2 copies of this rank are in flight (their completion wakes it). */
    boolean awaitingCopies() {
        return scheduler.numLoading() > 0
                || scheduler.pinnedForStore() > 0
                || scheduler.heldForPulls() > 0
                || scheduler.heldForHandoffs() > 0;
    }

    /**
     * Leading blocks of a prompt (given by its full-block hashes) this rank's GPU cache holds: O(matched blocks)
     * lookups; 0 without hashes (no prefix caching, nothing is ever cached).
     */
    public int cachedPrefixBlocks(long[] promptHashes) {
        if (promptHashes == null) {
            return 0;
        }
        io.servesim.kv.BlockPool pool = scheduler.pool();
        int held = 0;
        while (held < promptHashes.length && pool.lookup(promptHashes[held]) >= 0) {
            held++;
        }
        return held;
    }

    /** Installs a test observer (null to remove). */
    public void observer(StepObserver stepObserver) {
        this.observer = stepObserver;
    }

    /**
     * Whether requests come with their output length as {@code max_tokens} ({@code workload.max_tokens_sent}): the
     * API server in front of this rank then refuses one whose prompt and {@code max_tokens} exceed {@code
     * max_model_len}, as vLLM's renderer does ({@code vllm/renderers/params.py}: the prompt may hold at most {@code
     * max_model_len - max_tokens} tokens, else "This model's maximum context length is ..."), rather than letting the
     * engine stop it at the limit.
     */
    public void maxTokensSent(boolean sent) {
        this.maxTokensSent = sent;
    }

    /**
     * Accepts a routed request at the current time: rejects it at once if its prompt leaves no room for an output
     * token within {@code max_model_len} (vLLM rejects over-long prompts at input validation), else queues it.
     */
    public Sequence submit(Request request, RoutingDecision routing, long[] promptHashes) {
        return submit(request, routing, promptHashes, null, false);
    }

    /**
     * {@link #submit(Request, RoutingDecision, long[])} in a disaggregated cluster: as the prefill side of
     * {@code handoff} ({@code prefillOnly}: one output token, blocks kept for the decode worker) or as its decode side
     * (it pulls its prompt's KV when admitted, unless prefilled locally).
     *
     * @return the request as this rank holds it, or null when it was rejected at once
     */
    public Sequence submit(
            Request request, RoutingDecision routing, long[] promptHashes, Handoff handoff, boolean prefillOnly) {
        if (failed) {
            throw new IllegalStateException("request " + request.id() + " routed to failed worker " + workerId);
        }
        requests++;
        int maxModelLen = scheduler.settings().maxModelLen();
        Sequence s = new Sequence(request, routing, promptHashes, maxModelLen, handoff, prefillOnly);
        if (handoff != null && !prefillOnly && connector != null && connector.pd() != null) {
            connector.pd().decodeSubmitted(handoff, this, s);
        }
        // a P/D decode request pulling its prompt runs no context here (TRT-LLM's generation-only request)
        boolean runsContext = handoff == null || prefillOnly || handoff.local();
        // a P/D prefill side is sent max_tokens 1 (vLLM's P/D proxy); the decode side checks the client's
        long maxTokens = prefillOnly ? 1 : request.outputTokens();
        if (request.promptLength() >= maxModelLen
                || (maxTokensSent && request.promptLength() + maxTokens > maxModelLen)
                || (runsContext && scheduler.rejectsPrompt(request.promptLength()))) {
            s.finish();
            listener.onRequestFinished(this, s, true);
            return null;
        }
        scheduler.addRequest(s);
        loadChanged();
        driver.wake(this);
        return s;
    }

    /**
     * The client of {@code s} (queued or running here) gave up on it now: the engine aborts it before its next
     * schedule, as vLLM's engine core does with an abort from its input queue, and wakes as it does for an arrival.
     * Nothing happens to a request already finished. An unfinished one is brought up to date first (a decode run
     * defers its tokens), so what its client received can be read from it.
     *
     * @return whether the request was still unfinished (its client saw it time out)
     */
    public boolean clientTimedOut(Sequence s) {
        if (s.finished()) {
            return false;
        }
        scheduler.settle();
        s.clientGave();
        aborts.add(s);
        driver.wake(this);
        return true;
    }

    /**
     * Runs {@code schedule()} for a pass starting now.
     *
     * @return tokens scheduled (0: nothing could run)
     */
    int beginStep(long nowNanos) {
        RankScheduler s = scheduler;
        if (!aborts.isEmpty()) {
            for (int k = 0; k < aborts.size(); k++) {
                Sequence a = aborts.get(k);
                if (!a.finished()) { // (it may have finished in the step that ended since its client gave up)
                    s.abort(a);
                }
            }
            aborts.clear();
            loadChanged();
        }
        int waitingBefore = s.numWaiting();
        int runningBefore = s.numRunning();
        int tokens = s.schedule(nowNanos, batch);
        if (observer != null) {
            observer.afterSchedule(this, batch);
        }
        if (s.latestWasDecodeRun()) {
            // nothing a load report reads changed (and nothing waits, so no output since the last report changed it);
            // nor did the blocks in use, which only schedules and copies change
            decodeTokens += tokens;
            return tokens;
        }
        if (tokens > 0 || waitingBefore != s.numWaiting() || runningBefore != s.numRunning()) {
            loadChanged(); // queue lengths, pending prompt tokens or used blocks changed
        }
        if (tokens > 0) {
            prefillTokens += batch.prefillTokens();
            decodeTokens += batch.decodeRequests();
            peakUsedBlocks = Math.max(peakUsedBlocks, scheduler.pool().usedBlocks());
        }
        return tokens;
    }

    /**
     * Steps of a decode run its driver may advance with {@link #advanceRun} (0 under a test observer, or with an abort
     * pending).
     */
    int fusableRunSteps() {
        // (not while an abort waits for the next schedule: the run may hold the request being aborted)
        return observer == null && aborts.isEmpty() ? scheduler.fusableRunSteps() : 0;
    }

    /** Fills this rank's batch with its decode run's next step ({@link #gpuNanos} and {@link #cpuNanos} then read it). */
    void fillRunBatch() {
        scheduler.fillRunBatch(batch);
    }

    /**
     * One decode-run step as {@link #beginStep} and {@link #endStep} count it: the next step scheduled, and the step
     * in flight ({@code passNanos} long) ending at {@code nowNanos}.
     */
    void advanceRun(long nowNanos, long passNanos) {
        busyNanos += passNanos;
        passes++;
        decodeTokens += scheduler.advanceRun(nowNanos);
    }

    /** This rank's synchronous step time for the batch just scheduled: its CPU part, then its GPU part. */
    long stepNanos() {
        return cpuNanos() + gpuNanos();
    }

    /** The GPU (forward-pass) time of the batch just scheduled, from the timing model. */
    long gpuNanos() {
        long dt = timing.stepNanos(batch);
        if (dt <= 0) {
            throw new IllegalStateException("timing model returned a non-positive step time: " + dt + "ns");
        }
        return Math.max(dt, scheduler.inStepLoadNanos()); // a load overlapped with the forward (SGLang HiCache)
    }

    /**
     * The engine-core CPU time of the step just scheduled, from the timing model, with the copies its forward waits
     * for (TensorRT-LLM's host offloads and onboards).
     */
    long cpuNanos() {
        return timing.cpuNanos(batch) + scheduler.copyBeforeForwardNanos();
    }

    /** The step just scheduled reaches the GPU at {@code nanos}: its first admissions count as scheduled then. */
    void stepStartsAt(long nanos) {
        scheduler.firstScheduledAt(nanos);
    }

    /** Applies the outputs of the pass that ends now, which lasted {@code passNanos}. */
    void endStep(long nowNanos, long passNanos) {
        busyNanos += passNanos;
        passes++;
        int done = scheduler.appendOutputs(nowNanos, finished); // finished is empty between steps
        if (done > 0) {
            for (int k = 0; k < done; k++) {
                listener.onRequestFinished(this, finished.get(k), false);
            }
            loadChanged();
            finished.clear();
        }
        if (observer != null) {
            observer.afterOutputs(this);
        }
    }

    /**
     * Reports this rank's load to the listener if any part of it (waiting and loading, running, used blocks, pending
     * prompt tokens: what the load tracker and routers read) differs from the last report. The listener keeps only
     * the latest values, so an unchanged report does nothing there; skipping it saves a call per decode step.
     */
    private void loadChanged() {
        RankScheduler s = scheduler;
        int waiting = s.numWaiting() + s.numLoading();
        int running = s.numRunning();
        int used = s.pool().usedBlocks();
        long pending = s.pendingPromptTokens();
        if (waiting != reportedWaiting
                || running != reportedRunning
                || used != reportedUsedBlocks
                || pending != reportedPendingPrompt) {
            reportedWaiting = waiting;
            reportedRunning = running;
            reportedUsedBlocks = used;
            reportedPendingPrompt = pending;
            listener.onLoadChanged(this);
        }
    }

    /** The error for a rank that has queued requests but could schedule nothing (a deadlock guard). */
    IllegalStateException stuck() {
        return new IllegalStateException("worker " + workerId + " rank " + rankId + " at t=" + clock.nowNanos()
                + "ns: requests are queued but none can be scheduled (waiting=" + scheduler.numWaiting()
                + ", running=" + scheduler.numRunning() + ", free blocks="
                + scheduler.pool().freeBlocks()
                + ", used blocks=" + scheduler.pool().usedBlocks() + ", loading=" + scheduler.numLoading()
                + ", held by landed loads=" + scheduler.heldByWaiting() + ", pinned by stores="
                + scheduler.pinnedForStore() + ", held for pulls=" + scheduler.heldForPulls()
                + ", held for P/D transfers=" + scheduler.heldForHandoffs() + ", head: "
                + scheduler.describeHead() + ")");
    }
}
