package io.servesim.config;

/** Validation helpers for compact constructors; each failure names the field in snake_case. */
public final class Check {
    private Check() {}

    /** Requires a non-null value. */
    public static <T> T present(String field, T value) {
        if (value == null) {
            throw new ConfigException(field, "is required");
        }
        return value;
    }

    /** Requires value &ge; min. */
    public static long atLeast(String field, long value, long min) {
        if (value < min) {
            throw new ConfigException(field, "must be >= " + min + ", got " + value);
        }
        return value;
    }

    /** Requires a finite value &ge; min. */
    public static double atLeast(String field, double value, double min) {
        if (!Double.isFinite(value) || value < min) {
            throw new ConfigException(field, "must be a finite number >= " + min + ", got " + value);
        }
        return value;
    }

    /** Requires a finite value &gt; 0. */
    public static double positive(String field, double value) {
        if (!Double.isFinite(value) || value <= 0) {
            throw new ConfigException(field, "must be a finite number > 0, got " + value);
        }
        return value;
    }
}
