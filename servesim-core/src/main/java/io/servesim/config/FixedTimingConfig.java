package io.servesim.config;

/** Parameters of {@code fixed} timing, in milliseconds. */
public record FixedTimingConfig(double prefillMs, double decodeMs, double prefillPerTokenMs, double decodePerTokenMs) {
    /** Validates non-negative times. */
    public FixedTimingConfig {
        Check.atLeast("prefill_ms", prefillMs, 0.0);
        Check.atLeast("decode_ms", decodeMs, 0.0);
        Check.atLeast("prefill_per_token_ms", prefillPerTokenMs, 0.0);
        Check.atLeast("decode_per_token_ms", decodePerTokenMs, 0.0);
    }
}
