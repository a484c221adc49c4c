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
        long incomplete,
        long abandoned,
        Long timedOut,
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
        String percentileMethod,
        double loadImbalanceRatio,
        double g1FirstAdmissionReuseRatio,
        double g2FirstAdmissionReuseRatio,
        long g2StoreBytes,
        long g2LoadBytes,
        long g2Loads,
        long g2Evictions,
        long workersDrained,
        long workersFailed,
        long restarts,
        TokenCounts tokenCounts,
        Kvcr kvcr,
        java.util.List<io.servesim.run.RankStats> ranks,
        io.servesim.timing.Deployment deployment,
        long badLinesSkipped,
        java.util.List<String> badLineSamples,
        java.util.List<Pool> pools,
        Pd pd,
        io.servesim.metrics.ClientView.Latencies client) {

    /**
     * A disaggregated run's prefill/decode handoffs ({@code summary.json} key {@code pd}, present only with {@code
     * cluster.mode: disaggregated}; see docs/pd.md).
     *
     * @param handoffs prefills handed to a decode worker
     * @param transfers transfers staged
     * @param landed transfers whose bytes landed
     * @param aborted transfers cancelled because their prefill worker failed
     * @param cancelled transfers cancelled because their decode worker failed
     * @param expired prefill holds freed when their lease expired (their decode worker failed before reading them)
     * @param reprefills decode requests that recomputed their prompt because their prefill worker failed
     * @param localPrefills requests prefilled on their decode worker
     * @param bytes bytes charged by staged transfers
     * @param tokens prompt tokens moved
     * @param movingPeak the most transfers moving at once
     * @param linkUtilization bytes over the prefill workers' NIC egress capacity for the run's duration (0 when the
     *     NICs are unlimited)
     * @param transferMs staging to landing of landed transfers
     * @param transferWaitMs prefill end to staging (the decode worker reaching the request)
     * @param prefillMs arrival to prefill end of handed-off requests (prefill queueing and compute)
     * @param decodeFirstTokenMs transfer landing to first token (decode admission and its one-token step)
     */
    public record Pd(
            long handoffs,
            long transfers,
            long landed,
            long aborted,
            long cancelled,
            long expired,
            long reprefills,
            long localPrefills,
            long bytes,
            long tokens,
            long movingPeak,
            double linkUtilization,
            Stats transferMs,
            Stats transferWaitMs,
            Stats prefillMs,
            Stats decodeFirstTokenMs) {}

    /**
     * One pool of a heterogeneous fleet ({@code summary.json} key {@code pools}, present only with {@code
     * cluster.pools}; see docs/metrics.md).
     *
     * @param name the pool's name
     * @param firstWorker its first worker
     * @param workers its workers
     * @param deployment what its engine and timing resolved to
     * @param requestsRouted requests routed to its workers
     * @param completed requests that completed on it
     * @param rejected requests it rejected
     * @param outputTokens output tokens of the requests that ended on it
     * @param outputThroughputTokS those tokens over the run's duration
     * @param ttftMs TTFT of its completed requests
     * @param tpotMs TPOT of its completed requests
     * @param e2eMs E2E of its completed requests
     */
    public record Pool(
            String name,
            int firstWorker,
            int workers,
            io.servesim.timing.Deployment deployment,
            long requestsRouted,
            long completed,
            long rejected,
            long outputTokens,
            double outputThroughputTokS,
            Stats ttftMs,
            Stats tpotMs,
            Stats e2eMs) {}

    /**
     * The KVCR counters ({@code summary.json} key {@code kvcr}; see docs/metrics.md).
     *
     * @param staged pulls staged
     * @param landed pulls whose bytes all arrived at their destination
     * @param completed landed pulls consumed by their request's admission
     * @param detached landed pulls whose request released the blocks before consuming them
     * @param sourceOnly pulls whose destination worker failed while bytes were in flight
     * @param aborted pulls cancelled because their source worker failed
     * @param rejectedDrainingSource pulls not staged: the source was draining
     * @param rejectedFailedSource pulls not staged: the source had failed
     * @param rejectedCost pulls not staged: {@code decision: cost} found recomputing faster
     * @param movingPeak the most pulls moving at once
     * @param bytes bytes pulled
     * @param sourceG2Blocks pulled blocks read from the source's G2 pool
     * @param remoteTokens prompt tokens reused from pulls at first admissions
     * @param remoteFirstAdmissionReuseRatio remote tokens / prompt tokens at first admissions
     * @param registryWakeups ranks woken by the registry (its pulls changed state), summed
     * @param pullMs staging-to-landing time of landed pulls
     * @param parkedMs staging-to-first-byte time of landed pulls
     */
    public record Kvcr(
            long staged,
            long landed,
            long completed,
            long detached,
            long sourceOnly,
            long aborted,
            long rejectedDrainingSource,
            long rejectedFailedSource,
            long rejectedCost,
            long movingPeak,
            long bytes,
            long sourceG2Blocks,
            long remoteTokens,
            double remoteFirstAdmissionReuseRatio,
            long registryWakeups,
            Stats pullMs,
            Stats parkedMs) {}

    /**
     * The raw token counts behind the reuse ratios.
     *
     * @param admissionTokens tokens known at every admission (first and resumed)
     * @param admissionHitTokens of those, already in KV (prefix hits, loads, pulls)
     * @param firstAdmissionTokens prompt tokens at first admissions
     * @param firstAdmissionHitTokens of those, not computed (G1 hits, G2 loads, KVCR pulls)
     * @param firstAdmissionG2Tokens of the hits, loaded from G2
     * @param firstAdmissionRemoteTokens of the hits, pulled from another worker
     */
    public record TokenCounts(
            long admissionTokens,
            long admissionHitTokens,
            long firstAdmissionTokens,
            long firstAdmissionHitTokens,
            long firstAdmissionG2Tokens,
            long firstAdmissionRemoteTokens) {}
}
