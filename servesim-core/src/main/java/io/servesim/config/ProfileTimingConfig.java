package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
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
public record ProfileTimingConfig(String path, Method method, List<Double> coefficients) {
    /** How measured steps become a model ({@code timing.profile.method}). */
    public enum Method implements Named {
        /** Inverse-distance interpolation. */
        INTERPOLATE("interpolate", "inverse-distance interpolation over the nearest measured steps"),
        /** Least-squares linear model. */
        LINEAR_FIT("linear_fit", "the linear model's coefficients fitted to the measured steps");

        private final String configName;
        private final String description;

        Method(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Method of(String name) {
            return Named.parse(Method.class, name);
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

    /** Validates the method and coefficient count. */
    public ProfileTimingConfig {
        Check.present("method", method);
        if (coefficients != null) {
            if (coefficients.size() != 5) {
                throw new ConfigException("coefficients", "needs 5 values [c0..c4], got " + coefficients.size());
            }
            coefficients = List.copyOf(coefficients);
        }
    }
}
