package io.servesim.metrics;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrays;
import org.HdrHistogram.Histogram;

/**
 * A distribution of non-negative long values (nanoseconds, picoseconds, tokens). Values are kept exactly as value →
 * count, so memory grows with the number of distinct values (simulated latencies repeat a lot: inter-token gaps
 * are sums of step times), and percentiles interpolate linearly between closest ranks (numpy's default, as vLLM's
 * benchmark scripts use). When more than {@code exactLimit} distinct sample values would be held, every sample moves
 * to an HdrHistogram with 3 significant digits (percentiles then within 0.1 %), so memory stays bounded on
 * 10 M-request runs. Count, mean, min and max stay exact either way.
 */
public final class LatencyDistribution {
    /** The default exact sample limit. */
    public static final long DEFAULT_EXACT_LIMIT = 1_000_000;

    private long exactLimit = DEFAULT_EXACT_LIMIT;
    private Long2LongOpenHashMap counts = new Long2LongOpenHashMap();
    private Histogram histogram;
    private long n;
    private double sum;
    private long min = Long.MAX_VALUE;
    private long max = Long.MIN_VALUE;

    /** Sets how many distinct sample values may be held exactly (before the first sample is recorded). */
    public LatencyDistribution exactLimit(long samples) {
        this.exactLimit = samples;
        return this;
    }

    /** Records one value (negative values are clamped to 0). */
    public void record(long value) {
        record(value, 1);
    }

    /** Records {@code count} samples of one value (negative values are clamped to 0). */
    public void record(long value, long count) {
        if (count <= 0) {
            return;
        }
        long v = Math.max(0, value);
        n += count;
        sum += (double) v * count;
        if (v < min) {
            min = v;
        }
        if (v > max) {
            max = v;
        }
        if (histogram != null) {
            histogram.recordValueWithCount(v, count);
            return;
        }
        counts.addTo(v, count);
        if (counts.size() > exactLimit) {
            histogram = new Histogram(3);
            for (var e : counts.long2LongEntrySet()) {
                histogram.recordValueWithCount(e.getLongKey(), e.getLongValue());
            }
            counts = null;
        }
    }

    /** Number of values recorded. */
    public long count() {
        return n;
    }

    /** Whether percentiles are exact (false once past the exact limit). */
    public boolean exact() {
        return histogram == null;
    }

    /** "exact" or "hdr_histogram_3_significant_digits", as summary.json states it. */
    public String method() {
        return exact() ? "exact" : "hdr_histogram_3_significant_digits";
    }

    /** Summarises the values, converting each by {@code scale} (e.g. 1e-6 for ns → ms). */
    public Stats stats(double scale) {
        if (n == 0) {
            return Stats.EMPTY;
        }
        if (histogram != null) {
            return new Stats(
                    n,
                    sum / n * scale,
                    min * scale,
                    max * scale,
                    hdr(50) * scale,
                    hdr(90) * scale,
                    hdr(95) * scale,
                    hdr(99) * scale);
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

    /** An HdrHistogram percentile, kept within the exact min and max. */
    private double hdr(double p) {
        return Math.min(max, Math.max(min, histogram.getValueAtPercentile(p)));
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
