package io.servesim.metrics;

/**
 * Per-request summary statistics accumulated as requests end, so a run's summary never needs the per-request rows
 * (which may be streamed to disk instead of kept). Latencies are recorded in integer nanoseconds; TPOT, a quotient,
 * in picoseconds. Only completed requests (including length-capped ones) count toward latencies and tokens.
 */
public final class RequestMetrics {
    /** TTFT = first token − arrival (ns). */
    public final LatencyDistribution ttftNanos = new LatencyDistribution();
    /** TPOT ({@link RequestRecord#tpotPicos()}), requests with ≥ 2 output tokens (ps). */
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
    /** Trace session turns never sent because an earlier turn of their session was rejected. */
    public long abandoned;
    /** Requests whose client gave up before their last token ({@code workload.client_timeout_s}). */
    public long timedOut;
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
    public void record(RequestRecord r) {
        RequestStatus status = r.status();
        if (status == RequestStatus.INCOMPLETE) {
            incomplete++;
            return;
        }
        if (status == RequestStatus.ABANDONED) {
            abandoned++;
            return;
        }
        if (status == RequestStatus.TIMED_OUT) {
            timedOut++;
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
        ttftNanos.record(r.ttftNanos());
        e2eNanos.record(r.e2eNanos());
        queueNanos.record(r.queueNanos());
        long tpot = r.tpotPicos();
        if (tpot >= 0) {
            tpotPicos.record(tpot);
        }
        inputTokens += r.inputTokens();
        outputTokens += r.outputTokens();
    }
}
