package io.servesim.workload;

/** Where a workload delivers arriving requests (the router, in a run). */
@FunctionalInterface
public interface RequestSink {
    /** Delivers a request at its arrival time (the current virtual time). */
    void submit(Request request);

    /** A session ended (no more turns will come), so per-session state elsewhere can be dropped. */
    default void sessionEnded(long sessionId) {}

    /**
     * A session turn that will never be sent (an earlier turn of its session was rejected) is recorded as
     * abandoned now, so no trace row goes unaccounted. A sink that cannot record it refuses it loudly.
     */
    default void abandoned(Request request) {
        throw new IllegalStateException("request " + request.id() + " abandoned, but this sink cannot record it");
    }
}
