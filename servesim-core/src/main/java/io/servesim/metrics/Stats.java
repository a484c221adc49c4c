package io.servesim.metrics;

import java.util.Arrays;

/** Count, mean, min, max and exact p50/p90/p95/p99 of one metric (in the unit it was computed in). */
public record Stats(long count, double mean, double min, double max, double p50, double p90, double p95, double p99) {
    /** Statistics of no samples: all zero. */
    public static final Stats EMPTY = new Stats(0, 0, 0, 0, 0, 0, 0, 0);

    /** Exact statistics of the given values (the array is sorted in place). */
    public static Stats of(double[] values, int n) {
        if (n == 0) {
            return EMPTY;
        }
        Arrays.sort(values, 0, n);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += values[i];
        }
        return new Stats(
                n,
                sum / n,
                values[0],
                values[n - 1],
                percentile(values, n, 50),
                percentile(values, n, 90),
                percentile(values, n, 95),
                percentile(values, n, 99));
    }

    /** Linear interpolation between closest ranks (numpy's default) over sorted {@code values[0, n)}. */
    public static double percentile(double[] sorted, int n, double p) {
        double rank = p / 100.0 * (n - 1);
        int lo = (int) Math.floor(rank);
        int hi = (int) Math.ceil(rank);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
    }
}
