package io.servesim.engine;

import io.servesim.metrics.EngineCounters;
import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;
import io.servesim.timing.StepBatch;
import io.servesim.timing.TimingModel;
import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * One attention-DP rank of a worker: a {@link VllmScheduler} driven by its own events. A rank with work arms one
 * STEP_START event; the step's duration comes from the timing model and its end is one PASS_COMPLETION event.
 * An idle rank schedules nothing and costs nothing. Ranks of a worker step independently for now (vLLM's dense-model
 * DP); lockstep barriers come with attention-DP support.
 */
public final class EngineRank implements EventHandler {
    private static final int STEP_START = 1;
    private static final int STEP_END = 2;

    private final int workerId;
    private final int rankId;
    private final int globalIndex;
    private final VllmScheduler scheduler;
    private final TimingModel timing;
    private final EventQueue queue;
    private final EngineListener listener;
    private final EngineCounters counters;
    private final StepBatch batch = new StepBatch();
    private final ObjectArrayList<Sequence> finished = new ObjectArrayList<>();
    private StepObserver observer;
    private boolean busy;
    private boolean armed;
    private long busyNanos;

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
            EventQueue queue,
            EngineListener listener,
            EngineCounters counters) {
        this.workerId = workerId;
        this.rankId = rankId;
        this.globalIndex = globalIndex;
        this.scheduler = new VllmScheduler(settings, counters);
        this.timing = timing;
        this.queue = queue;
        this.listener = listener;
        this.counters = counters;
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
    public VllmScheduler scheduler() {
        return scheduler;
    }

    /** Total virtual time this rank spent in steps. */
    public long busyNanos() {
        return busyNanos;
    }

    /** Installs a test observer (null to remove). */
    public void observer(StepObserver stepObserver) {
        this.observer = stepObserver;
    }

    /**
     * Accepts a routed request at the current time: rejects it at once if its prompt leaves no room for an output
     * token within {@code max_model_len} (vLLM rejects over-long prompts at input validation), else queues it.
     */
    public void submit(Request request) {
        int maxModelLen = scheduler.settings().maxModelLen();
        Sequence s = new Sequence(request, maxModelLen);
        if (request.promptLength() >= maxModelLen) {
            s.finished = true;
            listener.onRequestFinished(this, s, true);
            return;
        }
        scheduler.addRequest(s);
        listener.onLoadChanged(this);
        arm();
    }

    private void arm() {
        if (!busy && !armed) {
            armed = true;
            queue.schedule(queue.nowNanos(), Phase.STEP_START, globalIndex, this, STEP_START, 0);
        }
    }

    @Override
    public void onEvent(int kind, long payload) {
        if (kind == STEP_START) {
            startStep();
        } else {
            endStep();
        }
    }

    private void startStep() {
        armed = false;
        long now = queue.nowNanos();
        int waitingBefore = scheduler.numWaiting();
        int runningBefore = scheduler.numRunning();
        int tokens = scheduler.schedule(now, batch);
        if (observer != null) {
            observer.afterSchedule(this, batch);
        }
        if (waitingBefore != scheduler.numWaiting() || runningBefore != scheduler.numRunning()) {
            listener.onLoadChanged(this);
        }
        if (tokens == 0) {
            if (scheduler.hasWork()) {
                throw new IllegalStateException("worker " + workerId + " rank " + rankId + " at t=" + now
                        + "ns: requests are queued but none can be scheduled (waiting=" + scheduler.numWaiting()
                        + ", running=" + scheduler.numRunning() + ", free blocks="
                        + scheduler.pool().freeBlocks()
                        + ")");
            }
            return;
        }
        long dt = timing.stepNanos(batch);
        if (dt <= 0) {
            throw new IllegalStateException("timing model returned a non-positive step time: " + dt + "ns");
        }
        busy = true;
        busyNanos += dt;
        counters.steps++;
        queue.schedule(now + dt, Phase.PASS_COMPLETION, globalIndex, this, STEP_END, 0);
    }

    private void endStep() {
        busy = false;
        long now = queue.nowNanos();
        scheduler.applyOutputs(now, finished);
        for (int k = 0, n = finished.size(); k < n; k++) {
            listener.onRequestFinished(this, finished.get(k), false);
        }
        if (!finished.isEmpty()) {
            listener.onLoadChanged(this);
        }
        finished.clear();
        if (observer != null) {
            observer.afterOutputs(this);
        }
        if (scheduler.hasWork()) {
            arm();
        }
    }
}
