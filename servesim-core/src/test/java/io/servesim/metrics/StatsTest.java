package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** Exact percentiles by linear interpolation between closest ranks (numpy's default). */
class StatsTest {
    @Test
    void percentiles_interpolateBetweenClosestRanks() {
        double[] v = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
        Stats s = Stats.of(v, v.length);
        assertThat(s.p50()).isEqualTo(5.5);
        assertThat(s.p90()).isCloseTo(9.1, Offset.offset(1e-12));
        assertThat(s.p99()).isCloseTo(9.91, Offset.offset(1e-12));
        assertThat(s.min()).isEqualTo(1);
        assertThat(s.max()).isEqualTo(10);
        assertThat(s.mean()).isEqualTo(5.5);
    }

    @Test
    void noSamples_giveZeros() {
        assertThat(Stats.of(new double[0], 0)).isEqualTo(Stats.EMPTY);
        assertThat(new LatencyDistribution().stats(1.0)).isEqualTo(Stats.EMPTY);
    }

    @Property(tries = 200)
    void countedDistribution_equalsSortingEveryValue(
            @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 30) Integer> values) {
        LatencyDistribution d = new LatencyDistribution();
        double[] all = new double[values.size()];
        for (int i = 0; i < all.length; i++) {
            d.record(values.get(i));
            all[i] = values.get(i);
        }
        Stats exact = Stats.of(all, all.length);
        Stats counted = d.stats(1.0);
        assertThat(counted.count()).isEqualTo(exact.count());
        assertThat(counted.p50()).isCloseTo(exact.p50(), Offset.offset(1e-9));
        assertThat(counted.p90()).isCloseTo(exact.p90(), Offset.offset(1e-9));
        assertThat(counted.p95()).isCloseTo(exact.p95(), Offset.offset(1e-9));
        assertThat(counted.p99()).isCloseTo(exact.p99(), Offset.offset(1e-9));
        assertThat(counted.mean()).isCloseTo(exact.mean(), Offset.offset(1e-9));
        assertThat(counted.max()).isEqualTo(exact.max());
    }
}
