package io.servesim.run;

import io.servesim.config.SimConfig;
import io.servesim.engine.EngineListener;
import io.servesim.engine.EngineRank;
import io.servesim.engine.SchedulerSettings;
import io.servesim.engine.Sequence;
import io.servesim.engine.StepObserver;
import io.servesim.engine.VllmScheduler;
import io.servesim.engine.Worker;
import io.servesim.metrics.EngineCounters;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestStatus;
import io.servesim.router.LoadIndex;
import io.servesim.router.Router;
import io.servesim.router.RouterContext;
import io.servesim.router.Routers;
import io.servesim.sim.EventQueue;
import io.servesim.sim.RandomStreams;
import io.servesim.timing.TimingModel;
import io.servesim.workload.Request;
import io.servesim.workload.RequestSink;
import io.servesim.workload.SessionWorkload;
import io.servesim.workload.SyntheticWorkload;
import io.servesim.workload.Workload;
import io.servesim.workload.trace.TraceWorkload;
import java.nio.file.Path;

/**
 * One simulation: wires workload → router → worker ranks on one event queue and runs it to completion. A run is a
 * pure function of its {@link SimConfig}: single-threaded, no wall clock, no shared state.
 */
public final class Simulation implements EngineListener {
    private final SimConfig config;
    private final EventQueue queue = new EventQueue(1024);
    private final EngineCounters counters = new EngineCounters();
    private final RequestLog log = new RequestLog();
    private final io.servesim.metrics.TimeSeries timeSeries = new io.servesim.metrics.TimeSeries();
    private int[] rankWaiting;
    private int[] rankRunning;
    private int[] rankUsedBlocks;
    private long totalWaiting;
    private long totalRunning;
    private long totalUsedBlocks;
    private long usableBlocksTotal;
    private final long[] g2Used = new long[1];
    private long g2Capacity;
    private long[] workerCompleted;
    private io.servesim.transfer.TransferService kvcrTransfers;
    private final io.servesim.metrics.RequestMetrics metrics = new io.servesim.metrics.RequestMetrics();
    private io.servesim.metrics.RequestStream stream;
    private final Worker[] workers;
    private final EngineRank[] ranks;
    private final Router router;
    private final LoadIndex load;
    private final Workload workload;
    private final long[] workerRequests;
    private final it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap sessionRank =
            new it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap();
    private long lastFinishNanos;
    private final boolean[] failed;
    private final io.servesim.timing.Deployment deployment;
    private int aliveWorkers;
    private boolean started;

