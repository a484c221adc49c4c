package io.servesim.cli.bench;

import io.servesim.report.Summary;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Arrays;

/**
 * One cell of the fixture table: a cold replay (the first in its JVM), {@code warmup} discarded replays, then
 * {@code repeat} timed ones (warm = their median). Every replay must give the same canonical digest.
 *
 * @param workers workers
 * @param dp attention-DP ranks per worker
 * @param arm the arm
 * @param requests requests replayed
 * @param virtualMs simulated duration
 * @param replayMsWarm median replay wall time of the repeats
 * @param usPerRequestCold cold replay wall time per request
 * @param usPerRequestWarm warm (median) replay wall time per request
 * @param processMs whole-process wall time (spawn to exit) when the cell ran in its own JVM, else -1
 * @param peakHeapMb peak heap used in the cell's JVM (sum of the heap pools' peaks)
 * @param canonicalSha256 SHA-256 of the run's canonical.json
 * @param kvcrStaged KVCR pulls staged
 * @param kvcrCompleted KVCR pulls consumed
 * @param kvcrMovingPeak most pulls moving at once
 * @param kvcrRegistryWakeups rank wake-ups by the KVCR registry
 * @param preemptions engine preemptions
 * @param allocatedMbWarm the least the simulation thread allocated in one timed replay, in MB (10^6 bytes)
 */
public record FixtureCell(
        int workers,
        int dp,
        String arm,
        long requests,
        double virtualMs,
        double replayMsWarm,
        double usPerRequestCold,
        double usPerRequestWarm,
        double processMs,
        double peakHeapMb,
        String canonicalSha256,
        long kvcrStaged,
        long kvcrCompleted,
        long kvcrMovingPeak,
        long kvcrRegistryWakeups,
        long preemptions,
        double allocatedMbWarm) {

    /** Columns of fixture.csv, in order. */
    public static final String CSV_HEADER = "workers,dp,arm,requests,virtual_ms,replay_ms,us_per_request_cold,"
            + "us_per_request_warm,process_ms,peak_heap_mb,canonical_sha256,kvcr_staged,kvcr_completed,"
            + "kvcr_moving_peak,kvcr_registry_wakeups,preemptions,allocated_mb_per_replay";

    /**
     * Warm-up continues until at least this many requests were replayed (small cells need it to get JIT-warm): after
     * 100,000 the W8 {@code kvcr-hinted} cell was still recompiling in some JVMs (9 or 31 µs/request by JVM), after
     * 300,000 it gave 8.0–8.4 in five of five. A JVM whose young generation the collector grew can still run a small
     * cell about 3.5x slower: read W8 cells over several JVMs (docs/performance.md).
     */
    public static final long WARMUP_MIN_REQUESTS = 300_000;

    /**
     * Measures a cell in this JVM: one cold replay, at least {@code warmup} discarded replays (more until
     * {@link #WARMUP_MIN_REQUESTS} requests have been replayed, when {@code warmup} &gt; 0), then {@code repeat}
     * timed ones.
     */
    public static FixtureCell measure(int workers, int dp, String arm, int warmup, int repeat) {
        var config = Fixture.config(workers, dp, arm);
        Fixture.Measurement cold = Fixture.replay(config);
        long replayed = cold.requests();
        for (int i = 0; i < warmup || (warmup > 0 && replayed < WARMUP_MIN_REQUESTS); i++) {
            check(cold, Fixture.replay(config));
            replayed += Math.max(1, cold.requests());
        }
        long[] warm = new long[Math.max(1, repeat)];
        long leastAllocated = Long.MAX_VALUE;
        for (int i = 0; i < warm.length; i++) {
            Fixture.Measurement m = repeat == 0 ? cold : Fixture.replay(config);
            check(cold, m);
            warm[i] = m.replayNanos();
            leastAllocated = Math.min(leastAllocated, m.allocatedBytes());
        }
        Arrays.sort(warm);
        double median = warm.length % 2 == 1
                ? warm[warm.length / 2]
                : (warm[warm.length / 2 - 1] + warm[warm.length / 2]) / 2.0;
        Summary s = cold.summary();
        long n = Math.max(1, cold.requests());
        return new FixtureCell(
                workers,
                dp,
                arm,
                cold.requests(),
                cold.virtualNanos() / 1e6,
                median / 1e6,
                cold.replayNanos() / 1e3 / n,
                median / 1e3 / n,
                -1,
                jvmPeakHeapMb(),
                cold.canonicalSha256(),
                s.kvcr().staged(),
                s.kvcr().completed(),
                s.kvcr().movingPeak(),
                s.kvcr().registryWakeups(),
                s.preemptions(),
                leastAllocated / 1e6);
    }

    private static void check(Fixture.Measurement first, Fixture.Measurement again) {
        if (!first.canonicalSha256().equals(again.canonicalSha256())) {
            throw new IllegalStateException("non-deterministic replay: canonical digest " + first.canonicalSha256()
                    + " then " + again.canonicalSha256());
        }
    }

    /** Sum over the heap memory pools of their peak usage, in MiB. */
    static double jvmPeakHeapMb() {
        long peak = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
                peak += pool.getPeakUsage().getUsed();
            }
        }
        return peak / (1024.0 * 1024.0);
    }

    /** The same cell with the whole-process time measured by the parent. */
    public FixtureCell withProcessMs(double ms) {
        return new FixtureCell(
                workers,
                dp,
                arm,
                requests,
                virtualMs,
                replayMsWarm,
                usPerRequestCold,
                usPerRequestWarm,
                ms,
                peakHeapMb,
                canonicalSha256,
                kvcrStaged,
                kvcrCompleted,
                kvcrMovingPeak,
                kvcrRegistryWakeups,
                preemptions,
                allocatedMbWarm);
    }

    /** One fixture.csv row (Locale.ROOT numbers). */
    public String csvRow() {
        return String.join(
                ",",
                Integer.toString(workers),
                Integer.toString(dp),
                arm,
                Long.toString(requests),
                fmt(virtualMs, 3),
                fmt(replayMsWarm, 3),
                fmt(usPerRequestCold, 2),
                fmt(usPerRequestWarm, 2),
                processMs < 0 ? "" : fmt(processMs, 0),
                fmt(peakHeapMb, 1),
                canonicalSha256,
                Long.toString(kvcrStaged),
                Long.toString(kvcrCompleted),
                Long.toString(kvcrMovingPeak),
                Long.toString(kvcrRegistryWakeups),
                Long.toString(preemptions),
                fmt(allocatedMbWarm, 1));
    }

    static String fmt(double v, int decimals) {
        return String.format(java.util.Locale.ROOT, "%." + decimals + "f", v);
    }
}
