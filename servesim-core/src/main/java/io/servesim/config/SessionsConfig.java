package io.servesim.config;

/**
 * Synthetic multi-turn sessions. Turn 1's prompt is {@code first_input_tokens} long, of which the first
 * {@code shared_prefix_tokens} are common to the session's prefix group (session i mod {@code prefix_groups}); turn k+1's prompt is turn k's prompt + turn k's output +
 * {@code new_input_tokens}, so it hits the cache. The next turn is released {@code think_time_ms} after the previous
 * one completes (closed loop). The run stops after {@code sessions} sessions or {@code duration_s} of session starts.
 * A seeded {@code migrate_fraction} of follow-up turns is sent to a different worker than the previous turn.
 */
public record SessionsConfig(
        Long sessions,
        Double durationS,
        int turns,
        DistributionConfig firstInputTokens,
        DistributionConfig newInputTokens,
        DistributionConfig outputTokens,
        DistributionConfig thinkTimeMs,
        int sharedPrefixTokens,
        int prefixGroups,
        double migrateFraction) {
    /** Validates counts and lengths. */
    public SessionsConfig {
        if (sessions == null && durationS == null) {
            throw new ConfigException("sessions", "set sessions or duration_s (both are null)");
        }
        if (sessions != null) {
            Check.atLeast("sessions", sessions, 1);
            if (sessions * (long) Math.max(1, turns) > Integer.MAX_VALUE) {
                throw new ConfigException(
                        "sessions",
                        "sessions x turns must be <= " + Integer.MAX_VALUE + ", got " + sessions * (long) turns);
            }
        }
        if (durationS != null) {
            Check.positive("duration_s", durationS);
        }
        Check.atLeast("turns", turns, 1);
        Check.present("first_input_tokens", firstInputTokens).checkTokenLengths("first_input_tokens");
        Check.present("new_input_tokens", newInputTokens).checkTokenLengths("new_input_tokens");
        Check.present("output_tokens", outputTokens).checkTokenLengths("output_tokens");
        Check.present("think_time_ms", thinkTimeMs);
        Check.atLeast("shared_prefix_tokens", sharedPrefixTokens, 0);
        Check.atLeast("prefix_groups", prefixGroups, 1);
        if (!(migrateFraction >= 0 && migrateFraction <= 1)) {
            throw new ConfigException("migrate_fraction", "must be between 0 and 1, got " + migrateFraction);
        }
    }
}
