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
 *
 * <p>Layout (recording is on the per-step path: every engine step records its inter-token gaps): samples are
 * appended to a small buffer, each packed into one long ({@code value << 20 | count}), and merged into sorted
 * distinct (value, count) arrays when the buffer fills — a radix sort of the buffer and one linear merge — instead
 * of probing a hash map that outgrows the caches. The buffer grows with the distinct values held, so each merge's
 * cost is amortised over as many new samples. The result is the same multiset, so the statistics are identical to
 * keeping a map; the switch to HdrHistogram is decided at the merges (and before any statistic is read) and moves
 * every sample, so its result does not depend on when it happens.
 */
public final class LatencyDistribution {
    /** The default exact sample limit. */
    public static final long DEFAULT_EXACT_LIMIT = 250_000;

    private static final int COUNT_BITS = 20;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final long MAX_PACKED_VALUE = (1L << (63 - COUNT_BITS)) - 1;
    private static final int MIN_BUFFER = 1 << 12;
    private static final int MAX_BUFFER = 1 << 20;

    private long exactLimit = DEFAULT_EXACT_LIMIT;
    private long[] buffer = new long[16];
    private int buffered;
    /** Samples whose value or count does not pack into one long (values past 2^43, counts past 2^20): rare. */
    private Long2LongOpenHashMap unpacked;

    private long[] keys = new long[0];
    private long[] counts = new long[0];
    private int distinct;
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
        if (v > MAX_PACKED_VALUE || count > COUNT_MASK) {
            if (unpacked == null) {
                unpacked = new Long2LongOpenHashMap();
            }
            unpacked.addTo(v, count);
            return;
        }
        if (buffered == buffer.length) {
            int cap = Math.min(MAX_BUFFER, Math.max(MIN_BUFFER, distinct));
            if (buffer.length < cap) {
                buffer = java.util.Arrays.copyOf(buffer, Math.min(cap, buffer.length * 2));
            } else {
                merge();
                if (histogram != null) {
                    histogram.recordValueWithCount(v, count);
                    return;
                }
            }
        }
        buffer[buffered++] = v << COUNT_BITS | count;
    }

    /**
     * Merges the buffer (and unpacked samples) into the sorted distinct arrays; past the limit, switches to
     * HdrHistogram.
     */
    private void merge() {
        if (histogram != null || (buffered == 0 && unpacked == null)) {
            return;
        }
        LongArrays.radixSort(buffer, 0, buffered);
        long[] extraKeys = new long[0];
        long[] extraCounts = new long[0];
        if (unpacked != null) {
            extraKeys = unpacked.keySet().toLongArray();
            LongArrays.radixSort(extraKeys);
            extraCounts = new long[extraKeys.length];
            for (int i = 0; i < extraKeys.length; i++) {
                extraCounts[i] = unpacked.get(extraKeys[i]);
            }
            unpacked = null;
        }
        long[] k = new long[distinct + buffered + extraKeys.length];
        long[] c = new long[k.length];
        int out = 0;
        int i = 0;
        int b = 0;
        int x = 0;
        while (i < distinct || b < buffered || x < extraKeys.length) {
            long next = Long.MAX_VALUE;
            if (i < distinct) {
                next = keys[i];
            }
            if (b < buffered) {
                next = Math.min(next, buffer[b] >>> COUNT_BITS);
            }
            if (x < extraKeys.length) {
                next = Math.min(next, extraKeys[x]);
            }
            long total = 0;
            if (i < distinct && keys[i] == next) {
                total += counts[i++];
            }
            while (b < buffered && buffer[b] >>> COUNT_BITS == next) {
                total += buffer[b++] & COUNT_MASK;
            }
            if (x < extraKeys.length && extraKeys[x] == next) {
                total += extraCounts[x++];
            }
            k[out] = next;
            c[out] = total;
            out++;
        }
        keys = k;
        counts = c;
        distinct = out;
        buffered = 0;
        if (distinct > exactLimit) {
            histogram = new Histogram(3);
            for (int j = 0; j < distinct; j++) {
                histogram.recordValueWithCount(keys[j], counts[j]);
            }
            keys = null;
            counts = null;
            buffer = null;
        }
    }

    /** Number of values recorded. */
    public long count() {
        return n;
    }

    /** Whether percentiles are exact (false once past the exact limit). */
    public boolean exact() {
        merge();
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
        merge();
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
        long[] cum = new long[distinct];
        long c = 0;
        for (int i = 0; i < distinct; i++) {
            c += counts[i];
            cum[i] = c;
        }
        return new Stats(
                n,
                sum / n * scale,
                min * scale,
                max * scale,
                percentile(cum, 50) * scale,
                percentile(cum, 90) * scale,
                percentile(cum, 95) * scale,
                percentile(cum, 99) * scale);
    }

    /** An HdrHistogram percentile, kept within the exact min and max. */
    private double hdr(double p) {
        return Math.min(max, Math.max(min, histogram.getValueAtPercentile(p)));
    }

    private double percentile(long[] cum, double p) {
        double rank = p / 100.0 * (n - 1);
        long lo = (long) Math.floor(rank);
        long hi = (long) Math.ceil(rank);
        double vLo = valueAt(cum, lo);
        if (hi == lo) {
            return vLo;
        }
        double vHi = valueAt(cum, hi);
        return vLo + (vHi - vLo) * (rank - lo);
    }

    private long valueAt(long[] cum, long index) {
        int lo = 0;
        int hi = distinct - 1;
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
