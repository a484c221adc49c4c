package io.servesim.run;

import io.servesim.config.SimConfig;
import io.servesim.engine.EngineListener;
import io.servesim.engine.EngineRank;
import io.servesim.engine.KvcrRegistry;
import io.servesim.engine.OffloadCounters;
import io.servesim.engine.SchedulerCounters;
import io.servesim.engine.Sequence;
import io.servesim.engine.StepObserver;
import io.servesim.engine.Worker;
import io.servesim.kv.HostPool;
import io.servesim.metrics.LatencyDistribution;
import io.servesim.metrics.RequestStream;
import io.servesim.metrics.TimeSeries;
import io.servesim.sim.EventQueue;
import io.servesim.sim.RandomStreams;
import io.servesim.timing.Deployment;
import io.servesim.workload.Workload;
import io.servesim.workload.trace.Workloads;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One simulation, start to end: assembles the {@link Cluster}, connects the workload to the {@link Dispatcher},
 * the engines to the {@link RunRecorder} and {@link LoadTracker}, schedules {@link FleetEvents} and the
 * {@link TelemetrySampler}, runs the event queue and collects the {@link RunResult}. A run is a pure function of its
 * {@link SimConfig}: single-threaded, no wall clock, no shared state.
 */
public final class Simulation {
    private final SimConfig config;
    private final EventQueue queue = new EventQueue(1024);
    private final SchedulerCounters schedulerCounters;
    private final OffloadCounters offloadCounters = new OffloadCounters();
    private final TimeSeries timeSeries = new TimeSeries();
    private final Cluster cluster;
    private final RunRecorder recorder;
    private final LoadTracker load;
    private final Dispatcher dispatcher;
    private final FleetEvents fleet;
    private final TelemetrySampler telemetry;
    private final Workload workload;
    private ProgressListener progress;
    private long progressEvery;
    private boolean started;
    private boolean tokenTails = true;
    private boolean streaming;

    /**
     * Heap one rank takes before it serves anything (scheduler, queues, its KV pool's first arrays, engine and
     * router slots): about 8 KiB, measured as the growth of a replay's footprint from 50,000 to 200,000 workers.
     */
    static final long BYTES_PER_RANK = 8 << 10;

    /**
     * Refuses a cluster whose empty ranks alone would not fit in this JVM's heap, with the estimate, before building
     * it (16,777,216 workers used to end in an OutOfMemoryError's stack trace).
     */
    static void checkClusterFits(SimConfig config, long maxHeapBytes) {
        long ranks = config.cluster().totalRanks();
        long need = ranks * BYTES_PER_RANK;
        if (need > maxHeapBytes * 0.8) {
            throw new io.servesim.config.ConfigException(
                    "cluster.workers",
                    String.format(
                            java.util.Locale.ROOT,
                            "%d workers x %d ranks need about %.1f GiB of heap before any request (about %d KiB"
                                    + " per rank); this JVM has %.1f GiB (use fewer workers, or a larger -Xmx)",
                            config.cluster().workers(),
                            config.cluster().attentionDp(),
                            need / (double) (1L << 30),
                            BYTES_PER_RANK >> 10,
                            maxHeapBytes / (double) (1L << 30)));
        }
    }

    /**
     * What the config resolves to: one deployment, or one per pool of {@code cluster.pools} (a pool's errors name its
     * keys, e.g. {@code cluster.pools[1].timing.gpu}).
     */
    public static java.util.List<Deployment> deployments(SimConfig config) {
        java.util.List<io.servesim.config.PoolConfig> pools = config.cluster().pools();
        if (pools.isEmpty()) {
            return java.util.List.of(Deployment.resolve(config));
        }
        java.util.List<Deployment> out = new java.util.ArrayList<>(pools.size());
        for (int i = 0; i < pools.size(); i++) {
            try {
                out.add(Deployment.resolve(config.forPool(i)));
            } catch (io.servesim.config.ConfigException e) {
                throw e.under("cluster.pools[" + i + "]");
            }
            // one model for the fleet (the routers hash prompts once for all workers): the same preset, whether named
            // by preset, by a Hugging Face id or by a quantized release of it, or the same config.json path
            String model = modelName(out.get(i));
            if (!java.util.Objects.equals(model, modelName(out.get(0)))) {
                throw new io.servesim.config.ConfigException(
                        "cluster.pools[" + i + "].timing.model",
                        "is " + pools.get(i).timing().model() + " but pool '"
                                + pools.get(0).name() + "' serves "
                                + pools.get(0).timing().model() + "; every pool serves the same model");
            }
        }
        return out;
    }

