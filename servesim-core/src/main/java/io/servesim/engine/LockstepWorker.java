package io.servesim.engine;

import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;

/**
 * Drives all attention-DP ranks of one worker in lockstep ({@code dp_mode: lockstep}, MoE-style DP attention as
 * vLLM's DPEngineCoreProc and AISimulate run it): when the worker is idle and any rank has work, every rank with
 * work schedules its batch at the same instant; the pass ends at the slowest rank's step time (one
 * PASS_COMPLETION for the whole worker); outputs of every rank become visible at that barrier. A rank that gets a
 * request during a pass waits for the barrier, even if it was idle. Only ranks with work are visited (a bit set),
 * so idle ranks cost nothing.
 */
final class LockstepWorker implements StepDriver, EventHandler {
    private static final int START = 1;
    private static final int END = 2;

    private final EngineRank[] ranks;
    private final EventQueue queue;
    private final long stableId;
    private final long[] active;
    private final long[] stepped;
    private boolean busy;
    private boolean armed;
    private long passStart;

    LockstepWorker(EngineRank[] ranks, EventQueue queue) {
        this.ranks = ranks;
        this.queue = queue;
        this.stableId = ranks[0].globalIndex();
        this.active = new long[(ranks.length + 63) >>> 6];
        this.stepped = new long[active.length];
        for (EngineRank r : ranks) {
            r.driver(this);
        }
    }

    @Override
    public void wake(EngineRank rank) {
        int i = rank.rankId();
        active[i >>> 6] |= 1L << i;
        if (!busy && !armed && !rank.failed()) {
            armed = true;
            queue.schedule(queue.nowNanos(), Phase.STEP_START, stableId, this, START, 0);
        }
    }

    @Override
    public void onEvent(int kind, long payload) {
        if (ranks[0].failed()) {
            busy = false; // the worker failed: a pending pass start or end does nothing
            armed = false;
            return;
        }
        long now = queue.nowNanos();
        if (kind == START) {
            armed = false;
            long pass = 0;
            boolean any = false;
            for (int w = 0; w < active.length; w++) {
                long bits = active[w];
                long ran = 0;
                while (bits != 0) {
                    int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    EngineRank r = ranks[i];
                    if (r.beginStep(now) > 0) {
                        ran |= 1L << i;
                        long cpu = r.cpuNanos();
                        if (cpu > 0) {
                            r.stepStartsAt(now + cpu); // the GPU starts once the engine core scheduled the step
                        }
                        pass = Math.max(pass, r.stepNanos());
                        any = true;
                    }
                }
                stepped[w] = ran;
            }
            if (!any) {
                boolean retry = false;
                for (EngineRank r : ranks) {
                    retry |= r.hasWork() && r.scheduler().preemptedLastStep();
                }
                if (retry) {
                    // a rank preempted its only running request and, per vLLM, admitted nothing in that step:
                    // the next step (same instant, no work done) can admit
                    armed = true;
                    queue.schedule(now, Phase.STEP_START, stableId, this, START, 0);
                    return;
                }
                for (EngineRank r : ranks) {
                    if (r.hasWork() && !r.awaitingCopies()) {
                        throw r.stuck();
                    }
                }
                return;
            }
            busy = true;
            passStart = now;
            queue.schedule(now + pass, Phase.PASS_COMPLETION, stableId, this, END, 0);
        } else {
            busy = false;
            long pass = now - passStart;
            RankBits.endSteps(ranks, stepped, now, pass);
            boolean more = RankBits.retainRanksWithWork(ranks, active);
            if (more) {
                armed = true;
                queue.schedule(now, Phase.STEP_START, stableId, this, START, 0);
            }
        }
    }
}
