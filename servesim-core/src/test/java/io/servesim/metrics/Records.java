package io.servesim.metrics;

/** Request records for the metrics tests: what a test sets, every other field at its "never happened" value. */
final class Records {
    private Records() {}

    /**
     * A record of request {@code id} on ({@code worker}, {@code rank}) with its times in nanoseconds (-1: never),
     * token counts and status; no session, hint, pull, restart or cached tokens.
     */
    static RequestRecord timed(
            int id,
            int worker,
            int rank,
            long arrivalNanos,
            long scheduledNanos,
            long firstNanos,
            long lastNanos,
            int inputTokens,
            int outputTokens,
            RequestStatus status) {
        return new RequestRecord(
                id,
                -1,
                0,
                worker,
                rank,
                arrivalNanos,
                scheduledNanos,
                firstNanos,
                lastNanos,
                inputTokens,
                outputTokens,
                0,
                0,
                0,
                0,
                0,
                status,
                -1,
                -1,
                0,
                false,
                -1,
                -1,
                0);
    }
}
