package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The buffered exact distribution gives the statistics of the multiset it was given, however it was recorded. */
class LatencyDistributionTest {
    /** numpy's linear percentile over the multiset, from a sorted map of value → count (no shared code). */
    private static double reference(List<long[]> samples, double p) {
        java.util.TreeMap<Long, Long> sorted = new java.util.TreeMap<>();
        long n = 0;
        for (long[] s : samples) {
            sorted.merge(Math.max(0, s[0]), s[1], Long::sum);
            n += s[1];
        }
        double rank = p / 100 * (n - 1);
        long lo = (long) Math.floor(rank);
        long hi = (long) Math.ceil(rank);
        return at(sorted, lo) + (at(sorted, hi) - at(sorted, lo)) * (rank - lo);
    }

    private static long at(java.util.SortedMap<Long, Long> sorted, long index) {
        long seen = 0;
        for (var e : sorted.entrySet()) {
            seen += e.getValue();
            if (seen > index) {
                return e.getKey();
            }
        }
        throw new IllegalArgumentException();
    }

    @Test
    void manyMergesOfPackedAndUnpackedSamples_giveTheExactPercentilesOfTheMultiset() {
        SplittableRandom rng = new SplittableRandom(42);
        LatencyDistribution d = new LatencyDistribution();
        List<long[]> samples = new ArrayList<>();
        for (int i = 0; i < 30_000; i++) {
            long value = switch (i % 10) {
                case 0 -> (1L << 50) + rng.nextLong(1000); // too large to pack
                case 1 -> -5; // clamped to 0
                default -> rng.nextLong(5_000);
            };
            long count = i % 97 == 0 ? (1L << 21) / 1000 : 1 + rng.nextInt(3); // some counts that do not pack
            if (i % 5_000 == 0) {
                count = 1L << 21;
            }
            d.record(value, count);
            samples.add(new long[] {value, count});
        }
        Stats s = d.stats(1);
        assertThat(d.exact()).isTrue();
        assertThat(s.count()).isEqualTo(samples.stream().mapToLong(x -> x[1]).sum());
        for (double p : new double[] {50, 90, 95, 99}) {
            double expected = reference(samples, p);
            double actual = switch ((int) p) {
                case 50 -> s.p50();
                case 90 -> s.p90();
                case 95 -> s.p95();
                default -> s.p99();
            };
            assertThat(actual).as("p%s", p).isEqualTo(expected);
        }
        assertThat(s.min()).isEqualTo(0.0);
    }

    @Test
    void pastTheDistinctLimit_everySampleMovesToHdrHistogram_whenTheBufferMerges() {
        LatencyDistribution d = new LatencyDistribution().exactLimit(5_000);
        for (long v = 0; v < 20_000; v++) {
            d.record(v * 10);
        }
        assertThat(d.exact()).isFalse();
        Stats s = d.stats(1);
        assertThat(s.count()).isEqualTo(20_000);
        assertThat(s.p50()).isCloseTo(99_995.0, org.assertj.core.data.Percentage.withPercentage(0.2));
        d.record(5, 1); // recording goes on into the histogram
        assertThat(d.count()).isEqualTo(20_001);
        assertThat(d.stats(1).min()).isEqualTo(0.0);
    }

    @Test
    void byDefault_aDistributionHoldsAtMost250000DistinctValuesExactly_soASummarysMemoryIsBounded() {
        // 1 M streamed requests ran out of a 128 MB heap while the summary merged five metrics of ~1 M distinct
        // values each; past the default limit a metric moves to HdrHistogram (3 significant digits)
        LatencyDistribution d = new LatencyDistribution();
        for (long v = 0; v < 250_000; v++) {
            d.record(v * 7);
        }
        assertThat(d.exact()).isTrue();
        d.record(1L << 40);
        assertThat(d.exact()).isFalse();
        assertThat(d.count()).isEqualTo(250_001);
        assertThat(d.method()).isEqualTo("hdr_histogram_3_significant_digits");
    }

    @Test
    void aHighVolumeClusteredDistribution_inItsDenseWindow_givesTheExactStatisticsOfTheMultiset_inAnyOrder() {
        // 600,000 samples (past the window's threshold, about ten per distinct value) clustered within 60,000
        // values, plus outliers outside the window: recorded in two orders, both equal the multiset's percentiles
        SplittableRandom rng = new SplittableRandom(7);
        List<long[]> samples = new ArrayList<>();
        for (int i = 0; i < 600_000; i++) {
            long value = i % 50 == 0 ? 50_000_000L + rng.nextLong(10_000_000) : 10_700_000L + rng.nextLong(60_000);
            samples.add(new long[] {value, 1 + rng.nextInt(2)});
        }
        LatencyDistribution forward = new LatencyDistribution().exactLimit(1_000_000);
        LatencyDistribution backward = new LatencyDistribution().exactLimit(1_000_000);
        for (int i = 0; i < samples.size(); i++) {
            forward.record(samples.get(i)[0], samples.get(i)[1]);
            long[] b = samples.get(samples.size() - 1 - i);
            backward.record(b[0], b[1]);
        }
        Stats f = forward.stats(1);
        assertThat(forward.exact()).isTrue();
        assertThat(backward.stats(1)).isEqualTo(f);
        assertThat(f.p50()).isEqualTo(reference(samples, 50));
        assertThat(f.p99()).isEqualTo(reference(samples, 99));
        assertThat(f.p90()).isEqualTo(reference(samples, 90));
        double sum = 0;
        long n = 0;
        for (long[] x : samples) {
            sum += (double) x[0] * x[1];
            n += x[1];
        }
        assertThat(f.mean()).isEqualTo(sum / n); // below 2^53 the exact sum is the running double sum
    }