    /** Builds a simulation (validating names against the registries) without running it. */
    public Simulation(SimConfig config) {
        this.config = config;
        RandomStreams streams = new RandomStreams(config.workload().seed());
        long exact = config.output().exactPercentileSamples();
        metrics.exactLimit(exact);
        counters.itlNanos.exactLimit(exact);
        counters.kvcrPullNanos.exactLimit(exact);
        counters.kvcrParkedNanos.exactLimit(exact);
        this.deployment = io.servesim.timing.Deployment.resolve(config);
        TimingModel timing =
                deployment.timingModel(config.timing(), config.cluster().attentionDp());
        SchedulerSettings settings =
                SchedulerSettings.of(config.engine(), deployment.numGpuBlocks(), deployment.maxModelLen());
        int w = config.cluster().workers();
        int dp = config.cluster().attentionDp();
        this.workers = new Worker[w];
        this.ranks = new EngineRank[w * dp];
        for (int i = 0; i < w; i++) {
            EngineRank[] rs = new EngineRank[dp];
            for (int r = 0; r < dp; r++) {
                int g = i * dp + r;
                rs[r] = new EngineRank(i, r, g, settings, timing, queue, this, counters);
                ranks[g] = rs[r];
            }
            workers[i] = new Worker(i, rs, config.cluster().dpMode(), queue);
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
                        config.engine().kvCache().blockSize(),
                        queue));
        io.servesim.config.KvcrConfig kvcr = config.engine().kvcr();
        if (kvcr.enabled()) {
            io.servesim.engine.CopyJobs pulls = new io.servesim.engine.CopyJobs();
            io.servesim.transfer.TransferService nics =
                    new io.servesim.transfer.TransferService(queue, 1, kvcr.fabricGbytesPerS());
            nics.listener(pulls);
            this.kvcrTransfers = nics;
            this.kvcrRegistry = new io.servesim.engine.KvcrRegistry(
                    kvcr,
                    nics,
                    pulls,
                    ranks,
                    dp,
                    deployment.bytesPerToken() * config.engine().kvCache().blockSize(),
                    timing,
                    queue,
                    counters);
        }
        io.servesim.config.HostOffloadConfig ho = config.engine().kvCache().hostOffload();
        if (ho.enabled()) {
            installHostOffload(ho);
        }
        if (router instanceof io.servesim.kv.KvEventSink sink
                && config.cluster().router().kv().mode().equals("exact")) {
            for (EngineRank r : ranks) {
                r.scheduler().pool().eventSink(sink, r.globalIndex()); // engines publish stored/removed events
            }
        }
        this.workerRequests = new long[w];
        this.rankWaiting = new int[ranks.length];
        this.rankRunning = new int[ranks.length];
        this.rankUsedBlocks = new int[ranks.length];
        this.workerCompleted = new long[w];
        this.usableBlocksTotal = (long) ranks.length * (deployment.numGpuBlocks() - 1);
        this.failed = new boolean[w];
        this.aliveWorkers = w;
        sessionRank.defaultReturnValue(-1);
        this.workload = switch (config.workload().type()) {
            case "synthetic" ->
                new SyntheticWorkload(
                        config.workload().synthetic(), config.workload().arrival(), streams);
            case "sessions" ->
                new SessionWorkload(
                        config.workload().sessions(), config.workload().arrival(), streams);
            case "trace" ->
                new TraceWorkload(
                        config.workload().trace(),
                        Path.of(config.workload().trace().path()),
                        streams,
                        config.cluster().attentionDp());
            default -> throw new IllegalStateException(config.workload().type());
        };
    }

    private final java.util.List<io.servesim.kv.HostPool> hostPools = new java.util.ArrayList<>();
    private io.servesim.engine.KvcrRegistry kvcrRegistry;

    private void installHostOffload(io.servesim.config.HostOffloadConfig ho) {
        io.servesim.transfer.TransferService transfers = new io.servesim.transfer.TransferService(queue, 0, 0);
        io.servesim.engine.CopyJobs jobs = new io.servesim.engine.CopyJobs();
        transfers.listener(jobs);
        boolean shared = ho.scope().equals("cluster_shared");
        io.servesim.kv.HostPool sharedPool = shared ? new io.servesim.kv.HostPool(ho.numHostBlocks()) : null;
        int sharedEndpoint = shared ? transfers.addEndpoint(ho.sharedGbytesPerS(), ho.sharedGbytesPerS()) : -1;
        if (shared) {
            hostPools.add(sharedPool);
            sharedPool.usageCell(g2Used);
            g2Capacity = ho.numHostBlocks();
        }
        long blockBytes = deployment.bytesPerToken() * config.engine().kvCache().blockSize();
        long firstByte = Math.round(ho.firstByteMs() * 1e6);
        for (EngineRank r : ranks) {
            int gpu = transfers.addEndpoint(ho.d2hGbytesPerS(), ho.h2dGbytesPerS());
            io.servesim.kv.HostPool pool = sharedPool;
            int hostEndpoint = sharedEndpoint;
            if (!shared) {
                pool = new io.servesim.kv.HostPool(ho.numHostBlocks());
                pool.usageCell(g2Used);
                g2Capacity += ho.numHostBlocks();
                hostPools.add(pool);
                hostEndpoint = transfers.addEndpoint(0, 0);
            }
            r.enableHostOffload(pool, transfers, jobs, gpu, hostEndpoint, blockBytes, firstByte, shared);
        }
    }

    /** Runs a config to completion. */
    public static RunResult run(SimConfig config) {
        return new Simulation(config).run();
    }

    /** Installs a step observer on every rank (tests). */
    public Simulation observeSteps(StepObserver observer) {
        for (EngineRank r : ranks) {
            r.observer(observer);
        }
        return this;
    }

    /** The ranks, by global index. */
    public EngineRank rank(int globalIndex) {
        return ranks[globalIndex];
    }

    /**
     * Streams per-request rows to {@code file} (requests.csv.zst) as requests end instead of keeping them; required
     * when {@code output.stream_requests} is on. Call before running.
     */
    public Simulation streamRequestsTo(Path file) {
        if (started) {
            throw new IllegalStateException("streamRequestsTo must be called before the run starts");
        }
        this.stream = new io.servesim.metrics.RequestStream(file);
        return this;
    }

    /** The KVCR registry, or null when KVCR is off. */
    public io.servesim.engine.KvcrRegistry kvcr() {
        return kvcrRegistry;
    }

    /** The run's counters so far. */
    public EngineCounters counters() {
        return counters;
    }

    /** Schedules the fleet events and the workload's first arrivals (once). */
    private void start() {
        if (started) {
            return;
        }
        if (config.output().streamRequests() && stream == null) {
            throw new IllegalStateException("output.stream_requests is on: call streamRequestsTo(file) before running");
        }
        started = true;
        for (io.servesim.config.ClusterEventConfig e : config.cluster().events()) {
            int worker = e.worker();
            boolean fail = e.action().equals("fail");
            queue.schedule(
                    Math.round(e.atMs() * 1e6),
                    io.servesim.sim.Phase.WORKER_READY,
                    worker,
                    (k, p) -> {
                        if (fail) {
                            failWorker(worker);
                        } else {
                            drainWorker(worker);
                        }
                    },
                    0,
                    worker);
        }
        long tick = Math.round(config.output().timeseriesTickS() * 1e9);
        if (tick > 0) {
            queue.schedule(tick, io.servesim.sim.Phase.TELEMETRY, 0, telemetry(tick), 0, 0);
        }
        workload.start(queue, new RequestSink() {
            @Override
            public void submit(Request request) {
                dispatch(request);
            }

            @Override
            public void sessionEnded(long sessionId) {
                router.onSessionEnded(sessionId);
                sessionRank.remove(sessionId);
            }
        });
    }

    /**
     * Runs every event at or before {@code nanos} of virtual time (starting the run if needed), so tests can look at
     * the state in between; {@link #run()} continues from there.
     */
    public Simulation runUntil(long nanos) {
        start();
        if (progress == null) {
            while (queue.peekTimeNanos() <= nanos && queue.runNext()) {
                // each event does its own work
            }
            return this;
        }
        long n = 0;
        while (queue.peekTimeNanos() <= nanos && queue.runNext()) {
            if (++n % progressEvery == 0) {
                progress.onProgress(queue.nowNanos(), metrics.completed + metrics.rejected, workload.requestsCreated());
            }
        }
        progress.onProgress(queue.nowNanos(), metrics.completed + metrics.rejected, workload.requestsCreated());
        return this;
    }

    /** Watches a run's advance (a progress bar); it only reads, so results do not depend on it. */
    public interface ProgressListener {
        /**
         * Called every {@code every} events.
         *
         * @param virtualNanos current virtual time
         * @param requestsEnded requests completed or rejected so far
         * @param requestsCreated requests arrived so far
         */
        void onProgress(long virtualNanos, long requestsEnded, long requestsCreated);
    }

    private ProgressListener progress;
    private long progressEvery;

    /** Installs a progress listener called every {@code everyEvents} events (null removes it). */
    public Simulation onProgress(ProgressListener listener, long everyEvents) {
        this.progress = listener;
        this.progressEvery = Math.max(1, everyEvents);
        return this;
    }

    /** Runs until no event is left or the time limit is reached, then collects the result. */
    public RunResult run() {
        long limit = config.limits().timeLimitNanos();
        runUntil(limit);
        if (!queue.isEmpty()) {
            endIncomplete(limit); // the time limit cut the run short
        }
        for (io.servesim.kv.HostPool p : hostPools) {
            counters.g2Evictions += p.evictions();
        }
        if (kvcrRegistry != null) {
            counters.kvcrMovingPeak = kvcrRegistry.movingPeak();
        }
        long[] busy = new long[workers.length];
        java.util.List<RankStats> rankStats = new java.util.ArrayList<>(ranks.length);
        for (Worker wk : workers) {
            for (int r = 0; r < wk.numRanks(); r++) {
                EngineRank rank = wk.rank(r);
                busy[wk.id()] += rank.busyNanos();
                counters.kvcrRegistryWakeups += rank.registryWakeups();
                counters.evictions += rank.scheduler().pool().evictions();
                rankStats.add(new RankStats(
                        wk.id(),
                        r,
                        rank.requests(),
                        rank.busyNanos(),
                        rank.passes(),
                        rank.prefillTokens(),
                        rank.decodeTokens(),
                        rank.peakUsedBlocks(),
                        rank.scheduler().pool().usableBlocks(),
                        rank.scheduler().preemptions()));
            }
        }
        String streamedSha = null;
        if (stream != null) {
            stream.close();
            streamedSha = stream.sha256();
        }
        return new RunResult(
                config,
                deployment,
                workload.requestsCreated(),
                log,
                timeSeries,
                metrics,
                streamedSha,
                counters,
                lastFinishNanos,
                busy,
                workerRequests,
                rankStats,
                workload.badLinesSkipped(),
                workload.badLineSamples());
    }

    /** The run stopped at its time limit: every request still in the system is logged as incomplete. */
    private void endIncomplete(long limitNanos) {
        lastFinishNanos = Math.max(lastFinishNanos, limitNanos);
        it.unimi.dsi.fastutil.objects.ObjectArrayList<Sequence> left =
                new it.unimi.dsi.fastutil.objects.ObjectArrayList<>();
        for (EngineRank rank : ranks) {
            if (rank.failed()) {
                continue;
            }
            int from = left.size();
            rank.scheduler().inFlight(left);
            for (int i = from; i < left.size(); i++) {
                logRequest(
                        rank.workerId(), rank.rankId(), left.get(i), left.get(i).request(), RequestStatus.INCOMPLETE);
            }
        }
    }

    /**
     * The time-series sampler: one TELEMETRY event per tick, reading cluster totals kept up to date as ranks report
     * load changes (no scan of ranks; with per-worker rows, one pass over workers per tick). It stops rescheduling
     * when it is the only event left, so it never keeps a finished run alive.
     */
    private io.servesim.sim.EventHandler telemetry(long tickNanos) {
        return new io.servesim.sim.EventHandler() {
            private long lastPrompt;
            private long lastGenerated;
            private long lastCompleted;
            private long lastPullBytes;
            private long[] lastWorkerPrompt;
            private long[] lastWorkerGenerated;
            private long[] lastWorkerCompleted;

            @Override
            public void onEvent(int kind, long payload) {
                long now = queue.nowNanos();
                double seconds = tickNanos / 1e9;
                long prompt = counters.promptTokensComputed;
                long generated = counters.generatedTokens;
                long done = metrics.completed;
                long pullBytes = counters.kvcrBytes;
                timeSeries.add(
                        now,
                        -1,
                        (int) totalRunning,
                        (int) totalWaiting,
                        usableBlocksTotal == 0 ? 0 : 100.0 * totalUsedBlocks / usableBlocksTotal,
                        g2Capacity == 0 ? 0 : 100.0 * g2Used[0] / g2Capacity,
                        (prompt - lastPrompt) / seconds,
                        (generated - lastGenerated) / seconds,
                        done - lastCompleted,
                        kvcrTransfers == null ? 0 : kvcrTransfers.movingJobs(),
                        (pullBytes - lastPullBytes) / seconds);
                lastPrompt = prompt;
                lastGenerated = generated;
                lastCompleted = done;
                lastPullBytes = pullBytes;
                if (config.output().timeseriesPerWorker()) {
                    perWorker(now, seconds);
                }
                if (!queue.isEmpty()) {
                    queue.schedule(now + tickNanos, io.servesim.sim.Phase.TELEMETRY, 0, this, 0, 0);
                }
            }

            private void perWorker(long now, double seconds) {
                if (lastWorkerPrompt == null) {
                    lastWorkerPrompt = new long[workers.length];
                    lastWorkerGenerated = new long[workers.length];
                    lastWorkerCompleted = new long[workers.length];
                }
                int dp = config.cluster().attentionDp();
                for (int w = 0; w < workers.length; w++) {
                    int run = 0;
                    int wait = 0;
                    long used = 0;
                    long prompt = 0;
                    long decode = 0;
                    for (int r = 0; r < dp; r++) {
                        int g = w * dp + r;
                        run += rankRunning[g];
                        wait += rankWaiting[g];
                        used += rankUsedBlocks[g];
                        prompt += ranks[g].prefillTokens();
                        decode += ranks[g].decodeTokens();
                    }
                    timeSeries.add(
                            now,
                            w,
                            run,
                            wait,
                            100.0 * used / ((long) dp * (deployment.numGpuBlocks() - 1)),
                            0,
                            (prompt - lastWorkerPrompt[w]) / seconds,
                            (decode - lastWorkerGenerated[w]) / seconds,
                            workerCompleted[w] - lastWorkerCompleted[w],
                            0,
                            0);
                    lastWorkerPrompt[w] = prompt;
                    lastWorkerGenerated[w] = decode;
                    lastWorkerCompleted[w] = workerCompleted[w];
                }
            }
        };
    }

    private void drainWorker(int worker) {
        counters.workersDrained++;
        router.onWorkerDraining(worker); // nothing new is routed there; it finishes what it has
        if (kvcrRegistry != null) {
            kvcrRegistry.onWorkerDraining(worker);
        }
    }

    /**
     * A worker fails: nothing is routed to it again; pulls from it abort and pulls to it become source-only; every
     * request it held restarts from scratch on another worker, in request-id order (its clients retry), keeping its
     * original arrival time so the lost work shows in its latency.
     */
    private void failWorker(int worker) {
        if (failed[worker]) {
            return;
        }
        failed[worker] = true;
        aliveWorkers--;
        counters.workersFailed++;
        router.onWorkerDraining(worker);
        if (kvcrRegistry != null) {
            kvcrRegistry.onWorkerFailed(worker);
        }
        it.unimi.dsi.fastutil.objects.ObjectArrayList<Sequence> orphans =
                new it.unimi.dsi.fastutil.objects.ObjectArrayList<>();
        for (int r = 0; r < workers[worker].numRanks(); r++) {
            EngineRank rank = workers[worker].rank(r);
            rank.fail(orphans);
            onLoadChanged(rank); // its queues are empty now: totals drop its requests
            if (router.usesLoad()) {
                load.update(rank.globalIndex(), 0, 0);
            }
        }
        orphans.sort((a, b) -> Integer.compare(a.request().id(), b.request().id()));
        for (Sequence s : orphans) {
            counters.restarts++;
            s.request().restarted();
            dispatch(s.request());
        }
    }

    private void dispatch(Request request) {
        if (aliveWorkers == 0) {
            logRequest(-1, -1, null, request, RequestStatus.REJECTED_NO_WORKER);
            return;
        }
        long session = request.sessionId();
        int previous = session >= 0 ? sessionRank.get(session) : -1;
        int dp = config.cluster().attentionDp();
        if (previous >= 0 && failed[previous / dp]) {
            previous = -1; // the session's worker failed: its cache is gone, there is nothing to hint or avoid
        }
        boolean migrating = request.migrate() && previous >= 0 && workers.length > 1;
        int g = migrating ? router.routeExcluding(request, previous / dp) : router.route(request);
        if (failed[g / dp]) {
            // every live worker drains or is excluded, so the router fell back to a failed one: take the next live
            // worker instead (only reached in that corner, so the scan does not cost per request)
            int w = g / dp;
            do {
                w = (w + 1) % workers.length;
            } while (failed[w]);
            g = w * dp + g % dp;
        }
        if (request.dpRank() >= 0) {
            // an authored dp_rank wins over the router's rank choice (the router still picks the worker)
            g = (g / dp) * dp + request.dpRank();
        }
        if (previous >= 0 && previous / dp != g / dp) {
            // the hint: where the session's previous turn ran, and how much of this prompt that rank still holds
            request.routed(migrating, previous / dp, previous % dp, heldBlocks(ranks[previous], request));
        } else {
            request.routed(false, -1, -1, 0);
        }
        if (session >= 0) {
            sessionRank.put(session, g);
        }
        EngineRank rank = ranks[g];
        workerRequests[rank.workerId()]++;
        rank.submit(request);
    }

    /** Leading full prompt blocks of {@code request} cached on {@code rank}: O(matched blocks) lookups. */
    private static int heldBlocks(EngineRank rank, Request request) {
        io.servesim.kv.BlockPool pool = rank.scheduler().pool();
        int bs = rank.scheduler().settings().blockSize();
        int[] tokens = request.promptTokens();
        long[] pre = request.blockHashes(bs);
        int full = request.promptLength() / bs;
        long parent = io.servesim.kv.BlockHasher.ROOT;
        int held = 0;
        for (int b = 0; b < full; b++) {
            long h = pre != null ? pre[b] : io.servesim.kv.BlockHasher.hashBlock(parent, tokens, b * bs, bs);
            if (pool.lookup(h) < 0) {
                break;
            }
            held++;
            parent = h;
        }
        return held;
    }

    @Override
    public void onRequestFinished(EngineRank rank, Sequence s, boolean rejected) {
        Request r = s.request();
        long now = queue.nowNanos();
        lastFinishNanos = Math.max(lastFinishNanos, now);
        RequestStatus status;
        if (rejected) {
            status = RequestStatus.REJECTED_PROMPT_TOO_LONG;
        } else if (s.numOutputTokens() < r.outputTokens()) {
            status = RequestStatus.LENGTH_CAPPED;
        } else {
            status = RequestStatus.COMPLETED;
        }
        logRequest(rank.workerId(), rank.rankId(), s, r, status);
        if (status.completed()) {
            workerCompleted[rank.workerId()]++;
        }
        workload.onRequestDone(r, s.numOutputTokens(), rejected);
    }

    /** Appends a request's final record; {@code s} is null when it never reached a rank. */
    private void logRequest(int worker, int rank, Sequence s, Request r, RequestStatus status) {
        long firstScheduled = s == null ? -1 : s.firstScheduledNanos();
        long firstToken = s == null ? -1 : s.firstTokenNanos();
        long lastToken = s == null ? -1 : s.lastTokenNanos();
        int output = s == null ? 0 : s.numOutputTokens();
        metrics.record(status, r.arrivalNanos(), firstScheduled, firstToken, lastToken, r.promptLength(), output);
        RequestLog target = stream == null ? log : scratch;
        target.add(
                r.id(),
                r.sessionId(),
                r.turn(),
                worker,
                rank,
                r.arrivalNanos(),
                firstScheduled,
                firstToken,
                lastToken,
                r.promptLength(),
                output,
                s == null ? 0 : Math.max(0, s.cachedTokensAtFirstAdmission()),
                s == null ? 0 : s.preemptions(),
                status,
                r.hintWorker(),
                r.hintRank(),
                r.hintBlocks(),
                r.migrated(),
                s == null ? 0 : s.g2TokensAtFirstAdmission(),
                s == null ? 0 : s.remoteTokensAtFirstAdmission(),
                s == null ? -1 : s.pullNanos(),
                s == null ? -1 : s.pullSource(),
                r.restarts());
        if (stream != null) {
            stream.add(scratch, 0);
            scratch.clear();
        }
    }

    private final RequestLog scratch = new RequestLog();

    @Override
    public void onLoadChanged(EngineRank rank) {
        VllmScheduler s = rank.scheduler();
        int g = rank.globalIndex();
        int waiting = s.numWaiting();
        int running = s.numRunning();
        int used = s.pool().usedBlocks();
        totalWaiting += waiting - rankWaiting[g];
        totalRunning += running - rankRunning[g];
        totalUsedBlocks += used - rankUsedBlocks[g];
        rankWaiting[g] = waiting;
        rankRunning[g] = running;
        rankUsedBlocks[g] = used;
        if (router.usesLoad()) {
            load.update(rank.globalIndex(), s.numWaiting(), s.numRunning());
        }
        router.onRankLoad(
                rank.globalIndex(),
                s.numWaiting(),
                s.numRunning(),
                s.pendingPromptTokens(),
                s.pool().usedBlocks());
    }
}
