package io.servesim.engine;

import io.servesim.timing.StepBatch;
import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;
import java.util.LinkedHashMap;
import java.util.Map;

/** Drives one {@link VllmScheduler} step by step with a 10 ms step, for hand-computed rule tests. */
final class SchedulerKit {
    static final long STEP_NANOS = 10_000_000L;

    final SchedulerCounters counters = new SchedulerCounters(Long.MAX_VALUE);
    final SchedulerSettings settings;
    final VllmScheduler scheduler;
    final StepBatch batch = new StepBatch();
    final ObjectArrayList<Sequence> finished = new ObjectArrayList<>();
    long nowNanos;
    private int nextTokenBase = 1_000;

    SchedulerKit(SchedulerSettings settings) {
        this.settings = settings;
        this.scheduler = new VllmScheduler(settings, counters);
    }

    /** A scheduler with the given budget and pool and otherwise permissive settings. */
    static SchedulerKit of(int maxNumSeqs, int budget, int blockSize, int numGpuBlocks) {
        return new SchedulerKit(new SchedulerSettings(
                maxNumSeqs,
                budget,
                0,
                true,
                (numGpuBlocks - 1) * blockSize,
                blockSize,
                numGpuBlocks,
                true,
                false,
                false));
    }

    /** Fresh, never-shared token ids. */
    int[] uniqueTokens(int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = nextTokenBase++;
        }
        return t;
    }

    Sequence add(int id, int[] prompt, int outputs) {
        Sequence s = new Sequence(new Request(id, -1, 0, true, nowNanos, prompt, outputs, id), settings.maxModelLen());
        scheduler.addRequest(s);
        return s;
    }

    Sequence add(int id, int promptTokens, int outputs) {
        return add(id, uniqueTokens(promptTokens), outputs);
    }

    /** Runs schedule() only; returns request id → tokens scheduled, in schedule order. */
    Map<Integer, Integer> schedule() {
        scheduler.schedule(nowNanos, batch);
        Map<Integer, Integer> out = new LinkedHashMap<>();
        for (int i = 0; i < scheduler.scheduledCount(); i++) {
            out.put(scheduler.scheduled(i).request().id(), scheduler.scheduledTokens(i));
        }
        return out;
    }

    /** Applies the outputs of the scheduled step at now + 10 ms. */
    void finishStep() {
        nowNanos += STEP_NANOS;
        scheduler.applyOutputs(nowNanos, finished);
    }

    /** One whole step; returns what was scheduled. */
    Map<Integer, Integer> step() {
        Map<Integer, Integer> m = schedule();
        finishStep();
        return m;
    }

    int[] runningIds() {
        int[] ids = new int[scheduler.numRunning()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = scheduler.running(i).request().id();
        }
        return ids;
    }
}
