package io.servesim.metrics;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.util.Arrays;
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
 * distinct (value, count) arrays when the buffer fills — a sort of the buffer and one linear merge — instead
 * of probing a hash map that outgrows the caches. The buffer grows with the distinct values held, so each merge's
 * cost is amortised over as many new samples. The result is the same multiset, so the statistics are identical to
 * keeping a map; the switch to HdrHistogram is decided at the merges (and before any statistic is read) and moves
 * every sample, so its result does not depend on when it happens.
 *
 * <p>A high-volume distribution (inter-token gaps: one sample per engine step) whose values cluster gets a
 * <em>dense window</em> at a merge once it holds {@value #WINDOW_AFTER_SAMPLES} samples, at least four per distinct
 * value: counts for 2^19 consecutive values around its median distinct value, indexed by value. A sample inside the window is one array increment (no
 * buffer, sort or merge); others take the buffer as before. Window and sorted arrays hold disjoint values, so the
 * distinct count is their sum, and the window is folded into the sorted arrays before any statistic is read: the
 * multiset, and so every statistic, is the same. Its counts are ints (2 MB of cells, randomly incremented on the
 * per-step path); a count that would pass 2^31 - 1 first moves the window's samples to the sorted arrays for good.
 */
public final class LatencyDistribution {
    /** The default exact sample limit. */
    public static final long DEFAULT_EXACT_LIMIT = 250_000;

    private static final int COUNT_BITS = 20;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final long MAX_PACKED_VALUE = (1L << (63 - COUNT_BITS)) - 1;
    private static final int MIN_BUFFER = 1 << 12;
    private static final int MAX_BUFFER = 1 << 20;
    private static final int WINDOW = 1 << 19;
    private static final long WINDOW_AFTER_SAMPLES = 1 << 18;

    private long exactLimit = DEFAULT_EXACT_LIMIT;
    private long[] buffer = new long[16];
    private int buffered;
    /** Samples whose value or count does not pack into one long (values past 2^43, counts past 2^20): rare. */
    private Long2LongOpenHashMap unpacked;

    private long[] keys = new long[0];
    private long[] counts = new long[0];
    // the arrays the previous merge left behind, reused as the next merge's output when large enough: a merge writes
    // every cell it later reads, so they need no zeroing (a new array each merge cleared megabytes on long runs)
    private long[] spareKeys = new long[0];
    private long[] spareCounts = new long[0];
    private int distinct;
    private Histogram histogram;
    /** Counts of values [windowBase, windowBase + WINDOW), or null (see the class comment). */
    private int[] window;

    private long windowBase;
    private long windowDistinct;
    private boolean windowAllowed = true; // no new window once a statistic was read (the fold would undo it)
    private long n;
    /** The exact sum of the samples, as a 128-bit integer (so the mean does not depend on recording order). */
    private long sumLow;

    private long sumHigh;
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
        long low = v * count;
        long high = Math.multiplyHigh(v, count);
        long s = sumLow + low;
        sumHigh += high + (Long.compareUnsigned(s, sumLow) < 0 ? 1 : 0);
        sumLow = s;
        if (v < min) {
            min = v;
        }
        if (v > max) {
            max = v;
        }
        store(v, count);
    }

    /** The sum as a double (exact below 2^53, as a running double sum of integers was). */
    private double sum() {
        double low = sumLow >= 0 ? sumLow : (double) (sumLow >>> 1) * 2.0 + (sumLow & 1);
        return sumHigh == 0 ? low : sumHigh * 0x1p64 + low;
    }

    /** Keeps {@code count} samples of {@code v} (already counted in n, sum, min and max). */
    private void store(long v, long count) {
        if (histogram != null) {
            histogram.recordValueWithCount(v, count);
            return;
        }
        if (window != null) {
            long offset = v - windowBase;
            if (offset >= 0 && offset < WINDOW) {
                int i = (int) offset;
                int c = window[i];
                if (count <= Integer.MAX_VALUE - c) {
                    if (c == 0) {
                        windowDistinct++;
                    }
                    window[i] = c + (int) count;
                    return;
                }
                // a count would pass 2^31 - 1: the window's samples go to the sorted arrays, and no window opens
                // again (one reopened around this value would overflow the same way)
                windowAllowed = false;
                closeWindow();
                store(v, count);
                return;
            }
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
                buffer = Arrays.copyOf(buffer, Math.min(cap, buffer.length * 2));
            } else {
                merge();
                if (window == null
                        && windowAllowed
                        && histogram == null
                        && n >= WINDOW_AFTER_SAMPLES
                        && n >= 4L * distinct) {
                    openWindow();
                }
                store(v, count); // into the histogram, the window or the emptied buffer
                return;
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
        mergeBuffer();
    }

    /** Before a statistic is read: everything into the sorted arrays (or the histogram). */
    private void fold() {
        windowAllowed = false;
        merge();
        closeWindow();
    }

    /** Moves the window's samples into the sorted arrays (or the histogram) and drops it. */
    private void closeWindow() {
        if (window == null) {
            return;
        }
        int[] w = window;
        long base = windowBase;
        window = null;
        windowDistinct = 0;
        for (int i = 0; i < WINDOW; i++) {
            if (w[i] != 0) {
                store(base + i, w[i]);
            }
        }
        merge();
    }

    /** Moves the sorted values within 2^20 around the median distinct value into a new dense window. */
    private void openWindow() {
        long base = Math.max(0, keys[distinct / 2] - WINDOW / 2);
        for (int i = 0; i < distinct; i++) {
            long offset = keys[i] - base;
            if (offset >= 0 && offset < WINDOW && counts[i] > Integer.MAX_VALUE) {
                return; // a count too large for the window's int cells: no window (the statistics are the same)
            }
        }
        int[] w = new int[WINDOW];
        int kept = 0;
        long moved = 0;
        for (int i = 0; i < distinct; i++) {
            long offset = keys[i] - base;
            if (offset >= 0 && offset < WINDOW) {
                w[(int) offset] = (int) counts[i];
                moved++;
            } else {
                keys[kept] = keys[i];
                counts[kept] = counts[i];
                kept++;
            }
        }
        distinct = kept;
        window = w;
        windowBase = base;
        windowDistinct = moved;
    }

    private void mergeBuffer() {
        // the JDK's sort, not fastutil's radix sort: 7-14 ns per element against 34-58 for packed gap values, 4 k to
        // 1 M of them (JDK 25, this project's machine kind); the sorted longs are the same either way
        Arrays.sort(buffer, 0, buffered);
        long[] extraKeys = new long[0];
        long[] extraCounts = new long[0];
        if (unpacked != null) {
            extraKeys = unpacked.keySet().toLongArray();
            Arrays.sort(extraKeys);
            extraCounts = new long[extraKeys.length];
            for (int i = 0; i < extraKeys.length; i++) {
                extraCounts[i] = unpacked.get(extraKeys[i]);
            }
            unpacked = null;
        }
        int most = distinct + buffered + extraKeys.length;
        long[] k = spareKeys;
        long[] c = spareCounts;
        if (k.length < most) {
            k = new long[Math.max(most, k.length + (k.length >> 1))];
            c = new long[k.length];
        }
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
        spareKeys = keys;
        spareCounts = counts;
        keys = k;
        counts = c;
        distinct = out;
        buffered = 0;
        if (distinct + windowDistinct > exactLimit) {
            histogram = new Histogram(3);
            for (int j = 0; j < distinct; j++) {
                histogram.recordValueWithCount(keys[j], counts[j]);
            }
            if (window != null) {
                for (int j = 0; j < WINDOW; j++) {
                    if (window[j] != 0) {
                        histogram.recordValueWithCount(windowBase + j, window[j]);
                    }
                }
                window = null;
                windowDistinct = 0;
            }
            keys = null;
            counts = null;
            spareKeys = null;
            spareCounts = null;
            buffer = null;
        }
    }

    /** Number of values recorded. */
    public long count() {
        return n;
    }

    /** Whether percentiles are exact (false once past the exact limit). */
    public boolean exact() {
        fold();
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
        fold();
        if (histogram != null) {
            return new Stats(
                    n,
                    sum() / n * scale,
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
                sum() / n * scale,
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