    private static String modelName(Deployment d) {
        return d.model() == null ? null : d.model().name();
    }

    /** Builds a simulation (validating names against the registries) without running it. */
    public Simulation(SimConfig config) {
        checkClusterFits(config, Runtime.getRuntime().maxMemory());
        this.config = config;
        RandomStreams streams = new RandomStreams(config.workload().seed());
        long exact = config.output().exactPercentileSamples();
        this.schedulerCounters = new SchedulerCounters(exact);
        this.recorder = new RunRecorder(config.cluster(), exact);
        this.cluster = new Cluster(
                config, deployments(config), queue, streams, new Engines(), schedulerCounters, offloadCounters);
        if (config.cluster().events().stream()
                .noneMatch(e -> e.action() == io.servesim.config.ClusterEventConfig.Action.FAIL)) {
            // every request is routed once, on arrival: a KV-event router never looks up a hash only one request
            // has, so private blocks need not be published to it (VllmScheduler.privateBlocksWithEvents)
            for (int g = 0; g < cluster.numRanks(); g++) {
                cluster.rank(g).scheduler().privateBlocksWithEvents();
            }
        }
        this.load = new LoadTracker(cluster);
        this.dispatcher = new Dispatcher(
                cluster,
                recorder,
                queue,
                config.workload().clientTimeoutNanos(),
                config.cluster().events().stream()
                        .anyMatch(e -> e.action() == io.servesim.config.ClusterEventConfig.Action.FAIL));
        this.fleet = new FleetEvents(cluster, load, dispatcher);
        this.telemetry = new TelemetrySampler(
                queue,
                Math.round(config.output().timeseriesTickS() * 1e9),
                config.output().timeseriesPerWorker(),
                timeSeries,
                cluster,
                load,
                schedulerCounters,
                recorder,
                fleet,
                dispatcher::deadlineEvents);
        this.workload =
                Workloads.create(config.workload(), streams, config.cluster().minAttentionDp(), config.baseDir());
        dispatcher.onLost(workload::onRequestLost);
        dispatcher.onTimedOut(r -> workload.onRequestDone(r, 0, true));
    }

    /** What the engines report: finished requests go to the recorder, then the workload; load changes to tracking. */
    private final class Engines implements EngineListener {
        @Override
        public void onRequestFinished(EngineRank rank, Sequence s, boolean rejected) {
            if (s.clientGone()) {
                // its client gave up before this finish: recorded as timed out then (Dispatcher); a prefill that
                // finished holds its blocks for a read that never comes
                if (s.prefillOnly() && !rejected) {
                    dispatcher.prefillOrphaned(rank, s);
                }
                return;
            }
            if (s.prefillOnly() && !rejected) {
                dispatcher.handoff(rank, s); // a P/D prefill ends: the request goes on to its decode worker
                return;
            }
            recorder.finished(rank, s, rejected, queue.nowNanos());
            workload.onRequestDone(s.request(), s.numOutputTokens(), rejected);
        }

        @Override
        public void onLoadChanged(EngineRank rank) {
            load.changed(rank);
        }
    }

    /** Runs a config to completion. */
    public static RunResult run(SimConfig config) {
        return new Simulation(config).run();
    }

    /** Installs a step observer on every rank (tests). */
    public Simulation observeSteps(StepObserver observer) {
        for (int g = 0; g < cluster.numRanks(); g++) {
            cluster.rank(g).observer(observer);
        }
        return this;
    }

    /**
     * Runs every engine step through the event queue, never ahead of it (see {@link EventQueue}); results are the
     * same either way, which tests check by comparing the two.
     */
    public Simulation withoutRunAhead() {
        queue.forbidRunAhead();
        return this;
    }

    /**
     * Indexes every cached KV block, also those of requests no other request can share (see
     * {@code BlockTable.markPrivate}); results are the same either way, which tests check by comparing the two.
     */
    public Simulation indexingEveryBlock() {
        for (int g = 0; g < cluster.numRanks(); g++) {
            cluster.rank(g).scheduler().indexEveryBlock();
        }
        return this;
    }

    /**
     * Schedules every engine step through the engine's full path, never as a decode run (see {@code VllmScheduler});
     * results are the same either way, which tests check by comparing the two.
     */
    public Simulation withoutDecodeRuns() {
        for (int g = 0; g < cluster.numRanks(); g++) {
            cluster.rank(g).scheduler().noDecodeRuns();
        }
        return this;
    }

