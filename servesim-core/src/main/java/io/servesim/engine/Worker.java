package io.servesim.engine;

/** A serving instance (one vLLM engine) holding {@code attention_dp} ranks, each with its own queues and KV pool. */
public final class Worker {
    private final int id;
    private final EngineRank[] ranks;

    /** Creates a worker over its ranks. */
    public Worker(int id, EngineRank[] ranks) {
        this.id = id;
        this.ranks = ranks.clone();
    }

    /** The worker id. */
    public int id() {
        return id;
    }

    /** Number of ranks. */
    public int numRanks() {
        return ranks.length;
    }

    /** Rank i. */
    public EngineRank rank(int i) {
        return ranks[i];
    }
}
