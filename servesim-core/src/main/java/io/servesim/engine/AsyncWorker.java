package io.servesim.engine;

import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;

/**
 * Drives ranks with vLLM's default engine loop, async scheduling ({@code engine.scheduler.async_scheduling}):
 * {@code EngineCore.step_with_batch_queue} with a batch queue of two ({@code vllm/v1/engine/core.py}; clock model of
 * the vllm-oracle's ASYNC.md §2). The engine-core CPU schedules a step and submits it to the GPU, which runs steps
 * FIFO; while the queue is not full and the oldest step has not finished, the CPU schedules the next step at once
 * (from the state after the previous outputs, with placeholders for tokens in flight); otherwise it blocks on the
 * oldest step and applies its outputs when the GPU finishes it. A step with no tokens occupies no GPU time.
 *
 * <p>One instance drives all attention-DP ranks of a worker in lockstep (one pass over the ranks with work, lasting
 * its slowest rank's step), or one rank on its own ({@code dp_mode: independent}). Scheduling costs no virtual time
 * (the CPU part of a step is not modelled separately yet), so a step starts when the GPU frees up.
 */
final class AsyncWorker implements StepDriver, EventHandler {
    private static final int CPU = 1;
    private static final int OUTPUT = 2;
    private static final int SCHEDULED = 3; // the CPU finished scheduling (after its CPU time)
    private static final int QUEUE_SIZE =
            2; // max_concurrent_batches with async scheduling (uniproc/multiproc executor)

    /** One submitted pass: the ranks that stepped in it and its GPU interval. */
    private static final class Pass {
        long[] stepped; // with several ranks: bit i set if rank i stepped
        long stepped0; // with one rank: 1 if it stepped
        Pass next; // in the spare list
        boolean hasTokens;
        boolean mayFinish; // applying its outputs may finish a request (then its end is an external event)
        long cpuNanos;
        long startNanos;
        long endNanos;
    }

    private final EngineRank[] ranks;
    private final EventQueue queue;
    private final long stableId;
    // a worker of one rank (DP 1 or an independent rank, the common shape) keeps its state in scalar fields: at
    // thousands of workers every extra object a step reaches is a cache miss
    private final EngineRank rank0;
    private final boolean single;
    private long active0; // one rank: 1 if it may have work
    private final long[] active; // several ranks: bit i set if rank i may have work (null with one rank)
    // the batch queue (vLLM's batch_queue, at most QUEUE_SIZE passes), oldest first
    private Pass queued0;
    private Pass queued1;
    private int queuedCount;
    private Pass spare; // passes for reuse, linked through Pass.next
    private Pass blockedOn;
    private boolean armed;
    private boolean cpuBusy;
    private long gpuFreeNanos;
    private int emptyRetries;
    // run-ahead (EventQueue's class comment): the next own event, held instead of queued while it precedes every
    // external event
    private boolean inHandler;
    private boolean pending;
    private long pendingAtNanos;
    private int pendingPhase;
    private int pendingKind;

    AsyncWorker(EngineRank[] ranks, EventQueue queue) {
        this.ranks = ranks;
        this.queue = queue;
        this.stableId = ranks[0].globalIndex();
        this.rank0 = ranks[0];
        this.single = ranks.length == 1;
        this.active = single ? null : new long[(ranks.length + 63) >>> 6];
        for (EngineRank r : ranks) {
            r.driver(this);
        }
    }

    @Override
    public void wake(EngineRank rank) {
        if (single) {
            active0 = 1;
        } else {
            int i = rank.rankId();
            active[i >>> 6] |= 1L << i;
        }
        armCpu();
    }

    private void enqueue(Pass pass) {
        if (queuedCount == 0) {
            queued0 = pass;
        } else if (queuedCount == 1) {
            queued1 = pass;
        } else {
            throw new IllegalStateException("batch queue over " + QUEUE_SIZE);
        }
        queuedCount++;
    }

    private Pass newestQueued() {
        return queuedCount == 2 ? queued1 : queued0;
    }

    private Pass dequeue() {
        Pass oldest = queued0;
        queued0 = queued1;
        queued1 = null;
        queuedCount--;
        return oldest;
    }