    /**
     * Keeps every prompt token the workload made, instead of letting a session turn keep only its tail when the run
     * allows it ({@code Workload.keepTokensAfterHashing}); results are the same either way, which tests check by
     * comparing the two.
     */
    public Simulation withoutTokenTails() {
        if (started) {
            throw new IllegalStateException("the run has started");
        }
        tokenTails = false;
        return this;
    }

    /** The block size after which the workload may drop prompt tokens in this run, or 0 (never). */
    public int tokenTailBlockSize() {
        return tokenTails ? cluster.tokenTailBlockSize() : 0;
    }

    /** Engine steps scheduled as decode runs so far, over all ranks (see {@link #withoutDecodeRuns}). */
    public long decodeRunSteps() {
        long n = 0;
        for (int g = 0; g < cluster.numRanks(); g++) {
            n += cluster.rank(g).scheduler().decodeRunSteps();
        }
        return n;
    }

    /** Of {@link #decodeRunSteps}, those a driver advanced in one loop, without events or records (async loop). */
    public long advancedRunSteps() {
        long n = 0;
        for (int g = 0; g < cluster.numRanks(); g++) {
            n += cluster.rank(g).scheduler().advancedRunSteps();
        }
        return n;
    }

    /** Engine events that ran ahead of the queue so far (0 when run-ahead is off). */
    public long ranAhead() {
        return queue.ranAhead();
    }

    /**
     * Why the run's KV transfers do not add up (each service's {@code accountingProblem}), plus transfers still in
     * flight when {@code atEnd} and the run was not cut by a time limit; empty when they do.
     */
    public List<String> transferProblems(boolean atEnd) {
        List<String> out = new ArrayList<>();
        for (io.servesim.transfer.TransferService t : cluster.transferServices()) {
            String p = t.accountingProblem();
            if (p != null) {
                out.add(p);
            }
            if (atEnd && config.limits().timeLimitS() == null && t.inFlightJobs() > 0) {
                out.add(t.inFlightJobs() + " transfers still in flight at the end");
            }
        }
        return out;
    }

    /** The config this simulation runs. */
    public SimConfig config() {
        return config;
    }

    /** The rank with cluster-wide index {@code globalIndex}. */
    public EngineRank rank(int globalIndex) {
        return cluster.rank(globalIndex);
    }

    /**
     * Streams per-request rows to {@code file} (requests.csv.zst) as requests end instead of keeping them; required
     * when {@code output.stream_requests} is on. Call before running.
     */
    public Simulation streamRequestsTo(Path file) {
        if (started) {
            throw new IllegalStateException("streamRequestsTo must be called before the run starts");
        }
        recorder.streamTo(new RequestStream(
                file, config.cluster().disaggregated(), config.cluster().poolNamesByWorker()));
        streaming = true;
        return this;
    }

    /** The KVCR registry, or null when KVCR is off. */
    public KvcrRegistry kvcr() {
        return cluster.kvcr();
    }

    /** The run's engine totals so far, gathered from their owners (end-of-run totals are scans: not a hot path). */
    public RunCounters counters() {
        long g2Evictions = 0;
        for (HostPool p : cluster.hostPools()) {
            g2Evictions += p.evictions();
        }
        long wakeups = 0;
        long evictions = 0;
        for (int g = 0; g < cluster.numRanks(); g++) {
            EngineRank rank = cluster.rank(g);
            wakeups += rank.registryWakeups();
            evictions += rank.scheduler().pool().evictions();
        }
        SchedulerCounters s = schedulerCounters;
        KvcrRegistry kvcr = cluster.kvcr();
        KvcrRegistry.Totals k = kvcr == null ? NO_KVCR : kvcr.totals();
        return new RunCounters(
                s.promptTokensComputed(),
                s.generatedTokens(),
                s.steps(),
                s.scheduledTokens(),
                s.preemptions(),
                s.admissions(),
                s.admissionTokens(),
                s.admissionHitTokens(),
                s.firstAdmissionTokens(),
                s.firstAdmissionHitTokens(),
                s.firstAdmissionG2Tokens(),
                s.firstAdmissionRemoteTokens(),
                evictions,
                offloadCounters.storeBytes(),
                offloadCounters.loadBytes(),
                offloadCounters.loads(),
                g2Evictions,
                k.staged(),
                k.landed(),
                k.completed(),
                k.detached(),
                k.rejectedDraining(),
                k.rejectedFailed(),
                k.rejectedCost(),
                k.aborted(),
                k.sourceOnly(),
                k.sourceG2Blocks(),
                k.bytes(),
                kvcr == null ? 0 : kvcr.movingPeak(),
                wakeups,
                fleet.workersDrained(),
                fleet.workersFailed(),
                fleet.restarts(),
                s.itlNanos(),
                k.pullNanos(),
                k.parkedNanos());
    }

