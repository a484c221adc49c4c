package io.servesim.run;

import io.servesim.config.HostOffloadConfig;
import io.servesim.config.KvcrConfig;
import io.servesim.config.SimConfig;
import io.servesim.engine.CopyJobs;
import io.servesim.engine.EngineListener;
import io.servesim.engine.EngineRank;
import io.servesim.engine.KvcrRegistry;
import io.servesim.engine.OffloadCounters;
import io.servesim.engine.PdTransfers;
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
    private final List<Deployment> poolDeployments;
    /** Per worker, its pool's index in {@code cluster.pools} (all 0 without pools). */
    private final int[] poolOfWorker;
    /** Per pool, KV blocks a rank can fill (vLLM's count less its null block). */
    private final int[] usableBlocksPerRank;

    private final int maxModelLen;
    private final Worker[] workers;
    private final EngineRank[] ranks;
    private final int ranksPerWorker;
    private final int[] rankBase;
    private final int[] workerOfRank;
    private final RouterGroup[] groups;
    private final RouterGroup[] groupOfWorker;
    private final PdTransfers pd;
    private final int maxLocalPrefillTokens;
    private final TransferService pdTransfers;
    private final KvcrRegistry kvcr;
    private final TransferService kvcrTransfers;
    private TransferService hostTransfers;
    private final List<HostPool> hostPools = new ArrayList<>();
    private final HostUsage g2 = new HostUsage();
    private final boolean hashPrompts;
    private final boolean routersHash; // some router reads prompt hashes
    private final boolean readsAnyToken; // an engine that matches prompts token by token (TensorRT-LLM's radix)
    private static final long[] NO_HASHES = new long[0];
    private final int blockSize;
    private final boolean[] failed;
    private boolean[] draining;
    private int acceptingWorkers;

    /**
     * Assembles the cluster.
     *
     * @param deployments what the config resolved to: one deployment, or one per pool of {@code cluster.pools} in
     *     order ({@link Simulation#deployments})
     */
    Cluster(
            SimConfig config,
            List<Deployment> deployments,
            EventQueue queue,
            RandomStreams streams,
            EngineListener listener,
            SchedulerCounters schedulerCounters,
            OffloadCounters offloadCounters) {
        List<io.servesim.config.PoolConfig> pools = config.cluster().pools();
        this.deployment = deployments.get(0);
        this.poolDeployments = pools.isEmpty() ? List.of() : List.copyOf(deployments);
        int w = config.cluster().workers();
        int dp = config.cluster().attentionDp();
        int numPools = Math.max(1, pools.size());
        TimingModel[] timings = new TimingModel[numPools];
        SchedulerSettings[] settingsOf = new SchedulerSettings[numPools];
        int[] hybridWindowOf = new int[numPools];
        io.servesim.config.EngineConfig[] engineOf = new io.servesim.config.EngineConfig[numPools];
        this.usableBlocksPerRank = new int[numPools];
        int longest = 0;
        boolean anyTrtllm = false;
        for (int p = 0; p < numPools; p++) {
            SimConfig pc = pools.isEmpty() ? config : config.forPool(p);
            Deployment d = deployments.get(p);
            timings[p] =
                    d.timingModel(pc.timing(), pc.engine().kind(), pc.cluster().attentionDp(), config.baseDir());
            io.servesim.config.EngineConfig engine = d.engine(pc.engine()); // SGLang's GPU defaults resolved
            settingsOf[p] = SchedulerSettings.of(
                    engine,
                    d.numGpuBlocks(),
                    d.maxModelLen(),
                    d.maxNumSeqs(),
                    d.maxNumBatchedTokens(),
                    pc.cluster().attentionDp());
            hybridWindowOf[p] = d.hybridWindowTokens();
            engineOf[p] = engine; // a pool may run its own engine kind
            anyTrtllm |= pc.engine().kind() == io.servesim.config.EngineKind.TRTLLM;
            usableBlocksPerRank[p] = d.numGpuBlocks() - 1;
            longest = Math.max(longest, d.maxModelLen());
            if (d.bytesPerToken() != deployment.bytesPerToken()
                    && (config.engine().kvcr().enabled()
                            || config.engine().kvCache().hostOffload().enabled())) {
                String at = !config.cluster().disaggregated()
                        ? "cluster.pools[" + p + "].timing"
                        : p == io.servesim.config.ClusterConfig.PREFILL_POOL
                                ? "cluster.prefill.timing"
                                : "cluster.decode.timing";
                throw new io.servesim.config.ConfigException(
                        at,
                        "KV bytes per token per GPU differ between pools (" + d.bytesPerToken() + " against "
                                + deployment.bytesPerToken() + "): KVCR pulls and the G2 tier need them equal"
                                + " (same tensor parallelism and KV dtype)");
            }
        }
        this.maxModelLen = longest;
        this.poolOfWorker = new int[w];
        for (int i = 0; i < w; i++) {
            poolOfWorker[i] = config.cluster().poolOf(i);
        }
        this.ranksPerWorker = dp;
        this.blockSize = config.engine().kvCache().blockSize();
        this.workers = new Worker[w];
        // global rank indices: worker i's ranks are [rankBase[i], rankBase[i + 1]) (a disaggregated cluster's pools
        // may differ in attention_dp; elsewhere rankBase[i] = i x attention_dp)
        this.rankBase = new int[w + 1];
        for (int i = 0; i < w; i++) {
            rankBase[i + 1] = rankBase[i] + config.cluster().ranksOf(i);
        }
        this.workerOfRank = new int[rankBase[w]];
        this.ranks = new EngineRank[rankBase[w]];
        // one step batch for every rank: a step's batch is filled by its schedule and read before any other rank
        // schedules, so the ranks share it and a step touches no batch of its own
        io.servesim.timing.StepBatch stepBatch = new io.servesim.timing.StepBatch();
        for (int i = 0; i < w; i++) {
            int rpw = rankBase[i + 1] - rankBase[i];
            EngineRank[] rs = new EngineRank[rpw];
            TimingModel timing = timings[poolOfWorker[i]];
            SchedulerSettings settings = settingsOf[poolOfWorker[i]];
            io.servesim.config.EngineConfig engine = engineOf[poolOfWorker[i]];
            for (int r = 0; r < rpw; r++) {
                int g = rankBase[i] + r;
                workerOfRank[g] = i;
                rs[r] = switch (engine.kind()) { // the engine registry: one rank per engine kind
                    case VLLM ->
                        new EngineRank(i, r, g, settings, timing, queue, listener, schedulerCounters, offloadCounters);
                    case TRTLLM ->
                        new EngineRank(
                                i,
                                r,
                                g,
                                new io.servesim.engine.TrtllmScheduler(settings, engine.trtllm(), schedulerCounters),
                                timing,
                                queue,
                                listener,
                                offloadCounters);
                    case SGLANG ->
                        new EngineRank(
                                i,
                                r,
                                g,
                                new io.servesim.engine.SglangScheduler(
                                        settings,
                                        engine.sglang(),
                                        settings.maxNumSeqs(),
                                        streams.stream(RandomStreams.ENGINE, g),
                                        schedulerCounters),
                                timing,
                                queue,
                                listener,
                                offloadCounters);
                };
                if (hybridWindowOf[poolOfWorker[i]] > 0
                        && rs[r].scheduler() instanceof io.servesim.engine.VllmScheduler vllm) {
                    vllm.hybridKv(hybridWindowOf[poolOfWorker[i]]);
                }
                rs[r].shareStepBatch(stepBatch);
                rs[r].maxTokensSent(config.workload().maxTokensSent());
                ranks[g] = rs[r];
            }
            workers[i] = new Worker(i, rs, config.cluster().dpMode(), settings.asyncScheduling(), queue);
        }
        io.servesim.config.ClusterConfig cc = config.cluster();
        this.groupOfWorker = new RouterGroup[w];
        if (cc.disaggregated()) {
            // one router per pool: prefill workers first, then decode workers (ClusterConfig.PREFILL_POOL, DECODE_POOL)
            this.groups = new RouterGroup[2];
            int first = 0;
            for (int p = 0; p < 2; p++) {
                io.servesim.config.PoolConfig pool = pools.get(p);
                groups[p] = group(
                        pool.router(),
                        first,
                        pool.workers(),
                        cc.attentionDpOfPool(p),
                        streams,
                        queue,
                        p == io.servesim.config.ClusterConfig.PREFILL_POOL
                                ? RandomStreams.PREFILL_ROUTER
                                : RandomStreams.ROUTER);
                first += pool.workers();
            }
        } else {
            this.groups = new RouterGroup[] {group(cc.router(), 0, w, dp, streams, queue, RandomStreams.ROUTER)};
        }
        for (RouterGroup g : groups) {
            for (int i = g.firstWorker(); i < g.firstWorker() + g.workers(); i++) {
                groupOfWorker[i] = g;
            }
        }
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
        boolean kvEvents = false;
        for (RouterGroup g : groups) {
            io.servesim.config.RouterConfig rc =
                    cc.disaggregated() ? pools.get(g == groups[0] ? 0 : 1).router() : cc.router();
            if (g.router() instanceof KvEventSink sink && rc.needsKvEvents()) {
                kvEvents = true;
                int from = rankBase[g.firstWorker()];
                for (int i = from; i < rankBase[g.firstWorker() + g.workers()]; i++) {
                    // engines publish stored/removed events, under the router's local rank index
                    ranks[i].scheduler().pool().eventSink(sink, i - from);
                }
            }
        }
        this.maxLocalPrefillTokens = cc.disaggregated() ? cc.disagg().maxLocalPrefillTokens() : 0;
        if (cc.disaggregated()) {
            CopyJobs moves = new CopyJobs();
            io.servesim.config.DisaggConfig.KvTransferConfig tc = cc.disagg().transfer();
            this.pdTransfers = new TransferService(queue, 2, tc.fabricGbytesPerS());
            pdTransfers.listener(moves);
            Deployment prefill = deployments.get(io.servesim.config.ClusterConfig.PREFILL_POOL);
            long perToken;
            if (tc.bytesPerToken() != null) {
                perToken = tc.bytesPerToken();
            } else if (prefill.model() != null) {
                // the whole model's KV per token (every layer and KV head) at the prefill pool's KV dtype
                perToken = prefill.model()
                        .kvBytesPerToken(
                                prefill.model().kvBytes(pools.get(0).timing().kvDtype()), 1);
            } else {
                perToken = prefill.bytesPerToken() * pools.get(0).timing().tensorParallel();
            }
            this.pd = new PdTransfers(
                    tc,
                    pdTransfers,
                    moves,
                    ranks,
                    w,
                    perToken,
                    queue,
                    config.output().exactPercentileSamples(),
                    config.limits().timeLimitNanos());
        } else {
            this.pdTransfers = null;
            this.pd = null;
        }
        if (kvcr != null || ho.enabled() || pd != null) {
            // KV transfers reach other components between steps: no run-ahead (EventQueue)
            queue.forbidRunAhead();
        } else if (kvEvents) {
            // KV events reach the routers between steps: only quiet work (a decode run's steps, which change no block)
            // may run ahead
            queue.forbidRunAheadExceptQuiet();
        }
        boolean anyRouterHashes = false;
        for (RouterGroup g : groups) {
            anyRouterHashes |= g.router().needsPromptHashes();
        }
        this.routersHash = anyRouterHashes;
        this.hashPrompts = config.engine().kvCache().prefixCaching() || anyRouterHashes;
        this.readsAnyToken = anyTrtllm;
        this.failed = new boolean[w];
        this.acceptingWorkers = w;
    }

    private RouterGroup group(
            io.servesim.config.RouterConfig rc,
            int firstWorker,
            int workers,
            int dp,
            RandomStreams streams,
            EventQueue queue,
            long streamDomain) {
        LoadIndex load = new LoadIndex(workers * dp);
        Router router = Routers.create(
                rc.policy(),
                new RouterContext(
                        workers, dp, load, streams, rc.affinityLoadCap(), rc.kv(), blockSize, queue, streamDomain));
        return new RouterGroup(router, load, firstWorker, workers, dp, rankBase[firstWorker]);
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
            r.enableHostOffload(
                    pool,
                    transfers,
                    jobs,
                    gpu,
                    hostEndpoint,
                    blockBytes,
                    firstByte,
                    shared,
                    ho.h2dGbytesPerS(),
                    ho.d2hGbytesPerS());
        }
    }

    /** What the config resolved to (with pools: the first pool's). */
    Deployment deployment() {
        return deployment;
    }

    /** Each pool's deployment, in {@code cluster.pools} order (empty without pools). */
    List<Deployment> poolDeployments() {
        return poolDeployments;
    }

    /** The pool of worker {@code w} (0 without pools). */
    int poolOf(int w) {
        return poolOfWorker[w];
    }

    /** KV blocks one rank of worker {@code w} can fill. */
    int usableBlocksPerRank(int w) {
        return usableBlocksPerRank[poolOfWorker[w]];
    }

    /** Workers. */
    int numWorkers() {
        return workers.length;
    }

    /** Worker {@code w}. */
    Worker worker(int w) {
        return workers[w];
    }

    /** Attention-DP ranks per worker ({@code cluster.attention_dp}; a disaggregated pool may have its own). */
    int ranksPerWorker() {
        return ranksPerWorker;
    }

    /** Worker {@code w}'s first global rank index. */
    int firstRankOf(int w) {
        return rankBase[w];
    }

    /** Attention-DP ranks of worker {@code w}. */
    int ranksOf(int w) {
        return rankBase[w + 1] - rankBase[w];
    }

    /** The worker of global rank {@code g}. */
    int workerOfRank(int g) {
        return workerOfRank[g];
    }

    /** Ranks over all workers. */
    int numRanks() {
        return ranks.length;
    }

    /** The rank with cluster-wide index {@code g}. */
    EngineRank rank(int g) {
        return ranks[g];
    }

    /** The router groups: the fleet's one, or a disaggregated cluster's prefill then decode. */
    RouterGroup[] groups() {
        return groups;
    }

    /** The router group worker {@code w} belongs to. */
    RouterGroup groupOf(int w) {
        return groupOfWorker[w];
    }

    /** The P/D transfers, or null in an aggregated cluster. */
    PdTransfers pd() {
        return pd;
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
        if (pdTransfers != null) {
            out.add(pdTransfers);
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
        // a prompt every engine rejects at once (no room for an output token) is never looked up: do not hash it
        return request.promptLength() >= maxModelLen ? NO_HASHES : request.promptHashes(blockSize);
    }

    /**
     * {@link #promptHashes} for an aggregated dispatch, or null when nothing at dispatch reads them: no router reads
     * hashes, the request has no session (so no migration hint either), and its hashes derive from its seed or trace
     * hash ids — its engine then hashes it straight into the block table when it first needs them (the same values,
     * one array and one copy fewer per request; {@code Sequence.ensureHashes}).
     */
    long[] dispatchHashes(Request request) {
        if (!routersHash && request.sessionId() < 0 && request.derivedPromptHashes()) {
            return null;
        }
        return promptHashes(request);
    }

    /**
     * The block size after which a workload may drop prompt tokens ({@code Workload.keepTokensAfterHashing}), or 0:
     * when every prompt is hashed at dispatch (one block size for every pool and router) and no engine reads prompt
     * tokens except to hash the blocks after a prompt's last full one.
     */
    int tokenTailBlockSize() {
        return hashPrompts && !readsAnyToken ? blockSize : 0;
    }

    /** KV block size (tokens). */
    int blockSize() {
        return blockSize;
    }

    /** The context limit of pool {@code p}'s engines. */
    int maxModelLenOfPool(int p) {
        return poolDeployments.get(p).maxModelLen();
    }

    /** Conditional disaggregation's threshold ({@code cluster.disagg.max_local_prefill_tokens}; 0 when aggregated). */
    int maxLocalPrefillTokens() {
        return maxLocalPrefillTokens;
    }

    /** Whether worker {@code w} takes new work (neither failed nor draining). */
    boolean isAccepting(int w) {
        return !failed[w] && (draining == null || !draining[w]);
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
            groupOfWorker[w].workerStopped();
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
            groupOfWorker[w].workerStopped();
        }
        failed[w] = true;
        return true;
    }
}
