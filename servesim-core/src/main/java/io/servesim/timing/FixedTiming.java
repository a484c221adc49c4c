package io.servesim.timing;

/**
 * Constant step times: {@code step_ms} for any step, plus {@code prefill_ms} for a step that schedules any prefill
 * tokens plus {@code decode_ms} for a step that schedules any decode, each with an optional per-token term; and a
 * constant CPU part {@code cpu_ms}. AISimulate's {@code fixed} timing extended with a constant step, per-token slopes
 * and the CPU part; used for what-if studies, conformance runs and hand-computed tests, because every step time is
 * known exactly.
 */
public final class FixedTiming implements TimingModel {
    private final long stepNanos;
    private final long cpuNanos;
    private final long prefillNanos;
    private final long decodeNanos;
    private final double prefillPerTokenNanos;
    private final double decodePerTokenNanos;

    /** Creates the model from millisecond values. */
    public FixedTiming(double prefillMs, double decodeMs, double prefillPerTokenMs, double decodePerTokenMs) {
        this(0, prefillMs, decodeMs, prefillPerTokenMs, decodePerTokenMs, 0);
    }

    /** Creates the model from millisecond values, with a constant step and a CPU part. */
    public FixedTiming(
            double stepMs,
            double prefillMs,
            double decodeMs,
            double prefillPerTokenMs,
            double decodePerTokenMs,
            double cpuMs) {
        this.stepNanos = Math.round(stepMs * 1e6);
        this.cpuNanos = Math.round(cpuMs * 1e6);
        this.prefillNanos = Math.round(prefillMs * 1e6);
        this.decodeNanos = Math.round(decodeMs * 1e6);
        this.prefillPerTokenNanos = prefillPerTokenMs * 1e6;
        this.decodePerTokenNanos = decodePerTokenMs * 1e6;
    }

    @Override
    public long stepNanos(StepBatch batch) {
        long t = stepNanos;
        if (batch.prefillTokens() > 0) {
            t += prefillNanos + Math.round(prefillPerTokenNanos * batch.prefillTokens());
        }
        if (batch.decodeRequests() > 0) {
            t += decodeNanos + Math.round(decodePerTokenNanos * batch.decodeRequests());
        }
        return Math.max(1, t);
    }

    @Override
    public long cpuNanos(StepBatch batch) {
        return cpuNanos;
    }
}
