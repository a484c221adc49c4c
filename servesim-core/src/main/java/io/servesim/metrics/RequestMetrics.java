package io.servesim.metrics;

/**
 * Per-request summary statistics accumulated as requests end, so a run's summary never needs the per-request rows
 * (which may be streamed to disk instead of kept). Latencies are recorded in integer nanoseconds; TPOT, a quotient,
 * in picoseconds. Only completed requests (including length-capped ones) count toward latencies and tokens.
 */
public final class RequestMetrics {
    /** TTFT = first token − arrival (ns). */
    public final LatencyDistribution ttftNanos = new LatencyDistribution();
    /** TPOT = (last token − first token) / (output tokens − 1), requests with ≥ 2 output tokens (ps). */
    public final LatencyDistribution tpotPicos = new LatencyDistribution();
    /** E2E = last token − arrival (ns). */
    public final LatencyDistribution e2eNanos = new LatencyDistribution();
    /** Queue time = first scheduled − arrival (ns). */
    public final LatencyDistribution queueNanos = new LatencyDistribution();
    /** Requests completed (including length-capped). */
    public long completed;
    /** Requests rejected. */
    public long rejected;
    /** Requests still in the system at the time limit. */
    public long incomplete;
    /** Completed requests capped by max_model_len. */
    public long lengthCapped;
    /** Prompt tokens of completed requests. */
    public long inputTokens;
    /** Output tokens of completed requests. */
    public long outputTokens;

    /** Sets the exact sample limit of every distribution (before anything is recorded). */
    public void exactLimit(long samples) {
        ttftNanos.exactLimit(samples);
        tpotPicos.exactLimit(samples);
        e2eNanos.exactLimit(samples);
        queueNanos.exactLimit(samples);
    }

    /** Records one request's end. */
    public void record(
            RequestStatus status,
            long arrival,
            long firstScheduled,
            long firstToken,
            long lastToken,
            int input,
            int output) {
        if (status == RequestStatus.INCOMPLETE) {
            incomplete++;
            return;
        }
        if (!status.completed()) {
            rejected++;
            return;
        }
        completed++;
        if (status == RequestStatus.LENGTH_CAPPED) {
            lengthCapped++;
        }
        ttftNanos.record(firstToken - arrival);
        e2eNanos.record(lastToken - arrival);
        queueNanos.record(firstScheduled - arrival);
        if (output >= 2) {
            tpotPicos.record(Math.round((lastToken - firstToken) * 1000.0 / (output - 1)));
        }
        inputTokens += input;
        outputTokens += output;
    }
}
