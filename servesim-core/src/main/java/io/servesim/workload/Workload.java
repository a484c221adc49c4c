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

    /** Requests created so far. */
    int requestsCreated();
}
