package io.servesim.run;

import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;

/**
 * Everything one run produced, before formatting.
 *
 * @param config the configuration that ran
 * @param deployment what the config resolved to (model, GPU, KV pool, timing)
 * @param requestsCreated requests the workload created
 * @param log per-request records (empty when they were streamed to disk)
 * @param timeSeries the cluster (and per-worker) samples at each tick
 * @param metrics per-request summary statistics, accumulated as requests ended
 * @param streamedRequestsSha256 SHA-256 of the streamed requests.csv (uncompressed), or null when rows were kept
 * @param counters engine counters
 * @param endNanos virtual time at which the last request finished (completed or rejected)
 * @param workerBusyNanos per worker, the sum over its ranks of time spent in steps
 * @param workerRequests per worker, requests routed to it
 * @param ranks per-rank statistics, by global rank index
 * @param badLinesSkipped malformed trace rows skipped (with skip_bad_lines)
 * @param badLineSamples the first skipped rows' errors
 * @param pools per pool of {@code cluster.pools}, its deployment and statistics (empty without pools)
 * @param pd the prefill/decode handoffs of a disaggregated run, else null
 */
@SuppressWarnings("ArrayRecordComponent") // primitive columns, never compared with equals
public record RunResult(
        SimConfig config,
        io.servesim.timing.Deployment deployment,
        int requestsCreated,
        RequestLog log,
        io.servesim.metrics.TimeSeries timeSeries,
        io.servesim.metrics.RequestMetrics metrics,
        String streamedRequestsSha256,
        RunCounters counters,
        long endNanos,
        long[] workerBusyNanos,
        long[] workerRequests,
        java.util.List<RankStats> ranks,
        long badLinesSkipped,
        java.util.List<String> badLineSamples,
        java.util.List<PoolResult> pools,
        PdResult pd) {}
