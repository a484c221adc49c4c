package io.servesim.timing;

/**
 * Constant step times: {@code prefill_ms} for a step that schedules any prefill tokens plus {@code decode_ms} for
 * a step that schedules any decode, each with an optional per-token term. AISimulate's {@code fixed} timing extended
 * with per-token slopes; used by hand-computed tests because every step time is known exactly.
 */
public final class FixedTiming implements TimingModel {
    private final long prefillNanos;
    private final long decodeNanos;
    private final double prefillPerTokenNanos;
    private final double decodePerTokenNanos;

    /** Creates the model from millisecond values. */
    public FixedTiming(double prefillMs, double decodeMs, double prefillPerTokenMs, double decodePerTokenMs) {
        this.prefillNanos = Math.round(prefillMs * 1e6);
        this.decodeNanos = Math.round(decodeMs * 1e6);
        this.prefillPerTokenNanos = prefillPerTokenMs * 1e6;
        this.decodePerTokenNanos = decodePerTokenMs * 1e6;
    }

    @Override
    public long stepNanos(StepBatch batch) {
        long t = 0;
        if (batch.prefillTokens() > 0) {
            t += prefillNanos + Math.round(prefillPerTokenNanos * batch.prefillTokens());
        }
        if (batch.decodeRequests() > 0) {
            t += decodeNanos + Math.round(decodePerTokenNanos * batch.decodeRequests());
        }
        return Math.max(1, t);
    }
}
