package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What a replay writes besides summary.json and canonical.json, and how it keeps per-request results.
 *
 * @param requestsCsv write requests.csv (kept in memory, written at the end)
 * @param streamRequests write requests.csv.zst while the run goes instead (rows are not kept in memory)
 * @param exactPercentileSamples samples per metric kept exact; beyond, HdrHistogram with 3 significant digits
 * @param timeseriesTickS virtual seconds between time-series samples (0: no time series; else at least 1 ms)
 * @param timeseriesPerWorker also sample every worker at each tick
 * @param clientFrontend also report latencies as a streaming HTTP client would time them, with this frontend
 *     (summary.json's {@code client}; docs/metrics.md), or null
 */
public record OutputConfig(
        boolean requestsCsv,
        boolean streamRequests,
        long exactPercentileSamples,
        double timeseriesTickS,
        boolean timeseriesPerWorker,
        @JsonInclude(JsonInclude.Include.NON_NULL) ClientFrontend clientFrontend) {
    /** The shortest time-series tick: about one engine step (a shorter one samples the same state again and again). */
    public static final double MIN_TICK_S = 0.001;

    /** Validates the output settings. */
    public OutputConfig {
        Check.atLeast("exact_percentile_samples", exactPercentileSamples, 1);
        Check.atLeast("timeseries_tick_s", timeseriesTickS, 0.0);
        if (timeseriesTickS > 0 && timeseriesTickS < MIN_TICK_S) {
            throw new ConfigException(
                    "timeseries_tick_s",
                    "must be 0 (no time series) or at least " + MIN_TICK_S + " s (one sample per engine step at most),"
                            + " got " + timeseriesTickS);
        }
        if (clientFrontend != null && streamRequests) {
            // the client's view counts the requests each token's rank served then, from every request's record
            throw new ConfigException(
                    "client_frontend",
                    "needs the request rows kept in memory: set output.stream_requests: false (or drop"
                            + " client_frontend)");
        }
    }
}
