package io.servesim.engine;

/** Receives what ranks report: finished requests and queue-length changes (for load-aware routers). */
public interface EngineListener {
    /** A request left the rank: completed, length-capped or rejected; called at its finish time. */
    void onRequestFinished(EngineRank rank, Sequence sequence, boolean rejected);

    /** The rank's waiting or running count changed. */
    default void onLoadChanged(EngineRank rank) {}
}
