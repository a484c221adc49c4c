package io.servesim.config;

/**
 * Independent synthetic requests. Each prompt is {@code shared_prefix_tokens} tokens common to its prefix group
 * (request i belongs to group i mod {@code prefix_groups}) followed by unique random tokens. The run stops after
 * {@code requests} arrivals or at {@code duration_s} of arrivals, whichever comes first (at least one is set).
 */
public record SyntheticConfig(
        Long requests,
        Double durationS,
        DistributionConfig inputTokens,
        DistributionConfig outputTokens,
        int sharedPrefixTokens,
        int prefixGroups) {
    /** Validates counts and lengths. */
    public SyntheticConfig {
        if (requests == null && durationS == null) {
            throw new ConfigException("requests", "set requests or duration_s (both are null)");
        }
        if (requests != null) {
            Check.atLeast("requests", requests, 1);
            if (requests > Integer.MAX_VALUE) {
                throw new ConfigException("requests", "must be <= " + Integer.MAX_VALUE + ", got " + requests);
            }
        }
        if (durationS != null) {
            Check.positive("duration_s", durationS);
        }
        Check.present("input_tokens", inputTokens).checkTokenLengths("input_tokens");
        Check.present("output_tokens", outputTokens).checkTokenLengths("output_tokens");
        Check.atLeast("shared_prefix_tokens", sharedPrefixTokens, 0);
        Check.atLeast("prefix_groups", prefixGroups, 1);
    }
}