    private static final KvcrRegistry.Totals NO_KVCR = new KvcrRegistry.Totals(
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, new LatencyDistribution(), new LatencyDistribution());

    /** Schedules the fleet events, the first telemetry tick and the workload's first arrivals (once, in that order). */
    private void start() {
        if (started) {
            return;
        }
        if (config.output().streamRequests() && !streaming) {
            throw new IllegalStateException("output.stream_requests is on: call streamRequestsTo(file) before running");
        }
        started = true;
        if (tokenTails && cluster.tokenTailBlockSize() > 0) {
            // nothing reads a prompt's tokens before its last full block once it is hashed at dispatch
            workload.keepTokensAfterHashing(cluster.tokenTailBlockSize());
        }
        fleet.schedule(queue, config.cluster().events());
        telemetry.start();
        workload.start(queue, dispatcher);
    }

    /**
     * Runs every event at or before {@code nanos} of virtual time (starting the run if needed), so tests can look at
     * the state in between; {@link #run()} continues from there.
     */
    public Simulation runUntil(long nanos) {
        start();
        queue.fence(nanos); // nothing runs ahead past the instant a caller stops at
        long n = 0;
        while (queue.peekTimeNanos() <= nanos && queue.runNext()) {
            if (progress != null && ++n % progressEvery == 0) {
                progress.onProgress(queue.nowNanos(), recorder.ended(), workload.requestsCreated());
            }
        }
        if (progress != null) {
            progress.onProgress(queue.nowNanos(), recorder.ended(), workload.requestsCreated());
        }
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
        if (queue.size() > dispatcher.deadlineEvents()) {
            endIncomplete(limit); // the time limit cut the run short (a client deadline alone stands for no work)
        }
        return collect();
    }

    /** The run stopped at its time limit: every request still on a live rank is recorded as incomplete. */
    private void endIncomplete(long limitNanos) {
        recorder.timeLimitReached(limitNanos);
        ObjectArrayList<Sequence> left = new ObjectArrayList<>();
        for (int g = 0; g < cluster.numRanks(); g++) {
            EngineRank rank = cluster.rank(g);
            if (rank.failed()) {
                continue;
            }
            left.clear();
            rank.scheduler().inFlight(left);
            for (Sequence s : left) {
                if (!s.clientGone()) { // (one its client gave up on was recorded then; its abort is pending)
                    recorder.incomplete(rank, s);
                }
            }
        }
    }

    /** Gathers the per-worker and per-rank statistics and builds the result. */
    private RunResult collect() {
        long[] busy = new long[cluster.numWorkers()];
        List<RankStats> rankStats = new ArrayList<>(cluster.numRanks());
        for (int w = 0; w < cluster.numWorkers(); w++) {
            Worker wk = cluster.worker(w);
            for (int r = 0; r < wk.numRanks(); r++) {
                EngineRank rank = wk.rank(r);
                busy[w] += rank.busyNanos();
                rankStats.add(RankStats.of(rank));
            }
        }
        java.util.List<PoolResult> pools = new java.util.ArrayList<>();
        int first = 0;
        for (int p = 0; p < config.cluster().pools().size(); p++) {
            io.servesim.config.PoolConfig pc = config.cluster().pools().get(p);
            long routed = 0;
            for (int w = first; w < first + pc.workers(); w++) {
                routed += dispatcher.workerRequests()[w];
            }
            pools.add(new PoolResult(
                    pc.name(), first, pc.workers(), cluster.poolDeployments().get(p), recorder.poolMetrics(p), routed));
            first += pc.workers();
        }
        return new RunResult(
                config,
                cluster.deployment(),
                workload.requestsCreated(),
                recorder.log(),
                timeSeries,
                recorder.metrics(),
                recorder.closeStream(),
                counters(),
                recorder.lastFinishNanos(),
                busy,
                dispatcher.workerRequests(),
                rankStats,
                workload.badLinesSkipped(),
                workload.badLineSamples(),
                pools,
                cluster.pd() == null
                        ? null
                        : new PdResult(
                                cluster.pd().totals(),
                                recorder.pdPrefillNanos(),
                                recorder.pdDecodeFirstTokenNanos(),
                                config.cluster().disagg().transfer().nicGbytesPerS(),
                                config.cluster().pools().get(0).workers()));
    }
}
