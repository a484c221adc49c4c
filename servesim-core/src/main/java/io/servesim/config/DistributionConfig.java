package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * A distribution of a non-negative quantity (token counts, think times): {@code fixed} (value), {@code uniform}
 * (min, max, inclusive), {@code normal} (mean, stddev), {@code lognormal} (mean, stddev of the distribution
 * itself, not of its log), {@code exponential} (mean). {@code min}/{@code max} also clamp the other types.
 */
public record DistributionConfig(Type type, Double value, Double mean, Double stddev, Double min, Double max) {
    /** The distribution types ({@code type} of any distribution). */
    public enum Type implements Named {
        /** Always {@code value}. */
        FIXED("fixed", "always value"),
        /** Integers in [min, max]. */
        UNIFORM("uniform", "integers from min to max, inclusive"),
        /** Gaussian. */
        NORMAL("normal", "mean + stddev x a standard normal draw"),
        /** Log-normal with the given mean and stddev of the distribution itself. */
        LOGNORMAL("lognormal", "log-normal whose own mean and stddev are the given ones"),
        /** Exponential. */
        EXPONENTIAL("exponential", "exponential with the given mean");

        private final String configName;
        private final String description;

        Type(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Type of(String name) {
            return Named.parse(Type.class, name);
        }

        @Override
        public String configName() {
            return configName;
        }

        @Override
        public String description() {
            return description;
        }
    }

    /** Validates the parameters the chosen type needs. */
    public DistributionConfig {
        Check.present("type", type);
        switch (type) {
            case FIXED -> Check.atLeast("value", Check.present("value", value), 0.0);
            case UNIFORM -> {
                Check.atLeast("min", Check.present("min", min), 0.0);
                Check.atLeast("max", Check.present("max", max), min);
            }
            case NORMAL, LOGNORMAL -> {
                Check.atLeast("mean", Check.present("mean", mean), 0.0);
                Check.atLeast("stddev", Check.present("stddev", stddev), 0.0);
            }
            case EXPONENTIAL -> Check.positive("mean", Check.present("mean", mean));
        }
        if (min != null) {
            Check.atLeast("min", min, 0.0);
        }
        if (min != null && max != null && max < min) {
            throw new ConfigException("max", "must be >= min (" + min + "), got " + max);
        }
    }

    /** The longest prompt or output a token-length distribution may describe (beyond every model's context). */
    public static final double MAX_TOKENS = 10_000_000;

    /**
     * Checks that a token-length distribution stays within {@link #MAX_TOKENS}: its fixed value, uniform maximum or
     * mean (samples are capped there too), so a typo like 1e18 is an error instead of a prompt that cannot be built.
     */
    public void checkTokenLengths(String field) {
        Double[] bounds = {value, max, mean};
        String[] names = {"value", "max", "mean"};
        for (int i = 0; i < bounds.length; i++) {
            if (bounds[i] != null && bounds[i] > MAX_TOKENS) {
                throw new ConfigException(
                        field + "." + names[i],
                        "is " + bounds[i] + " tokens; at most " + (long) MAX_TOKENS + " (beyond any model's context)");
            }
        }
    }

    /** A fixed distribution. */
    public static DistributionConfig fixed(double value) {
        return new DistributionConfig(Type.FIXED, value, null, null, null, null);
    }
}
