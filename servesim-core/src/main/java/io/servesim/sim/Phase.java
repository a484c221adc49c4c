package io.servesim.sim;

/**
 * Same-time event phases, in the order they run when events share a timestamp.
 *
 * <p>Pass completions make tokens visible first, so that requests finishing at time t free their KV blocks
 * before anything at t is admitted; transfers complete next; workers joining the pool follow; then arrivals are
 * routed; then ranks that have work start their next step (so a request arriving at exactly t can join the step
 * that starts at t); telemetry observes last. This follows AISimulate's replay loop (completions, ready, transfers,
 * admission, then pass starts) with transfer completions moved before worker-ready as the servesim issue asks.
 */
public final class Phase {
    /** A worker/rank pass (engine step) ends: outputs are applied. */
    public static final int PASS_COMPLETION = 0;
    /** A KV transfer finishes. */
    public static final int TRANSFER_COMPLETION = 1;
    /** A worker becomes ready to receive requests. */
    public static final int WORKER_READY = 2;
    /** A request arrives and is routed (admission to a rank's waiting queue). */
    public static final int ARRIVAL = 3;
    /** A rank that has work starts its next step (runs the scheduler). */
    public static final int STEP_START = 4;
    /** Observation only: time-series samples. */
    public static final int TELEMETRY = 5;

    /** Number of phases. */
    public static final int COUNT = 6;

    private Phase() {}
}
