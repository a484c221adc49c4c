package io.servesim.config;

/**
 * What a replay writes besides summary.json and canonical.json, and how it keeps per-request results.
 *
 * @param requestsCsv write requests.csv (kept in memory, written at the end)
 * @param streamRequests write requests.csv.zst while the run goes instead (rows are not kept in memory)
 * @param exactPercentileSamples samples per metric kept exact; beyond, HdrHistogram with 3 significant digits
 * @param timeseriesTickS virtual seconds between time-series samples (0: no time series)
 * @param timeseriesPerWorker also sample every worker at each tick
 */
public record OutputConfig(
        boolean requestsCsv,
        boolean streamRequests,
        long exactPercentileSamples,
        double timeseriesTickS,
        boolean timeseriesPerWorker) {
    /** Validates the output settings. */
    public OutputConfig {
        Check.atLeast("exact_percentile_samples", exactPercentileSamples, 1);
        Check.atLeast("timeseries_tick_s", timeseriesTickS, 0.0);
    }
}
