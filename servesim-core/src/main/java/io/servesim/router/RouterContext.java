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
 * @param kv kv_aware settings (null: defaults)
 * @param blockSize the engines' KV block size (tokens)
 * @param clock virtual time (approximate kv_aware mode expires entries)
 * @param streamDomain the random-stream domain of this router's draws ({@link RandomStreams#ROUTER}; a disaggregated
 *     cluster's prefill router draws from {@link RandomStreams#PREFILL_ROUTER})
 */
public record RouterContext(
        int workers,
        int ranksPerWorker,
        LoadIndex load,
        RandomStreams streams,
        Integer affinityLoadCap,
        io.servesim.config.KvRouterConfig kv,
        int blockSize,
        io.servesim.sim.SimClock clock,
        long streamDomain) {
    /** A context drawing from the router stream domain. */
    public RouterContext(
            int workers,
            int ranksPerWorker,
            LoadIndex load,
            RandomStreams streams,
            Integer affinityLoadCap,
            io.servesim.config.KvRouterConfig kv,
            int blockSize,
            io.servesim.sim.SimClock clock) {
        this(workers, ranksPerWorker, load, streams, affinityLoadCap, kv, blockSize, clock, RandomStreams.ROUTER);
    }

    /** A context without an affinity cap or kv settings. */
    public RouterContext(int workers, int ranksPerWorker, LoadIndex load, RandomStreams streams) {
        this(workers, ranksPerWorker, load, streams, null);
    }

    /** A context with default kv settings, block size 16 and a clock at 0. */
    public RouterContext(
            int workers, int ranksPerWorker, LoadIndex load, RandomStreams streams, Integer affinityLoadCap) {
        this(
                workers,
                ranksPerWorker,
                load,
                streams,
                affinityLoadCap,
                new io.servesim.config.KvRouterConfig(1.0, 0.0, io.servesim.config.KvRouterConfig.Mode.EXACT, 120.0),
                16,
                () -> 0L);
    }

    /** Global rank index of (worker, rank). */
    public int globalIndex(int worker, int rank) {
        return worker * ranksPerWorker + rank;
    }
}
