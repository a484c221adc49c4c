package io.servesim.report;

import io.servesim.metrics.Stats;

/**
 * The run summary: counts, throughput, reuse and latency statistics in milliseconds. Field names map to the
 * snake_case keys of summary.json (see docs/metrics.md for exact definitions).
 */
public record Summary(
        long requests,
        long completed,
        long rejected,
        long lengthCapped,
        double durationMs,
        long totalInputTokens,
        long totalOutputTokens,
        double requestThroughputRps,
        double inputThroughputTokS,
        double outputThroughputTokS,
        double totalThroughputTokS,
        double prefixReuseRatio,
        double firstAdmissionPrefixReuseRatio,
        long preemptions,
        long steps,
        long evictions,
        Stats ttftMs,
        Stats tpotMs,
        Stats itlMs,
        Stats e2eMs,
        Stats queueMs,
        double loadImbalanceRatio,
        double g1FirstAdmissionReuseRatio,
        double g2FirstAdmissionReuseRatio,
        long g2StoreBytes,
        long g2LoadBytes,
        long g2Loads,
        long g2Evictions,
        long kvcrStaged,
        long kvcrLanded,
        long kvcrCompleted,
        long kvcrDetached,
        long kvcrRejectedDraining,
        long workersDrained,
        long kvcrBytes,
        long kvcrRemoteTokens,
        double remoteFirstAdmissionReuseRatio,
        Stats kvcrPullMs,
        java.util.List<io.servesim.run.RankStats> ranks,
        long badLinesSkipped,
        java.util.List<String> badLineSamples) {}