    private void clearQueue() {
        queued0 = null;
        queued1 = null;
        queuedCount = 0;
    }

    private Pass takeSpare() {
        Pass pass = spare;
        if (pass == null) {
            pass = new Pass();
            if (!single) {
                pass.stepped = new long[active.length];
            }
            return pass;
        }
        spare = pass.next;
        pass.next = null;
        return pass;
    }

    private void giveSpare(Pass pass) {
        pass.next = spare;
        spare = pass;
    }

    /** The CPU runs its loop at the current instant unless it already will or is blocked on a step. */
    private void armCpu() {
        if (!armed && !cpuBusy && blockedOn == null && !rank0.failed()) {
            armed = true;
            post(queue.nowNanos(), Phase.STEP_START, CPU, false);
        }
    }

    /**
     * Schedules this worker's next event. An event whose outputs may finish a request is {@code external} (others see
     * it: the recorder, the workload). A local one runs ahead, without the queue, when it precedes every external
     * event; else it waits in the queue's local heap.
     */
    private void post(long atNanos, int phase, int kind, boolean external) {
        if (external) {
            queue.schedule(atNanos, phase, stableId, this, kind, 0);
            return;
        }
        if (pending) {
            flushPending(); // a second event in one handler: both go through the queue, in key order
        } else if (inHandler && queue.mayRunAhead(atNanos, phase, stableId)) {
            pending = true;
            pendingAtNanos = atNanos;
            pendingPhase = phase;
            pendingKind = kind;
            return;
        }
        queue.scheduleLocal(atNanos, phase, stableId, this, kind, 0);
    }

    private void flushPending() {
        pending = false;
        queue.scheduleLocal(pendingAtNanos, pendingPhase, stableId, this, pendingKind, 0);
    }

    @Override
    public void onEvent(int kind, long payload) {
        inHandler = true;
        handle(kind);
        while (pending) {
            if (!queue.mayRunAhead(pendingAtNanos, pendingPhase, stableId)) {
                flushPending(); // an external event came first after all
                break;
            }
            pending = false;
            queue.runAheadTo(pendingAtNanos);
            handle(pendingKind);
        }
        inHandler = false;
    }

    private void handle(int kind) {
        if (rank0.failed()) {
            armed = false; // the worker failed: pending events do nothing
            cpuBusy = false;
            blockedOn = null;
            clearQueue();
            return;
        }
        long now = queue.nowNanos();
        if (kind == OUTPUT) {
            Pass done = blockedOn;
            blockedOn = null;
            complete(done, now);
            if (mayRunInline(now)) {
                // the CPU's loop, armed now, would be the next event to run (ahead of every external one): run it
                // here instead of posting it and taking it back (the same handler, without the event's round trip)
                queue.runAheadTo(now); // counted as run ahead, as the posted event would have been
                runCpu(now);
                return;
            }
            armCpu();
            return;
        }
        if (kind == SCHEDULED) {
            cpuBusy = false;
            afterSchedule(newestQueued(), now);
            return;
        }
        armed = false;
        runCpu(now);
    }

    /**
     * Whether an own local event at {@code atNanos} (phase STEP_START) may run at once, inside the current handler:
     * it would run ahead as the very next thing ({@link #post} and {@link #onEvent}'s loop would take it straight
     * back) and nothing else is pending or armed.
     */
    private boolean mayRunInline(long atNanos) {
        return inHandler
                && !pending
                && !armed
                && !cpuBusy
                && blockedOn == null
                && queue.mayRunAhead(atNanos, Phase.STEP_START, stableId);
    }

    /** The CPU's loop at {@code now}: schedules a step if any rank has requests, else waits for the oldest. */
    private void runCpu(long nowIn) {
        long now = single ? advanceDecodeRun(nowIn) : nowIn;
        if (hasRequests()) {
            Pass pass = schedule(now);
            enqueue(pass);
            if (pass.cpuNanos > 0) {
                long done = now + pass.cpuNanos;
                if (mayRunInline(done)) {
                    queue.runAheadTo(done); // the SCHEDULED event, run inline (see handle)
                    afterSchedule(pass, done);
                    return;
                }
                cpuBusy = true; // schedule() takes CPU time: the loop goes on when it is done
                post(done, Phase.STEP_START, SCHEDULED, false);
                return;
            }
            afterSchedule(pass, now);
            return;
        } else if (queuedCount == 0) {
            return; // idle until a rank gets work
        }
        popOldest(now);
    }

