package io.servesim.config;

/**
 * Bounds on a run. With {@code time_limit_s} the simulation stops at that virtual time: requests still in the system
 * end as {@code incomplete} (finish reason {@code time_limit}) and arrivals after it are never generated.
 *
 * @param timeLimitS virtual seconds, or null for no limit (run until every request ends)
 */
public record LimitsConfig(Double timeLimitS) {
    /** Validates the limits. */
    public LimitsConfig {
        if (timeLimitS != null) {
            Check.positive("time_limit_s", timeLimitS);
        }
    }

    /** The limit in virtual nanoseconds, or {@link Long#MAX_VALUE} without one. */
    public long timeLimitNanos() {
        return timeLimitS == null ? Long.MAX_VALUE : Math.round(timeLimitS * 1e9);
    }
}
