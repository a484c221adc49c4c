package io.servesim.report;

import io.servesim.run.RunCounters;
import io.servesim.run.RunResult;

/** Derives the {@link Summary} from a run's raw records (metrics are computed at the end, from timestamps). */
public final class Summaries {
    private static final double NS_TO_MS = 1e-6;

    private Summaries() {}

    /** Computes the summary of a run. */
    public static Summary of(RunResult result) {
        RunCounters c = result.counters();
        io.servesim.metrics.RequestMetrics m = result.metrics();
        long completed = m.completed;
        long inTokens = m.inputTokens;
        long outTokens = m.outputTokens;
        boolean exact = m.ttftNanos.exact()
                && m.tpotPicos.exact()
                && m.e2eNanos.exact()
                && m.queueNanos.exact()
                && c.itlNanos().exact();
        double durationMs = result.endNanos() * NS_TO_MS;
        double seconds = durationMs / 1000.0;
        return new Summary(
                result.requestsCreated(),
                completed,
                m.rejected,
                m.incomplete,
                m.abandoned,
                result.config().workload().clientTimeoutS() == null ? null : m.timedOut,
                m.lengthCapped,
                durationMs,
                inTokens,
                outTokens,
                seconds > 0 ? completed / seconds : 0,
                seconds > 0 ? inTokens / seconds : 0,
                seconds > 0 ? outTokens / seconds : 0,
                seconds > 0 ? (inTokens + outTokens) / seconds : 0,
                ratio(c.admissionHitTokens(), c.admissionTokens()),
                ratio(c.firstAdmissionHitTokens(), c.firstAdmissionTokens()),
                c.preemptions(),
                c.steps(),
                c.evictions(),
                m.ttftNanos.stats(NS_TO_MS),
                m.tpotPicos.stats(NS_TO_MS * 1e-3),
                c.itlNanos().stats(NS_TO_MS),
                m.e2eNanos.stats(NS_TO_MS),
                m.queueNanos.stats(NS_TO_MS),
                exact ? "exact" : "hdr_histogram_3_significant_digits",
                imbalance(result.workerBusyNanos()),
                ratio(
                        c.firstAdmissionHitTokens() - c.firstAdmissionG2Tokens() - c.firstAdmissionRemoteTokens(),
                        c.firstAdmissionTokens()),
                ratio(c.firstAdmissionG2Tokens(), c.firstAdmissionTokens()),
                c.g2StoreBytes(),
                c.g2LoadBytes(),
                c.g2Loads(),
                c.g2Evictions(),
                c.workersDrained(),
                c.workersFailed(),
                c.restarts(),
                new Summary.TokenCounts(
                        c.admissionTokens(),
                        c.admissionHitTokens(),
                        c.firstAdmissionTokens(),
                        c.firstAdmissionHitTokens(),
                        c.firstAdmissionG2Tokens(),
                        c.firstAdmissionRemoteTokens()),
                new Summary.Kvcr(
                        c.kvcrStaged(),
                        c.kvcrLanded(),
                        c.kvcrCompleted(),
                        c.kvcrDetached(),
                        c.kvcrSourceOnly(),
                        c.kvcrAborted(),
                        c.kvcrRejectedDraining(),
                        c.kvcrRejectedFailed(),
                        c.kvcrRejectedCost(),
                        c.kvcrMovingPeak(),
                        c.kvcrBytes(),
                        c.kvcrSourceG2Blocks(),
                        c.firstAdmissionRemoteTokens(),
                        ratio(c.firstAdmissionRemoteTokens(), c.firstAdmissionTokens()),
                        c.kvcrRegistryWakeups(),
                        c.kvcrPullNanos().stats(NS_TO_MS),
                        c.kvcrParkedNanos().stats(NS_TO_MS)),
                result.ranks(),
                result.deployment(),
                result.badLinesSkipped(),
                result.badLineSamples(),
                pools(result, seconds),
                pd(result, seconds),
                client(result));
    }

    /** The client's view of the run ({@code output.client_frontend}), or null without one. */
    private static io.servesim.metrics.ClientView.Latencies client(RunResult result) {
        io.servesim.config.ClientFrontend f = result.config().output().clientFrontend();
        if (f == null) {
            return null;
        }
        return io.servesim.metrics.ClientView.of(result.log(), f).latencies();
    }

    private static Summary.Pd pd(RunResult result, double seconds) {
        io.servesim.run.PdResult p = result.pd();
        if (p == null) {
            return null;
        }
        io.servesim.engine.PdTransfers.Totals t = p.transfers();
        double capacity = p.nicGbytesPerS() * 1e9 * p.prefillWorkers() * seconds;
        return new Summary.Pd(
                t.handoffs(),
                t.transfers(),
                t.landed(),
                t.aborted(),
                t.cancelled(),
                t.expired(),
                t.reprefills(),
                t.localPrefills(),
                t.bytes(),
                t.tokens(),
                t.movingPeak(),
                capacity > 0 ? t.bytes() / capacity : 0,
                t.transferNanos().stats(NS_TO_MS),
                t.waitNanos().stats(NS_TO_MS),
                p.prefillNanos().stats(NS_TO_MS),
                p.decodeFirstTokenNanos().stats(NS_TO_MS));
    }

    private static java.util.List<Summary.Pool> pools(RunResult result, double seconds) {
        java.util.List<Summary.Pool> out = new java.util.ArrayList<>();
        for (io.servesim.run.PoolResult p : result.pools()) {
            io.servesim.metrics.RequestMetrics m = p.metrics();
            out.add(new Summary.Pool(
                    p.name(),
                    p.firstWorker(),
                    p.workers(),
                    p.deployment(),
                    p.requestsRouted(),
                    m.completed,
                    m.rejected,
                    m.outputTokens,
                    seconds > 0 ? m.outputTokens / seconds : 0,
                    m.ttftNanos.stats(NS_TO_MS),
                    m.tpotPicos.stats(NS_TO_MS * 1e-3),
                    m.e2eNanos.stats(NS_TO_MS)));
        }
        return out;
    }

    /** Max over workers of busy time / mean busy time (1 = perfectly balanced; 0 when nothing ran). */
    static double imbalance(long[] busy) {
        long max = 0;
        double sum = 0;
        for (long b : busy) {
            max = Math.max(max, b);
            sum += b;
        }
        return sum == 0 ? 0 : max / (sum / busy.length);
    }

    private static double ratio(long a, long b) {
        return b == 0 ? 0 : (double) a / b;
    }
}
