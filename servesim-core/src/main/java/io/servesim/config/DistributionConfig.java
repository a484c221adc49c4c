package io.servesim.config;

import java.util.List;

/**
 * A distribution of a non-negative quantity (token counts, think times): {@code fixed} (value), {@code uniform}
 * (min, max, inclusive), {@code normal} (mean, stddev), {@code lognormal} (mean, stddev of the distribution
 * itself, not of its log), {@code exponential} (mean). {@code min}/{@code max} also clamp the other types.
 */
public record DistributionConfig(String type, Double value, Double mean, Double stddev, Double min, Double max) {
    /** The distribution types. */
    public static final List<String> TYPES = List.of("fixed", "uniform", "normal", "lognormal", "exponential");

    /** Validates the parameters the chosen type needs. */
    public DistributionConfig {
        Check.oneOf("type", type, TYPES);
        switch (type) {
            case "fixed" -> Check.atLeast("value", Check.present("value", value), 0.0);
            case "uniform" -> {
                Check.atLeast("min", Check.present("min", min), 0.0);
                Check.atLeast("max", Check.present("max", max), min);
            }
            case "normal", "lognormal" -> {
                Check.atLeast("mean", Check.present("mean", mean), 0.0);
                Check.atLeast("stddev", Check.present("stddev", stddev), 0.0);
            }
            case "exponential" -> Check.positive("mean", Check.present("mean", mean));
            default -> throw new AssertionError(type);
        }
        if (min != null) {
            Check.atLeast("min", min, 0.0);
        }
        if (min != null && max != null && max < min) {
            throw new ConfigException("max", "must be >= min (" + min + "), got " + max);
        }
    }

    /** A fixed distribution. */
    public static DistributionConfig fixed(double value) {
        return new DistributionConfig("fixed", value, null, null, null, null);
    }
}
