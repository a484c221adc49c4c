package io.servesim.engine;

/**
 * Where dispatch placed a request and what it knew when it did: immutable, handed to the engine with the request
 * and carried by its {@link Sequence} (KVCR reads the hint; the run record reports it).
 *
 * @param worker the chosen worker, or -1 when the request never reached one
 * @param rank the chosen attention-DP rank within {@code worker}, or -1
 * @param migrated whether the turn was sent away from its session's previous worker on purpose
 * @param hintWorker the session's previous worker when the target differs (a KVCR pull source), or -1
 * @param hintRank the hint's rank within {@code hintWorker}, or -1
 * @param hintBlocks leading prompt blocks the hinted rank held at routing time
 * @param restarts times the request started over because its worker failed
 */
public record RoutingDecision(
        int worker, int rank, boolean migrated, int hintWorker, int hintRank, int hintBlocks, int restarts) {
    /** No routing yet: a fresh request. */
    public static final RoutingDecision NONE = new RoutingDecision(-1, -1, false, -1, -1, 0, 0);

    /** Whether the decision names a previous worker of the session (a hint). */
    public boolean hasHint() {
        return hintWorker >= 0;
    }

    /** This decision's facts on a request that never reached a worker (all workers failed), with its restarts. */
    public RoutingDecision unplaced(int restartCount) {
        return new RoutingDecision(-1, -1, migrated, hintWorker, hintRank, hintBlocks, restartCount);
    }
}
