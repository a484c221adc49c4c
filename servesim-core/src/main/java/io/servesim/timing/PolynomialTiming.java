package io.servesim.timing;

/**
 * AISimulate's uncalibrated polynomial baseline (also the Dynamo mocker's legacy model), summed per step as the
 * mocker does: {@code prefill_ms = a·T² + b·T + c} for T = prefill tokens computed in the step, plus
 * {@code decode_ms = max(min_decode_ms, d2·u² + d1·u + d0)} for u = min(1, decode context tokens / KV capacity
 * tokens). Coefficients default to those in {@code aisimulate-replay.md} §8
 * (4.209989e-7, 1.518344e-2, 16.50142; -25.74, 54.01, 5.74; floor 1 ms).
 */
public final class PolynomialTiming implements TimingModel {
    private final double prefillA;
    private final double prefillB;
    private final double prefillC;
    private final double decodeD2;
    private final double decodeD1;
    private final double decodeD0;
    private final double minDecodeMs;

    /** Creates the model from its coefficients (milliseconds). */
    public PolynomialTiming(
            double prefillA,
            double prefillB,
            double prefillC,
            double decodeD2,
            double decodeD1,
            double decodeD0,
            double minDecodeMs) {
        this.prefillA = prefillA;
        this.prefillB = prefillB;
        this.prefillC = prefillC;
        this.decodeD2 = decodeD2;
        this.decodeD1 = decodeD1;
        this.decodeD0 = decodeD0;
        this.minDecodeMs = minDecodeMs;
    }

    @Override
    public long stepNanos(StepBatch batch) {
        double ms = 0;
        long t = batch.prefillTokens();
        if (t > 0) {
            ms += prefillA * t * t + prefillB * t + prefillC;
        }
        if (batch.decodeRequests() > 0) {
            double cap = batch.kvCapacityTokens();
            double u = cap <= 0 ? 1.0 : Math.min(1.0, batch.decodeContextTokens() / cap);
            ms += Math.max(minDecodeMs, decodeD2 * u * u + decodeD1 * u + decodeD0);
        }
        return Math.max(1, Math.round(ms * 1e6));
    }
}
