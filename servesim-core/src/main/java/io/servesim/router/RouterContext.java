package io.servesim.router;

import io.servesim.sim.RandomStreams;

/**
 * What a router may use: the fleet shape, the load index (maintained by the cluster when the router asks for it)
 * and the run's random streams.
 *
 * @param workers number of workers
 * @param ranksPerWorker attention-DP ranks per worker
 * @param load live per-rank load scores
 * @param streams the run's random streams
 * @param affinityLoadCap session_affinity moves a session whose rank's load score exceeds this (null: never)
 */
public record RouterContext(
        int workers, int ranksPerWorker, LoadIndex load, RandomStreams streams, Integer affinityLoadCap) {
    /** A context without an affinity cap. */
    public RouterContext(int workers, int ranksPerWorker, LoadIndex load, RandomStreams streams) {
        this(workers, ranksPerWorker, load, streams, null);
    }

    /** Global rank index of (worker, rank). */
    public int globalIndex(int worker, int rank) {
        return worker * ranksPerWorker + rank;
    }
}