    /**
     * Runs the steps of a decode run that nothing can interrupt in one loop, from the CPU loop at {@code now}, and
     * returns the time at which the loop goes on as usual. Exactly what the events would do (servesim's shortcut, not
     * a vLLM rule): with one step of the run in flight (ending at {@code end}), the CPU schedules the next at {@code
     * t}, which reaches the GPU when both are free, at {@code max(end, t + cpu)}; the CPU then blocks on the step in
     * flight, applies its outputs at that same instant and loops. So each step of the run starts at the previous
     * loop's instant and lasts its GPU time, while every one of those events may run ahead of the queue (it precedes
     * the next external event: {@link EventQueue#mayRunAheadQuietly}, checked at the loop's last instant, which bounds
     * its earlier ones; these steps are quiet — no block changes, no request finishes — so a KV-event router, which
     * keeps other steps in the queue, allows them) and the run goes on ({@link EngineRank#fusableRunSteps}). Skipped
     * per step: the batch queue, the step records and the events themselves; not skipped: the batch, the timing
     * model, counters and gaps.
     */
    private long advanceDecodeRun(long now) {
        if (pending || armed || cpuBusy || blockedOn != null || !inHandler || queuedCount != 1) {
            return now;
        }
        Pass inFlight = queued0;
        if (!inFlight.hasTokens
                || inFlight.mayFinish
                || inFlight.stepped0 == 0
                || gpuFreeNanos != inFlight.endNanos
                || active0 == 0) {
            return now;
        }
        EngineRank r = rank0;
        int steps = r.fusableRunSteps();
        long t = now;
        long events = 0;
        while (steps > 0) {
            r.fillRunBatch();
            long gpu = r.gpuNanos();
            long cpu = r.cpuNanos();
            long end = inFlight.endNanos;
            long next = Math.max(end, t + cpu);
            if (!queue.mayRunAheadQuietly(next, Phase.STEP_START, stableId)) {
                break; // the usual path takes this step (and finds the same)
            }
            r.advanceRun(next, end - inFlight.startNanos);
            // the events that would have run ahead: the CPU's end (if it takes time), the outputs (if the step in
            // flight ends later) and the CPU loop again
            events += cpu > 0 ? (end > t + cpu ? 3 : 2) : (end > t ? 2 : 1);
            inFlight.cpuNanos = cpu;
            inFlight.startNanos = next;
            inFlight.endNanos = next + gpu;
            gpuFreeNanos = inFlight.endNanos;
            t = next;
            steps--;
        }
        if (events > 0) {
            emptyRetries = 0;
            queue.runAheadTo(t, events);
        }
        return t;
    }

    /** After scheduling: go on scheduling while the GPU is busy and the queue has room, else wait for the oldest. */
    private void afterSchedule(Pass pass, long now) {
        if (pass.hasTokens && queuedCount < QUEUE_SIZE && queued0.endNanos > now) {
            armCpu(); // the GPU is busy with the previous step: do not block, schedule the next one
            return;
        }
        popOldest(now);
    }

    /** Blocks on the oldest step (future.result()) and applies its outputs when it ends. */
    private void popOldest(long now) {
        Pass oldest = dequeue();
        if (oldest.hasTokens) {
            emptyRetries = 0;
        }
        if (oldest.endNanos > now) {
            blockedOn = oldest; // future.result(): the CPU waits for the GPU
            post(oldest.endNanos, Phase.PASS_COMPLETION, OUTPUT, oldest.mayFinish);
            return;
        }
        complete(oldest, now);
        if (!oldest.hasTokens && nothingInFlight()) {
            // nothing could be scheduled and no step with tokens is in flight: vLLM's loop would spin here until a
            // copy lands or a request arrives; in virtual time the worker waits for that event instead
            while (queuedCount > 0) {
                complete(dequeue(), now);
            }
            if (!hasRequests()) {
                return;
            }
            for (EngineRank r : ranks) {
                if (r.hasWork() && r.scheduler().preemptedLastStep()) {
                    if (++emptyRetries > 64) {
                        throw r.stuck(); // a preempt-and-retry cycle that never admits (a deadlock guard)
                    }
                    armCpu(); // it preempted its only running request; the next step (same instant) admits
                    return;
                }
            }
            for (EngineRank r : ranks) {
                if (r.hasWork() && !r.awaitingCopies()) {
                    throw r.stuck();
                }
            }
            return; // copies in flight will wake it
        }
        armCpu();
    }

