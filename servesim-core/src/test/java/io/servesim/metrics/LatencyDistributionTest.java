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
}
