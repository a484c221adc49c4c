package io.servesim.config;

/**
 * Parameters of {@code fixed} timing, in milliseconds: a constant {@code step_ms} for every step, plus prefill and
 * decode terms, plus a constant CPU part {@code cpu_ms} per step (scheduling and output processing on the engine
 * core, overlapped with the GPU under async scheduling).
 */
public record FixedTimingConfig(
        double stepMs,
        double prefillMs,
        double decodeMs,
        double prefillPerTokenMs,
        double decodePerTokenMs,
        double cpuMs) {
    /** Validates non-negative times. */
    public FixedTimingConfig {
        Check.atLeast("step_ms", stepMs, 0.0);
        Check.atLeast("cpu_ms", cpuMs, 0.0);
        Check.atLeast("prefill_ms", prefillMs, 0.0);
        Check.atLeast("decode_ms", decodeMs, 0.0);
        Check.atLeast("prefill_per_token_ms", prefillPerTokenMs, 0.0);
        Check.atLeast("decode_per_token_ms", decodePerTokenMs, 0.0);
    }
}
