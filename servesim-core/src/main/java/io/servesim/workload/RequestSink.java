package io.servesim.workload;

/** Where a workload delivers arriving requests (the router, in a run). */
@FunctionalInterface
public interface RequestSink {
    /** Delivers a request at its arrival time (the current virtual time). */
    void submit(Request request);

    /** A session ended (no more turns will come), so per-session state elsewhere can be dropped. */
    default void sessionEnded(long sessionId) {}
}
