package io.servesim.config;

/** Coefficients of {@code polynomial} timing (milliseconds); defaults are AISimulate's baseline. */
public record PolynomialTimingConfig(
        double prefillA,
        double prefillB,
        double prefillC,
        double decodeD2,
        double decodeD1,
        double decodeD0,
        double minDecodeMs) {
    /** Validates finiteness. */
    public PolynomialTimingConfig {
        for (double v : new double[] {prefillA, prefillB, prefillC, decodeD2, decodeD1, decodeD0}) {
            if (!Double.isFinite(v)) {
                throw new ConfigException("", "coefficients must be finite numbers, got " + v);
            }
        }
        Check.atLeast("min_decode_ms", minDecodeMs, 0.0);
    }
}
