package io.servesim.engine;

import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;

/**
 * Drives one rank on its own ({@code dp_mode: independent}, vLLM's dense-model data parallelism, where each DP rank
 * is a separate engine core): a rank with work arms one STEP_START; the step ends at one PASS_COMPLETION after its
 * own step time; then it steps again if it still has work.
 */
final class IndependentStepper implements StepDriver, EventHandler {
    private static final int START = 1;
    private static final int END = 2;

    private final EngineRank rank;
    private final EventQueue queue;
    private boolean busy;
    private boolean armed;
    private long passStart;

    IndependentStepper(EngineRank rank, EventQueue queue) {
        this.rank = rank;
        this.queue = queue;
        rank.driver(this);
    }

    @Override
    public void wake(EngineRank r) {
        if (!busy && !armed && !rank.failed()) {
            armed = true;
            queue.schedule(queue.nowNanos(), Phase.STEP_START, rank.globalIndex(), this, START, 0);
        }
    }

    @Override
    public void onEvent(int kind, long payload) {
        if (rank.failed()) {
            busy = false; // the worker failed: a pending step start or end does nothing
            armed = false;
            return;
        }
        long now = queue.nowNanos();
        if (kind == START) {
            armed = false;
            if (rank.beginStep(now) == 0) {
                if (rank.hasWork() && rank.scheduler().preemptedLastStep()) {
                    wake(rank); // preempted its only running request; admission resumes next step (same instant)
                    return;
                }
                if (rank.hasWork() && !rank.awaitingCopies()) {
                    throw rank.stuck();
                }
                return;
            }
            busy = true;
            passStart = now;
            long cpu = rank.cpuNanos();
            if (cpu > 0) {
                rank.stepStartsAt(now + cpu); // the GPU starts once the engine core has scheduled the step
            }
            queue.schedule(now + rank.stepNanos(), Phase.PASS_COMPLETION, rank.globalIndex(), this, END, 0);
        } else {
            busy = false;
            rank.endStep(now, now - passStart);
            if (rank.hasWork()) {
                wake(rank);
            }
        }
    }
}
