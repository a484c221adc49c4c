package io.servesim.workload;

import io.servesim.config.DistributionConfig;
import java.util.SplittableRandom;

/**
 * Samples {@link DistributionConfig}s with our own transforms of {@code nextDouble()} and {@link StrictMath}, so
 * draws are identical on every JDK and platform.
 */
public final class Distributions {
    private Distributions() {}

    /** Draws a value, clamps it to the config's [min, max] and to at least {@code floor}, and rounds it. */
    public static long sample(DistributionConfig d, SplittableRandom rng, long floor) {
        return Math.max(floor, Math.round(sampleDouble(d, rng)));
    }

    /** Draws a value clamped to the config's [min, max] and to at least 0, unrounded. */
    public static double sampleDouble(DistributionConfig d, SplittableRandom rng) {
        double x = switch (d.type()) {
            case FIXED -> d.value();
            case UNIFORM -> {
                double lo = Math.ceil(d.min());
                double hi = Math.floor(d.max());
                yield hi <= lo ? lo : lo + Math.floor(rng.nextDouble() * (hi - lo + 1));
            }
            case NORMAL -> d.mean() + d.stddev() * gaussian(rng);
            case LOGNORMAL -> {
                double m = d.mean();
                double s = d.stddev();
                if (m <= 0) {
                    yield 0;
                }
                double sigma2 = StrictMath.log(1 + (s * s) / (m * m));
                double mu = StrictMath.log(m) - sigma2 / 2;
                yield StrictMath.exp(mu + StrictMath.sqrt(sigma2) * gaussian(rng));
            }
            case EXPONENTIAL -> -d.mean() * StrictMath.log(1 - rng.nextDouble());
        };
        if (d.min() != null) {
            x = Math.max(x, d.min());
        }
        if (d.max() != null) {
            x = Math.min(x, d.max());
        }
        return Math.max(0.0, x);
    }

    /** The distribution's mean (a sizing hint, never a sample): value, mean, or the middle of a uniform range. */
    public static double mean(DistributionConfig d) {
        Double v = switch (d.type()) {
            case FIXED -> d.value();
            case UNIFORM -> d.min() == null || d.max() == null ? null : (d.min() + d.max()) / 2;
            case NORMAL, LOGNORMAL, EXPONENTIAL -> d.mean();
        };
        return v == null ? 0 : v;
    }

    /** A standard normal draw (Box-Muller, one value per call). */
    static double gaussian(SplittableRandom rng) {
        double u1 = 1.0 - rng.nextDouble();
        double u2 = rng.nextDouble();
        return StrictMath.sqrt(-2.0 * StrictMath.log(u1)) * StrictMath.cos(2.0 * StrictMath.PI * u2);
    }

    /** An exponential inter-arrival gap in nanoseconds for {@code ratePerSecond}. */
    public static long exponentialGapNanos(SplittableRandom rng, double ratePerSecond) {
        double seconds = -StrictMath.log(1.0 - rng.nextDouble()) / ratePerSecond;
        return Math.round(seconds * 1e9);
    }
}
