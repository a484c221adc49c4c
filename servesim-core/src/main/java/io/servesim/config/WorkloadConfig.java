package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What traffic to replay: independent synthetic requests, synthetic multi-turn sessions (both arriving per
 * {@code arrival}), or a trace file (with its own arrival options).
 *
 * @param clientTimeoutS seconds after sending a request that its client gives up on it (an HTTP client's total
 *     timeout: aiohttp's default is 300 s) and disconnects, so the engine aborts it; null: clients wait for ever
 * @param maxTokensSent whether each request's client sends its output length as {@code max_tokens} (benchmark
 *     clients with {@code ignore_eos} do): vLLM's API server then refuses a request whose prompt and {@code max_tokens}
 *     together exceed {@code max_model_len} (HTTP 400) instead of serving it up to that limit
 */
public record WorkloadConfig(
        long seed,
        WorkloadType type,
        SyntheticConfig synthetic,
        SessionsConfig sessions,
        ArrivalConfig arrival,
        TraceConfig trace,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double clientTimeoutS,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean maxTokensSent) {
    /** Validates the section the chosen type uses. */
    public WorkloadConfig {
        if (clientTimeoutS != null && !(clientTimeoutS > 0 && clientTimeoutS < 1e9)) {
            throw new ConfigException(
                    "client_timeout_s", "expected a positive number of seconds, got " + clientTimeoutS);
        }
        Check.present("type", type);
        Check.present("arrival", arrival);
        Check.present("trace", trace);
        switch (type) {
            case SYNTHETIC -> Check.present("synthetic", synthetic);
            case SESSIONS -> Check.present("sessions", sessions);
            case TRACE -> {
                if (trace.path() == null || trace.path().isBlank()) {
                    throw new ConfigException("trace.path", "is required when type is trace");
                }
            }
        }
    }

    /** The client timeout in nanoseconds, or 0 when clients wait for ever. */
    public long clientTimeoutNanos() {
        return clientTimeoutS == null ? 0 : Math.round(clientTimeoutS * 1e9);
    }
}
