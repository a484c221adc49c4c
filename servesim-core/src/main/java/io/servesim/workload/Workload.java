package io.servesim.workload;

import io.servesim.sim.EventQueue;

/** A source of requests that schedules its own arrivals and reacts to completions (closed loops, sessions). */
public interface Workload {
    /** Schedules the first arrivals. */
    void start(EventQueue queue, RequestSink sink);

    /**
     * Called once per request when it leaves the system.
     *
     * @param request the request
     * @param generatedTokens output tokens actually generated (0 when rejected)
     * @param rejected whether the engine rejected it
     */
    void onRequestDone(Request request, int generatedTokens, boolean rejected);

    /**
     * Called once for a request that reached no worker (every worker had failed or was draining; it is recorded as
     * rejected {@code no_worker}). Session workloads end its session as after a rejection, so its later turns are
     * recorded as abandoned rather than lost; independent requests need nothing.
     */
    default void onRequestLost(Request request) {}

    /** Requests created so far. */
    int requestsCreated();

    /**
     * Declared by the run before {@link #start}: every prompt is hashed at dispatch in blocks of {@code blockSize}
     * tokens, and afterwards no prompt token before its last full block is read (the engines read tokens only to hash
     * blocks that reach into generated tokens). A workload may then drop tokens it keeps only for that — the session
     * workload keeps each turn's tail instead of its whole conversation. Default: nothing is dropped.
     */
    default void keepTokensAfterHashing(int blockSize) {}

    /** Malformed input rows skipped (only with skip_bad_lines); never silent: reported in summary.json. */
    default long badLinesSkipped() {
        return 0;
    }

    /** The first skipped rows' errors ({@code file:line: field: problem}), at most 20. */
    default java.util.List<String> badLineSamples() {
        return java.util.List.of();
    }
}