    /** Whether every step left in the queue is empty (no GPU work in flight). */
    private boolean nothingInFlight() {
        return !(queuedCount > 0 && queued0.hasTokens) && !(queuedCount > 1 && queued1.hasTokens);
    }

    /** Whether any rank has requests waiting or running (vLLM's {@code has_requests}). */
    private boolean hasRequests() {
        if (single) {
            return active0 != 0 && rank0.hasWork();
        }
        for (int w = 0; w < active.length; w++) {
            long bits = active[w];
            while (bits != 0) {
                int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                if (ranks[i].hasWork()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Schedules every rank with work; the pass starts when the GPU frees up and lasts its slowest rank's step. */
    private Pass schedule(long now) {
        Pass pass = takeSpare();
        long gpu = 0;
        long cpu = 0;
        boolean any = false;
        boolean mayFinish = false;
        if (single) {
            EngineRank r = rank0;
            if (active0 != 0 && r.hasWork() && r.beginStep(Math.max(now, gpuFreeNanos)) > 0) {
                pass.stepped0 = 1;
                gpu = r.gpuNanos();
                cpu = r.cpuNanos();
                any = true;
                mayFinish = r.scheduler().latestStepMayFinish();
            } else {
                pass.stepped0 = 0;
            }
        }
        for (int w = 0; !single && w < active.length; w++) {
            long bits = active[w];
            long ran = 0;
            while (bits != 0) {
                int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                EngineRank r = ranks[i];
                if (r.hasWork() && r.beginStep(Math.max(now, gpuFreeNanos)) > 0) {
                    ran |= 1L << i;
                    gpu = Math.max(gpu, r.gpuNanos());
                    cpu = Math.max(cpu, r.cpuNanos());
                    any = true;
                    mayFinish |= r.scheduler().latestStepMayFinish();
                }
            }
            pass.stepped[w] = ran;
        }
        pass.hasTokens = any;
        pass.mayFinish = mayFinish;
        pass.cpuNanos = any ? cpu : 0;
        long start = Math.max(now + pass.cpuNanos, gpuFreeNanos); // submitted once scheduled; the GPU runs FIFO
        pass.startNanos = start;
        if (any) {
            if (cpu > 0 && single) {
                rank0.stepStartsAt(start);
            } else if (cpu > 0) {
                for (int w = 0; w < active.length; w++) {
                    long bits = pass.stepped[w];
                    while (bits != 0) {
                        int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                        bits &= bits - 1;
                        ranks[i].stepStartsAt(start);
                    }
                }
            }
            pass.endNanos = start + gpu;
            gpuFreeNanos = pass.endNanos;
        } else {
            pass.endNanos = now; // an empty step's output exists as soon as it is submitted
        }
        return pass;
    }

    /** Applies a pass's outputs (update_from_output) at {@code now} on every rank that stepped in it. */
    private void complete(Pass pass, long now) {
        if (single) { // the common shape (DP 1 or independent ranks): no bit-set walks
            if (pass.stepped0 != 0) {
                pass.stepped0 = 0;
                rank0.endStep(now, pass.endNanos - pass.startNanos);
            }
            active0 = rank0.hasWork() ? 1L : 0L;
            giveSpare(pass);
            return;
        }
        RankBits.endSteps(ranks, pass.stepped, now, pass.endNanos - pass.startNanos);
        RankBits.retainRanksWithWork(ranks, active);
        giveSpare(pass);
    }
}
