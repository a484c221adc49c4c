package io.servesim.engine;

import io.servesim.config.ClusterConfig.DpMode;
import io.servesim.sim.EventQueue;

/**
 * A serving instance (one vLLM engine) holding {@code attention_dp} ranks, each with its own queues and KV pool,
 * stepped either in lockstep or independently.
 */
public final class Worker {
    private final int id;
    private final EngineRank[] ranks;

    /**
     * Creates a worker over its ranks and installs their step driver.
     *
     * @param dpMode {@code lockstep} (one barrier per pass for all ranks) or {@code independent}
     * @param asyncScheduling vLLM's async engine loop ({@link AsyncWorker}) instead of the synchronous one
     */
    public Worker(int id, EngineRank[] ranks, DpMode dpMode, boolean asyncScheduling, EventQueue queue) {
        this.id = id;
        this.ranks = ranks.clone();
        if (asyncScheduling) {
            if (dpMode == DpMode.LOCKSTEP) {
                new AsyncWorker(this.ranks, queue);
            } else {
                for (EngineRank r : this.ranks) {
                    new AsyncWorker(new EngineRank[] {r}, queue);
                }
            }
        } else if (dpMode == DpMode.LOCKSTEP) {
            new LockstepWorker(this.ranks, queue);
        } else {
            for (EngineRank r : this.ranks) {
                new IndependentStepper(r, queue);
            }
        }
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
