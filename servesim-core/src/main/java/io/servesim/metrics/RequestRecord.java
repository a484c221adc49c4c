package io.servesim.metrics;

/**
 * One request's final record: the single per-request row every output reads ({@code requests.csv},
 * {@code canonical.json}, the HTML report, sweep SLO checks, {@code validate}), declared column by column in
 * {@link RequestColumns}. Times are virtual nanoseconds; -1 marks "never happened" (no first token for a rejected
 * request, no pull, no hint).
 *
 * @param requestId dense id in creation order
 * @param sessionId session id, or -1
 * @param turn turn index within the session
 * @param worker the worker that served it last, or -1 when it never reached one
 * @param rank its attention-DP rank within {@code worker}, or -1
 * @param arrivalNanos arrival time
 * @param firstScheduledNanos first admission, or -1
 * @param firstTokenNanos first output token, or -1
 * @param lastTokenNanos last output token, or -1
 * @param inputTokens prompt tokens
 * @param outputTokens output tokens generated
 * @param cachedTokens prompt tokens not computed at first admission (G1 hits, G2 loads and KVCR pulls)
 * @param reportedCachedTokens vLLM's reported {@code num_cached_tokens}: the hit of the last lookup before the first
 *     token
 * @param g2Tokens of {@code cachedTokens}, those loaded from the G2 host tier
 * @param remoteTokens of {@code cachedTokens}, those pulled from another worker (KVCR)
 * @param preemptions times preempted
 * @param status how it ended
 * @param hintWorker the session's previous worker when routed elsewhere, or -1
 * @param hintRank the hint's rank, or -1
 * @param hintBlocks leading prompt blocks the hinted rank held when routed
 * @param migrated whether the turn was sent away from its session's previous worker on purpose
 * @param pullNanos staging-to-landing time of its KVCR pull, or -1
 * @param pullSource the worker it pulled from, or -1
 * @param restarts restarts from scratch because its worker failed
 * @param pd its prefill/decode facts in a disaggregated run, else null
 */
public record RequestRecord(
        int requestId,
        long sessionId,
        int turn,
        int worker,
        int rank,
        long arrivalNanos,
        long firstScheduledNanos,
        long firstTokenNanos,
        long lastTokenNanos,
        int inputTokens,
        int outputTokens,
        int cachedTokens,
        int reportedCachedTokens,
        int g2Tokens,
        int remoteTokens,
        int preemptions,
        RequestStatus status,
        int hintWorker,
        int hintRank,
        int hintBlocks,
        boolean migrated,
        long pullNanos,
        int pullSource,
        int restarts,
        PdFacts pd) {
    /** A record of an aggregated run (no P/D facts). */
    public RequestRecord(
            int requestId,
            long sessionId,
            int turn,
            int worker,
            int rank,
            long arrivalNanos,
            long firstScheduledNanos,
            long firstTokenNanos,
            long lastTokenNanos,
            int inputTokens,
            int outputTokens,
            int cachedTokens,
            int reportedCachedTokens,
            int g2Tokens,
            int remoteTokens,
            int preemptions,
            RequestStatus status,
            int hintWorker,
            int hintRank,
            int hintBlocks,
            boolean migrated,
            long pullNanos,
            int pullSource,
            int restarts) {
        this(
                requestId,
                sessionId,
                turn,
                worker,
                rank,
                arrivalNanos,
                firstScheduledNanos,
                firstTokenNanos,
                lastTokenNanos,
                inputTokens,
                outputTokens,
                cachedTokens,
                reportedCachedTokens,
                g2Tokens,
                remoteTokens,
                preemptions,
                status,
                hintWorker,
                hintRank,
                hintBlocks,
                migrated,
                pullNanos,
                pullSource,
                restarts,
                null);
    }

    /** Queue time = first scheduled − arrival (ns), or -1 when never scheduled. */
    public long queueNanos() {
        return firstScheduledNanos < 0 ? -1 : firstScheduledNanos - arrivalNanos;
    }

    /** TTFT = first token − arrival (ns), or -1 without a first token. */
    public long ttftNanos() {
        return firstTokenNanos < 0 ? -1 : firstTokenNanos - arrivalNanos;
    }

    /** E2E = last token − arrival (ns), or -1 without output. */
    public long e2eNanos() {
        return lastTokenNanos < 0 ? -1 : lastTokenNanos - arrivalNanos;
    }

    /**
     * TPOT in picoseconds, the one definition every output uses (docs/metrics.md): (last token − first token) /
     * (output tokens − 1), rounded to the nearest picosecond; -1 with fewer than 2 output tokens.
     */
    public long tpotPicos() {
        return tpotPicos(firstTokenNanos, lastTokenNanos, outputTokens);
    }

    /** TPOT in picoseconds of a request with these token times and output count, or -1 (see {@link #tpotPicos()}). */
    public static long tpotPicos(long firstTokenNanos, long lastTokenNanos, int outputTokens) {
        if (outputTokens < 2 || firstTokenNanos < 0) {
            return -1;
        }
        return Math.round((lastTokenNanos - firstTokenNanos) * 1000.0 / (outputTokens - 1));
    }

    /**
     * TPOT in milliseconds: {@link #tpotPicos()} × 10⁻⁹, the same double the summary's percentiles hold for this
     * value (so an SLO check on a request agrees with the summary); NaN with fewer than 2 output tokens.
     */
    public double tpotMs() {
        long ps = tpotPicos();
        return ps < 0 ? Double.NaN : ps * 1e-9;
    }

    /** Of {@code cachedTokens}, those hit in the GPU cache (G1). */
    public int g1Tokens() {
        return cachedTokens - g2Tokens - remoteTokens;
    }

    /** Whether it completed (including length-capped): it counts toward latency metrics. */
    public boolean completed() {
        return status.completed();
    }
}
