package io.servesim.report;

import io.servesim.metrics.EngineCounters;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.Stats;
import io.servesim.run.RunResult;

/** Derives the {@link Summary} from a run's raw records (metrics are computed at the end, from timestamps). */
public final class Summaries {
    private static final double NS_TO_MS = 1e-6;

    private Summaries() {}

    /** Computes the summary of a run. */
    public static Summary of(RunResult result) {
        RequestLog log = result.log();
        EngineCounters c = result.counters();
        int n = log.size();
        double[] ttft = new double[n];
        double[] tpot = new double[n];
        double[] e2e = new double[n];
        double[] queue = new double[n];
        int nc = 0;
        int nt = 0;
        long completed = 0;
        long rejected = 0;
        long incomplete = 0;
        long capped = 0;
        long inTokens = 0;
        long outTokens = 0;
        for (int i = 0; i < n; i++) {
            if (log.status(i) == io.servesim.metrics.RequestStatus.INCOMPLETE) {
                incomplete++;
                continue;
            }
            if (!log.status(i).completed()) {
                rejected++;
                continue;
            }
            completed++;
            if (log.status(i) == io.servesim.metrics.RequestStatus.LENGTH_CAPPED) {
                capped++;
            }
            long arrival = log.arrivalNanos(i);
            ttft[nc] = (log.firstTokenNanos(i) - arrival) * NS_TO_MS;
            e2e[nc] = (log.lastTokenNanos(i) - arrival) * NS_TO_MS;
            queue[nc] = (log.firstScheduledNanos(i) - arrival) * NS_TO_MS;
            nc++;
            int out = log.outputTokens(i);
            if (out >= 2) {
                tpot[nt++] = (log.lastTokenNanos(i) - log.firstTokenNanos(i)) * NS_TO_MS / (out - 1);
            }
            inTokens += log.inputTokens(i);
            outTokens += out;
        }
        double durationMs = result.endNanos() * NS_TO_MS;
        double seconds = durationMs / 1000.0;
        return new Summary(
                result.requestsCreated(),
                completed,
                rejected,
                incomplete,
                capped,
                durationMs,
                inTokens,
                outTokens,
                seconds > 0 ? completed / seconds : 0,
                seconds > 0 ? inTokens / seconds : 0,
                seconds > 0 ? outTokens / seconds : 0,
                seconds > 0 ? (inTokens + outTokens) / seconds : 0,
                ratio(c.admissionHitTokens, c.admissionTokens),
                ratio(c.firstAdmissionHitTokens, c.firstAdmissionTokens),
                c.preemptions,
                c.steps,
                c.evictions,
                Stats.of(ttft, nc),
                Stats.of(tpot, nt),
                c.itlNanos.stats(NS_TO_MS),
                Stats.of(e2e, nc),
                Stats.of(queue, nc),
                imbalance(result.workerBusyNanos()),
                ratio(
                        c.firstAdmissionHitTokens - c.firstAdmissionG2Tokens - c.firstAdmissionRemoteTokens,
                        c.firstAdmissionTokens),
                ratio(c.firstAdmissionG2Tokens, c.firstAdmissionTokens),
                c.g2StoreBytes,
                c.g2LoadBytes,
                c.g2Loads,
                c.g2Evictions,
                c.workersDrained,
                c.workersFailed,
                c.restarts,
                new Summary.Kvcr(
                        c.kvcrStaged,
                        c.kvcrLanded,
                        c.kvcrCompleted,
                        c.kvcrDetached,
                        c.kvcrSourceOnly,
                        c.kvcrAborted,
                        c.kvcrRejectedDraining,
                        c.kvcrRejectedFailed,
                        c.kvcrRejectedCost,
                        c.kvcrMovingPeak,
                        c.kvcrBytes,
                        c.kvcrSourceG2Blocks,
                        c.firstAdmissionRemoteTokens,
                        ratio(c.firstAdmissionRemoteTokens, c.firstAdmissionTokens),
                        c.kvcrRegistryWakeups,
                        c.kvcrPullNanos.stats(NS_TO_MS),
                        c.kvcrParkedNanos.stats(NS_TO_MS)),
                result.ranks(),
                result.badLinesSkipped(),
                result.badLineSamples());
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
