package io.servesim.router;

import io.servesim.workload.Request;

/** Places each arriving request on a (worker, rank), returned as a global rank index {@code worker * dp + rank}. */
public interface Router {
    /** Chooses the global rank index for a request at its arrival time. */
    int route(Request request);

    /**
     * Chooses a rank on any worker but {@code excludedWorker} (a migrating session turn), by this router's own rule
     * applied to the other workers, avoiding draining workers as {@link #route} does. Only called when there are at
     * least two workers. When every other worker drains, the choice is the router's own (see docs/architecture.md,
     * "Drain").
     */
    int routeExcluding(Request request, int excludedWorker);

    /**
     * {@link #route(Request)} given the prompt's full-block hashes (computed once per request by dispatch, shared
     * with the engine; null unless {@link #needsPromptHashes()} or prefix caching is on).
     */
    default int route(Request request, long[] promptHashes) {
        return route(request);
    }

    /** {@link #routeExcluding(Request, int)} given the prompt's full-block hashes. */
    default int routeExcluding(Request request, long[] promptHashes, int excludedWorker) {
        return routeExcluding(request, excludedWorker);
    }

    /** Whether this router reads the prompt's block hashes (then dispatch always computes them). */
    default boolean needsPromptHashes() {
        return false;
    }

    /**
     * A rank's load changed: queue lengths, prompt tokens not yet computed by requests without a first token, and
     * KV blocks in use.
     */
    default void onRankLoad(int rank, int waiting, int running, long pendingPromptTokens, int usedBlocks) {}

    /** A worker started draining: send it nothing new (unless every worker drains). */
    void onWorkerDraining(int worker);

    /** A session ended (its last turn finished, or a turn was rejected); routers may drop per-session state. */
    default void onSessionEnded(long sessionId) {}

    /** Whether this router reads rank loads (then the cluster keeps a {@link LoadIndex} up to date). */
    default boolean usesLoad() {
        return false;
    }
}
