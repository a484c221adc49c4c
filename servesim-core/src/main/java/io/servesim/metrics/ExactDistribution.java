package io.servesim.metrics;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrays;

/**
 * An exact distribution of long values stored as value → count, so memory grows with the number of distinct values
 * (simulated latencies repeat a lot: gaps are sums of step times), not with the number of samples. Percentiles are
 * exact, by linear interpolation between closest ranks (numpy's default, as vLLM's benchmark scripts use).
 */
public final class ExactDistribution {
    private final Long2LongOpenHashMap counts = new Long2LongOpenHashMap();
    private long n;
    private double sum;
    private long min = Long.MAX_VALUE;
    private long max = Long.MIN_VALUE;

    /** Records one value. */
    public void record(long value) {
        counts.addTo(value, 1);
        n++;
        sum += value;
        if (value < min) {
            min = value;
        }
        if (value > max) {
            max = value;
        }
    }

    /** Number of values recorded. */
    public long count() {
        return n;
    }

    /** Summarises the values, converting each by {@code scale} (e.g. 1e-6 for ns → ms). */
    public Stats stats(double scale) {
        if (n == 0) {
            return Stats.EMPTY;
        }
        long[] keys = counts.keySet().toLongArray();
        LongArrays.quickSort(keys);
        long[] cum = new long[keys.length];
        long c = 0;
        for (int i = 0; i < keys.length; i++) {
            c += counts.get(keys[i]);
            cum[i] = c;
        }
        return new Stats(
                n,
                sum / n * scale,
                min * scale,
                max * scale,
                percentile(keys, cum, 50) * scale,
                percentile(keys, cum, 90) * scale,
                percentile(keys, cum, 95) * scale,
                percentile(keys, cum, 99) * scale);
    }

    private double percentile(long[] keys, long[] cum, double p) {
        double rank = p / 100.0 * (n - 1);
        long lo = (long) Math.floor(rank);
        long hi = (long) Math.ceil(rank);
        double vLo = valueAt(keys, cum, lo);
        if (hi == lo) {
            return vLo;
        }
        double vHi = valueAt(keys, cum, hi);
        return vLo + (vHi - vLo) * (rank - lo);
    }

    private static long valueAt(long[] keys, long[] cum, long index) {
        int lo = 0;
        int hi = keys.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cum[mid] > index) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return keys[lo];
    }
}