    @Test
    void aWindowCountThatWouldPassTheIntRange_closesTheWindow_andTheStatisticsStayExact() {
        // the window counts in ints (half the memory on the per-step path); a value whose count would pass
        // 2^31 - 1 moves the window's samples to the sorted arrays instead of overflowing
        SplittableRandom rng = new SplittableRandom(3);
        List<long[]> samples = new ArrayList<>();
        LatencyDistribution d = new LatencyDistribution();
        for (int i = 0; i < 300_000; i++) {
            long value = 9_000_000L + rng.nextLong(20_000);
            d.record(value, 1);
            samples.add(new long[] {value, 1});
        }
        long big = Integer.MAX_VALUE - 5L;
        for (int i = 0; i < 3; i++) { // the second and third would overflow an int cell
            d.record(9_010_000L, big);
            samples.add(new long[] {9_010_000L, big});
            d.record(9_000_001L + i, 2);
            samples.add(new long[] {9_000_001L + i, 2});
        }
        for (int i = 0; i < 300_000; i++) { // clustered again: no window reopens around the huge count
            long value = 9_000_000L + rng.nextLong(20_000);
            d.record(value, 1);
            samples.add(new long[] {value, 1});
        }
        Stats s = d.stats(1);
        assertThat(d.exact()).isTrue();
        assertThat(s.count()).isEqualTo(600_000 + 3 * big + 6);
        assertThat(s.p50()).isEqualTo(reference(samples, 50)).isEqualTo(9_010_000.0);
        assertThat(s.p99()).isEqualTo(reference(samples, 99));
        assertThat(s.min()).isEqualTo(reference(samples, 0));
    }

    @Test
    void pastTheDistinctLimit_withADenseWindow_theHistogramHoldsTheSameMultisetInAnyOrder() {
        SplittableRandom rng = new SplittableRandom(9);
        long[] values = new long[400_000];
        for (int i = 0; i < values.length; i++) {
            // clustered (the window) until 300,000, then spread within it, and outliers that keep the buffer merging
            values[i] = i % 3 == 0 && i > 300_000
                    ? 5_000_000_000L + rng.nextLong(1_000_000)
                    : 1_000_000L + rng.nextLong(i < 300_000 ? 20_000 : 200_000);
        }
        LatencyDistribution forward = new LatencyDistribution().exactLimit(50_000);
        LatencyDistribution backward = new LatencyDistribution().exactLimit(50_000);
        for (int i = 0; i < values.length; i++) {
            forward.record(values[i]);
            backward.record(values[values.length - 1 - i]);
        }
        assertThat(forward.exact()).isFalse();
        assertThat(backward.exact()).isFalse();
        assertThat(backward.stats(1)).isEqualTo(forward.stats(1));
        org.HdrHistogram.Histogram reference = new org.HdrHistogram.Histogram(3);
        for (long v : values) {
            reference.recordValue(v);
        }
        for (double p : new double[] {50, 90, 99}) {
            // HdrHistogram's percentile, kept within the exact min and max as servesim reports it
            double expected = Math.min(
                    java.util.Arrays.stream(values).max().orElseThrow(),
                    Math.max(java.util.Arrays.stream(values).min().orElseThrow(), reference.getValueAtPercentile(p)));
            double actual = p == 50
                    ? forward.stats(1).p50()
                    : p == 90 ? forward.stats(1).p90() : forward.stats(1).p99();
            assertThat(actual).as("p%s", p).isEqualTo(expected);
        }
    }

    @Test
    void theMean_isExactPast2To53_soItDoesNotDependOnRecordingOrder() {
        long big = 1L << 60;
        LatencyDistribution a = new LatencyDistribution();
        LatencyDistribution b = new LatencyDistribution();
        a.record(big, 8);
        a.record(1, 1);
        b.record(1, 1);
        b.record(big, 8);
        // a running double sum would lose the 1 after 2^63 in one order and not in the other
        assertThat(a.stats(1).mean()).isEqualTo(b.stats(1).mean()).isEqualTo((8.0 * big + 1) / 9);
    }
}
