package io.servesim.run;

import io.servesim.config.HostOffloadConfig;
import io.servesim.config.KvcrConfig;
import io.servesim.config.SimConfig;
import io.servesim.engine.CopyJobs;
import io.servesim.engine.EngineListener;
import io.servesim.engine.EngineRank;
import io.servesim.engine.KvcrRegistry;
import io.servesim.engine.OffloadCounters;
import io.servesim.engine.SchedulerCounters;
import io.servesim.engine.SchedulerSettings;
import io.servesim.engine.Worker;
import io.servesim.kv.HostPool;
import io.servesim.kv.HostUsage;
import io.servesim.kv.KvEventSink;
import io.servesim.router.LoadIndex;
import io.servesim.router.Router;
import io.servesim.router.RouterContext;
import io.servesim.router.Routers;
import io.servesim.sim.EventQueue;
import io.servesim.sim.RandomStreams;
import io.servesim.timing.Deployment;
import io.servesim.timing.TimingModel;
import io.servesim.transfer.TransferService;
import io.servesim.workload.Request;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster assembled from a config: workers and their attention-DP ranks (each with its vLLM scheduler and KV
 * pool), the router and its load index, the G2 host tiers and the KVCR registry with their transfer services, and
 * which workers are still alive. Assembly order is part of the run's definition (transfer endpoint ids, event
 * tie-breakers), so it is fixed here once.
 */
final class Cluster {
    private final Deployment deployment;
    private final Worker[] workers;
    private final EngineRank[] ranks;
    private final int ranksPerWorker;
    private final Router router;
    private final LoadIndex load;
    private final KvcrRegistry kvcr;
    private final TransferService kvcrTransfers;
    private TransferService hostTransfers;
    private final List<HostPool> hostPools = new ArrayList<>();
    private final HostUsage g2 = new HostUsage();
    private final boolean hashPrompts;
    private static final long[] NO_HASHES = new long[0];
    private final int blockSize;
    private final boolean[] failed;
    private boolean[] draining;
    private int acceptingWorkers;

    Cluster(
            SimConfig config,
            Deployment deployment,
            EventQueue queue,
            RandomStreams streams,
            EngineListener listener,
            SchedulerCounters schedulerCounters,
            OffloadCounters offloadCounters) {
        this.deployment = deployment;
        TimingModel timing =
                deployment.timingModel(config.timing(), config.cluster().attentionDp(), config.baseDir());
        SchedulerSettings settings =
                SchedulerSettings.of(config.engine(), deployment.numGpuBlocks(), deployment.maxModelLen());
        int w = config.cluster().workers();
        int dp = config.cluster().attentionDp();
        this.ranksPerWorker = dp;
        this.blockSize = config.engine().kvCache().blockSize();
        this.workers = new Worker[w];
        this.ranks = new EngineRank[w * dp];
        for (int i = 0; i < w; i++) {
            EngineRank[] rs = new EngineRank[dp];
            for (int r = 0; r < dp; r++) {
                int g = i * dp + r;
                rs[r] = switch (config.engine().kind()) { // the engine registry: one rank per engine kind
                    case VLLM ->
                        new EngineRank(i, r, g, settings, timing, queue, listener, schedulerCounters, offloadCounters);
                };
                ranks[g] = rs[r];
            }
            workers[i] = new Worker(i, rs, config.cluster().dpMode(), settings.asyncScheduling(), queue);
        }
        this.load = new LoadIndex(ranks.length);
        this.router = Routers.create(
                config.cluster().router().policy(),
                new RouterContext(
                        w,
                        dp,
                        load,
                        streams,
                        config.cluster().router().affinityLoadCap(),
                        config.cluster().router().kv(),
                        blockSize,
                        queue));
        KvcrConfig kvcrConfig = config.engine().kvcr();
        long blockBytes = deployment.bytesPerToken() * blockSize;
        if (kvcrConfig.enabled()) {
            CopyJobs pulls = new CopyJobs();
            this.kvcrTransfers = new TransferService(queue, 1, kvcrConfig.fabricGbytesPerS());
            kvcrTransfers.listener(pulls);
            this.kvcr = new KvcrRegistry(
                    kvcrConfig,
                    kvcrTransfers,
                    pulls,
                    ranks,
                    dp,
                    blockBytes,
                    timing,
                    queue,
                    config.output().exactPercentileSamples());
        } else {
            this.kvcrTransfers = null;
            this.kvcr = null;
        }
        HostOffloadConfig ho = config.engine().kvCache().hostOffload();
        if (ho.enabled()) {
            installHostOffload(ho, queue, blockBytes);
        }
        if (router instanceof KvEventSink sink && config.cluster().router().needsKvEvents()) {
            for (EngineRank r : ranks) {
                r.scheduler().pool().eventSink(sink, r.globalIndex()); // engines publish stored/removed events
            }
        }
        if (kvcr != null || ho.enabled() || config.cluster().router().needsKvEvents()) {
            // KV transfers and KV events reach other components between steps: no run-ahead (EventQueue)
            queue.forbidRunAhead();
        }
        this.hashPrompts = config.engine().kvCache().prefixCaching() || router.needsPromptHashes();
        this.failed = new boolean[w];
        this.acceptingWorkers = w;
    }

