package io.servesim.config;

import java.util.List;

/**
 * The {@code profile} step-time model: measured step latencies (a CSV interpolated, or fitted to the linear model)
 * or the linear model's coefficients directly.
 *
 * @param path CSV with {@code prefill_tokens,decode_seqs,context_tokens,latency_ms} rows, or null
 * @param method {@code interpolate} (inverse-distance over the nearest measured steps) or {@code linear_fit}
 * @param coefficients {@code [c0, c1, c2, c3, c4]} in ms for c0 + c1·prefill_tokens + c2·prefill_attention_term +
 *     c3·decode_seqs + c4·context_tokens, or null (then {@code path} is required)
 */
public record ProfileTimingConfig(String path, String method, List<Double> coefficients) {
    /** Methods. */
    public static final List<String> METHODS = List.of("interpolate", "linear_fit");

    /** Validates the method and coefficient count. */
    public ProfileTimingConfig {
        Check.oneOf("method", method, METHODS);
        if (coefficients != null) {
            if (coefficients.size() != 5) {
                throw new ConfigException("coefficients", "needs 5 values [c0..c4], got " + coefficients.size());
            }
            coefficients = List.copyOf(coefficients);
        }
    }
}
