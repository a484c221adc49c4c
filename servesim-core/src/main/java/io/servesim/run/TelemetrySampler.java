package io.servesim.run;

import io.servesim.engine.SchedulerCounters;
import io.servesim.metrics.TimeSeries;
import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;

/**
 * The time-series sampler: one TELEMETRY event per tick, reading cluster totals kept up to date as ranks report
 * load changes ({@link LoadTracker}: no scan of ranks; with per-worker rows, one pass over workers per tick). It
 * stops rescheduling when nothing but fleet events is left (no arrival, step or copy can follow: the workload has
 * ended), so it never keeps a finished run alive, however far in the future a {@code cluster.events} entry lies;
 * and it skips the ticks of an idle stretch (no event until the next one), so a far-future arrival costs one row.
 */
final class TelemetrySampler implements EventHandler {
    private final EventQueue queue;
    private final long tickNanos;
    private final boolean perWorker;
    private final TimeSeries series;
    private final Cluster cluster;
    private final LoadTracker load;
    private final SchedulerCounters counters;
    private final RunRecorder recorder;
    private final FleetEvents fleet;
    private final long usableBlocksTotal;
    private long lastPrompt;
    private long lastGenerated;
    private long lastCompleted;
    private long lastPullBytes;
    private long[] lastWorkerPrompt;
    private long[] lastWorkerGenerated;
    private long[] lastWorkerCompleted;

    // events in the queue that stand for no work: the clients' deadline (Dispatcher.deadlineEvents)
    private final java.util.function.IntSupplier deadlineEvents;

    TelemetrySampler(
            EventQueue queue,
            long tickNanos,
            boolean perWorker,
            TimeSeries series,
            Cluster cluster,
            LoadTracker load,
            SchedulerCounters counters,
            RunRecorder recorder,
            FleetEvents fleet,
            java.util.function.IntSupplier deadlineEvents) {
        this.queue = queue;
        this.deadlineEvents = deadlineEvents;
        this.tickNanos = tickNanos;
        this.perWorker = perWorker;
        this.series = series;
        this.cluster = cluster;
        this.load = load;
        this.counters = counters;
        this.recorder = recorder;
        this.fleet = fleet;
        long usable = 0;
        for (int w = 0; w < cluster.numWorkers(); w++) {
            usable += (long) cluster.ranksOf(w) * cluster.usableBlocksPerRank(w);
        }
        this.usableBlocksTotal = usable;
    }

    /** Schedules the first tick (a tick of 0 means no time series). */
    void start() {
        if (tickNanos > 0) {
            queue.schedule(tickNanos, Phase.TELEMETRY, 0, this, 0, 0);
        }
    }

    @Override
    public void onEvent(int kind, long payload) {
        long now = queue.nowNanos();
        double seconds = tickNanos / 1e9;
        long prompt = counters.promptTokensComputed();
        long generated = counters.generatedTokens();
        long done = recorder.metrics().completed;
        // KVCR pulls, or in a disaggregated run (KVCR off) the prefill-to-decode transfers
        long pullBytes = cluster.kvcr() != null
                ? cluster.kvcr().bytesPulled()
                : cluster.pd() != null ? cluster.pd().bytesStaged() : 0;
        long g2Capacity = cluster.g2().capacityBlocks();
        series.add(
                now,
                -1,
                (int) load.totalRunning(),
                (int) load.totalWaiting(),
                usableBlocksTotal == 0 ? 0 : 100.0 * load.totalUsedBlocks() / usableBlocksTotal,
                g2Capacity == 0 ? 0 : 100.0 * cluster.g2().usedBlocks() / g2Capacity,
                (prompt - lastPrompt) / seconds,
                (generated - lastGenerated) / seconds,
                done - lastCompleted,
                cluster.movingPulls() + (cluster.pd() == null ? 0 : cluster.pd().moving()),
                (pullBytes - lastPullBytes) / seconds);
        lastPrompt = prompt;
        lastGenerated = generated;
        lastCompleted = done;
        lastPullBytes = pullBytes;
        if (perWorker) {
            perWorker(now, seconds);
        }
        if (queue.size() > fleet.pending() + deadlineEvents.getAsInt()) {
            // nothing changes before the next event: skip the ticks in between (their rows would repeat this one's
            // gauges with zero rates) and sample again at the last tick at or before it; so a trace row or an
            // event years ahead costs one row, not one per tick
            long next = now + tickNanos;
            long gap = queue.peekTimeNanos() - now;
            if (gap > 2 * tickNanos) {
                next = now + gap / tickNanos * tickNanos;
            }
            queue.schedule(next, Phase.TELEMETRY, 0, this, 0, 0);
        }
    }

    private void perWorker(long now, double seconds) {
        int workers = cluster.numWorkers();
        if (lastWorkerPrompt == null) {
            lastWorkerPrompt = new long[workers];
            lastWorkerGenerated = new long[workers];
            lastWorkerCompleted = new long[workers];
        }
        for (int w = 0; w < workers; w++) {
            int dp = cluster.ranksOf(w);
            int first = cluster.firstRankOf(w);
            int run = 0;
            int wait = 0;
            long used = 0;
            long prompt = 0;
            long decode = 0;
            for (int r = 0; r < dp; r++) {
                int g = first + r;
                run += load.running(g);
                wait += load.waiting(g);
                used += load.usedBlocks(g);
                prompt += cluster.rank(g).prefillTokens();
                decode += cluster.rank(g).decodeTokens();
            }
            long completed = recorder.completedOn(w);
            series.add(
                    now,
                    w,
                    run,
                    wait,
                    100.0 * used / ((long) dp * cluster.usableBlocksPerRank(w)),
                    0,
                    (prompt - lastWorkerPrompt[w]) / seconds,
                    (decode - lastWorkerGenerated[w]) / seconds,
                    completed - lastWorkerCompleted[w],
                    0,
                    0);
            lastWorkerPrompt[w] = prompt;
            lastWorkerGenerated[w] = decode;
            lastWorkerCompleted[w] = completed;
        }
    }
}