    /** G2 host tiers: one pool per rank, or one shared pool, each rank with its own GPU endpoint. */
    private void installHostOffload(HostOffloadConfig ho, EventQueue queue, long blockBytes) {
        TransferService transfers = new TransferService(queue, 0, 0);
        this.hostTransfers = transfers;
        CopyJobs jobs = new CopyJobs();
        transfers.listener(jobs);
        boolean shared = ho.scope() == HostOffloadConfig.Scope.CLUSTER_SHARED;
        HostPool sharedPool = shared ? new HostPool(ho.numHostBlocks(), g2) : null;
        int sharedEndpoint = shared ? transfers.addEndpoint(ho.sharedGbytesPerS(), ho.sharedGbytesPerS()) : -1;
        if (shared) {
            hostPools.add(sharedPool);
        }
        long firstByte = Math.round(ho.firstByteMs() * 1e6);
        for (EngineRank r : ranks) {
            int gpu = transfers.addEndpoint(ho.d2hGbytesPerS(), ho.h2dGbytesPerS());
            HostPool pool = sharedPool;
            int hostEndpoint = sharedEndpoint;
            if (!shared) {
                pool = new HostPool(ho.numHostBlocks(), g2);
                hostPools.add(pool);
                hostEndpoint = transfers.addEndpoint(0, 0);
            }
            r.enableHostOffload(pool, transfers, jobs, gpu, hostEndpoint, blockBytes, firstByte, shared);
        }
    }

    /** What the config resolved to. */
    Deployment deployment() {
        return deployment;
    }

    /** Workers. */
    int numWorkers() {
        return workers.length;
    }

    /** Worker {@code w}. */
    Worker worker(int w) {
        return workers[w];
    }

    /** Attention-DP ranks per worker. */
    int ranksPerWorker() {
        return ranksPerWorker;
    }

    /** Ranks over all workers. */
    int numRanks() {
        return ranks.length;
    }

    /** The rank with cluster-wide index {@code g}. */
    EngineRank rank(int g) {
        return ranks[g];
    }

    /** The router. */
    Router router() {
        return router;
    }

    /** The router's load index (kept up to date only when the router reads loads). */
    LoadIndex load() {
        return load;
    }

    /** The KVCR registry, or null when KVCR is off. */
    KvcrRegistry kvcr() {
        return kvcr;
    }

    /** KVCR pulls moving now (0 when KVCR is off). */
    int movingPulls() {
        return kvcrTransfers == null ? 0 : kvcrTransfers.movingJobs();
    }

    /** The transfer services in use (KVCR pulls, G2 copies), for accounting checks. */
    List<TransferService> transferServices() {
        List<TransferService> out = new ArrayList<>(2);
        if (kvcrTransfers != null) {
            out.add(kvcrTransfers);
        }
        if (hostTransfers != null) {
            out.add(hostTransfers);
        }
        return out;
    }

    /** G2 blocks held and capacity over every pool. */
    HostUsage g2() {
        return g2;
    }

    /** Every G2 pool (one shared, or one per rank). */
    List<HostPool> hostPools() {
        return hostPools;
    }

    /**
     * The prompt's full-block hashes, computed once per dispatch when the engines cache prefixes or the router reads
     * them (else null: nothing would look them up).
     */
    long[] promptHashes(Request request) {
        if (!hashPrompts) {
            return null;
        }
        // a prompt the engines reject at once (no room for an output token) is never looked up: do not hash it
        return request.promptLength() >= deployment.maxModelLen() ? NO_HASHES : request.promptHashes(blockSize);
    }

    /** Whether worker {@code w} failed. */
    boolean isFailed(int w) {
        return failed[w];
    }

    /** Workers that take new work: neither failed nor draining. */
    int acceptingWorkers() {
        return acceptingWorkers;
    }

    /** Marks worker {@code w} draining (it finishes what it has and takes nothing new). */
    void markDraining(int w) {
        if (draining == null) {
            draining = new boolean[failed.length];
        }
        if (!draining[w] && !failed[w]) {
            acceptingWorkers--;
        }
        draining[w] = true;
    }

    /** Marks worker {@code w} failed; false if it already was. */
    boolean markFailed(int w) {
        if (failed[w]) {
            return false;
        }
        if (draining == null || !draining[w]) {
            acceptingWorkers--;
        }
        failed[w] = true;
        return true;
    }
}
