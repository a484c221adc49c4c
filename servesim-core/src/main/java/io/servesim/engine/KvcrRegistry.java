package io.servesim.engine;

import io.servesim.config.KvcrConfig;
import io.servesim.kv.BlockPool;
import io.servesim.kv.HostPool;
import io.servesim.metrics.LatencyDistribution;
import io.servesim.sim.SimClock;
import io.servesim.timing.StepBatch;
import io.servesim.timing.TimingModel;
import io.servesim.transfer.TransferService;
import it.unimi.dsi.fastutil.ints.Int2ObjectLinkedOpenHashMap;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * Cross-worker KV pulls (KVCR: router-hinted, destination-initiated, peer-to-peer; aisimulate-replay.md §5). When a
 * request reaches admission on a destination rank and its hint names another worker's rank that holds more of its
 * prefix (in its GPU cache, then its private G2 pool) than the destination's local G1 + G2 hit, the destination
 * allocates the blocks and stages a pull for the extra blocks: the source <em>holds</em> them (an extra reference on
 * G1 blocks, a pin on G2 entries, so they cannot be evicted) until the bytes land; the request waits off the running
 * list, then is scheduled from the head of waiting, where the pull is consumed. Pulls move between the workers' NIC
 * endpoints on their own bandwidth-shared {@link TransferService}.
 *
 * <p>Lifecycle of a pull: <b>parked</b> (staged, waiting for its first byte) → <b>moving</b> → <b>landed</b> (bytes
 * at the destination; the request waits at the head of waiting: landed-but-unconsumed) → <b>completed</b> (consumed
 * by the request's admission). A landed pull whose request gives its blocks back before admission is
 * <b>detached</b> (its blocks stay cached). A pull whose destination worker fails becomes <b>source-only</b>: the
 * source keeps its hold until the bytes in flight stop, then releases it. A pull whose source worker fails is
 * <b>aborted</b>: the destination frees the blocks meant for it and recomputes those tokens.
 *
 * <p>No idle polling: the registry only acts on events of its own pulls and wakes exactly the ranks they involve
 * (counted per rank by {@link EngineRank#registryWakeups()}).
 *
 * <p>Why one class of this size: a pull's whole lifecycle (staging with source holds, landing, abort, source-only) and
 * its counters must change together; the per-pull state is a private inner class so no other class touches it.
 */
public final class KvcrRegistry {
    /** Where an active (not yet landed or aborted) pull stands. */
    public enum PullState {
        /** Staged, waiting for its first byte. */
        PARKED,
        /** Bytes flowing at the shared rate. */
        MOVING,
        /** The destination failed; the source holds its blocks until the bytes stop. */
        SOURCE_ONLY
    }

    private final KvcrConfig config;
    private final TransferService transfers;
    private final CopyJobs jobs;
    private final EngineRank[] ranks;
    private final int[] nic;
    private final int ranksPerWorker;
    private final long blockBytes;
    private final long firstByteNanos;
    private final SimClock clock;
    private long staged;
    private long landed;
    private long completed;
    private long detached;
    private long aborted;
    private long sourceOnly;
    private long rejectedDraining;
    private long rejectedFailed;
    private long rejectedCost;
    private long sourceG2Blocks;
    private long bytes;
    private final LatencyDistribution pullNanos = new LatencyDistribution();
    private final LatencyDistribution parkedNanos = new LatencyDistribution();
    private final StepBatch estimate = new StepBatch();
    private final Int2ObjectLinkedOpenHashMap<Pull> active = new Int2ObjectLinkedOpenHashMap<>();
    private final int[] sourceHolds;
    private boolean[] draining;
    private boolean[] failed;

    /** One staged pull; completed by the transfer service's listener. */
    private final class Pull implements CopyJobs.Job {
        final int id;
        final EngineRank destination;
        final EngineRank source;
        final Sequence sequence;
        final int from;
        final int[] heldBlocks;
        final long[] pinnedHashes;
        final long stagedNanos;
        boolean sourceOnly;

        Pull(int id, EngineRank destination, EngineRank source, Sequence s, int from, int[] held, long[] pinned) {
            this.id = id;
            this.destination = destination;
            this.source = source;
            this.sequence = s;
            this.from = from;
            this.heldBlocks = held;
            this.pinnedHashes = pinned;
            this.stagedNanos = clock.nowNanos();
        }

        @Override
        public void done() {
            active.remove(id);
            long startedNanos = transfers.startNanos(id);
            transfers.release(id);
            releaseSource();
            if (sourceOnly) {
                return; // nobody is left to receive the bytes
            }
            long pullTime = clock.nowNanos() - stagedNanos;
            sequence.pullLanded(pullTime);
            pullNanos.record(pullTime);
            parkedNanos.record(startedNanos - stagedNanos);
            landed++;
            destination.scheduler().copyLanded(sequence);
            destination.wakeByRegistry();
        }

        private void releaseSource() {
            if (source.failed()) {
                return; // its pools are gone
            }
            BlockPool pool = source.scheduler().pool();
            for (int b : heldBlocks) {
                pool.release(b);
            }
            HostPool host = privatePool(source);
            for (long h : pinnedHashes) {
                host.unpin(h);
            }
            sourceHolds[source.globalIndex()] -= heldBlocks.length;
            source.wakeByRegistry(); // released holds may unblock the source's own waiting requests
        }
    }

    /**
     * Creates the registry.
     *
     * @param ranks all ranks by global index
     * @param ranksPerWorker attention-DP ranks per worker
     * @param blockBytes KV bytes of one block
     */
    public KvcrRegistry(
            KvcrConfig config,
            TransferService transfers,
            CopyJobs jobs,
            EngineRank[] ranks,
            int ranksPerWorker,
            long blockBytes,
            SimClock clock,
            long exactSamples) {
        this.config = config;
        this.transfers = transfers;
        this.jobs = jobs;
        this.ranks = ranks.clone();
        this.ranksPerWorker = ranksPerWorker;
        this.blockBytes = blockBytes;
        this.firstByteNanos = Math.round(config.firstByteMs() * 1e6);
        this.clock = clock;
        pullNanos.exactLimit(exactSamples);
        parkedNanos.exactLimit(exactSamples);
        int workers = ranks.length / ranksPerWorker;
        this.nic = new int[workers];
        for (int w = 0; w < workers; w++) {
            nic[w] = transfers.addEndpoint(config.bandwidthGbytesPerS(), config.bandwidthGbytesPerS());
        }
        this.sourceHolds = new int[ranks.length];
        for (EngineRank r : this.ranks) {
            r.connector().kvcr(this);
        }
    }

    /** A worker started draining: it is no longer a pull source. */
    public void onWorkerDraining(int worker) {
        if (draining == null) {
            draining = new boolean[nic.length];
        }
        draining[worker] = true;
    }

    /**
     * A worker failed (call before its ranks abandon their requests): pulls from it are cancelled and their
     * destinations recompute; pulls to it become source-only. Visits the active pulls once, in staging order.
     */
    public void onWorkerFailed(int worker) {
        if (failed == null) {
            failed = new boolean[nic.length];
        }
        failed[worker] = true;
        ObjectArrayList<Pull> affected = new ObjectArrayList<>();
        for (Pull p : active.values()) {
            if (p.source.workerId() == worker || p.destination.workerId() == worker) {
                affected.add(p);
            }
        }
        for (Pull p : affected) {
            if (p.source.workerId() == worker) {
                transfers.cancel(p.id);
                transfers.release(p.id);
                jobs.remove(p.id);
                active.remove(p.id);
                aborted++;
                if (p.destination.workerId() != worker && !p.sourceOnly) {
                    p.destination.scheduler().pullAborted(p.sequence, p.from);
                    p.destination.wakeByRegistry();
                }
            } else if (!p.sourceOnly) {
                p.sourceOnly = true;
                sourceOnly++;
            }
        }
    }

    /** Pulls staged and not yet landed or aborted. */
    public int activePulls() {
        return active.size();
    }

    /** Active pulls in {@code state} (a scan of the active pulls: for tests and reports, not the hot path). */
    public int count(PullState state) {
        int n = 0;
        for (Pull p : active.values()) {
            PullState st = p.sourceOnly
                    ? PullState.SOURCE_ONLY
                    : transfers.state(p.id) == TransferService.State.MOVING ? PullState.MOVING : PullState.PARKED;
            if (st == state) {
                n++;
            }
        }
        return n;
    }

    /** Pulls whose bytes landed but whose request has not been admitted (or released its blocks) yet. */
    public long landedUnconsumed() {
        return landed - completed - detached;
    }

    /** The most pulls that were moving at once. */
    public int movingPeak() {
        return transfers.peakMovingJobs();
    }

    /** Whether a hinted source may serve a pull, or why not. */
    enum PullRejection {
        /** The hinted source may serve pulls. */
        NONE,
        /** The hinted source is draining (it serves no new pulls). */
        DRAINING_SOURCE,
        /** The hinted source failed (its cache is gone). */
        FAILED_SOURCE
    }

    /** Whether {@code s} may pull from its hinted source. */
    PullRejection rejection(Sequence s) {
        int w = s.routing().hintWorker();
        if (w < 0) {
            return PullRejection.NONE;
        }
        if (failed != null && failed[w]) {
            return PullRejection.FAILED_SOURCE;
        }
        if (draining != null && draining[w]) {
            return PullRejection.DRAINING_SOURCE;
        }
        return PullRejection.NONE;
    }

    /** G1 blocks of {@code rank} held as the source of pulls in flight. */
    int sourceHolds(EngineRank rank) {
        return sourceHolds[rank.globalIndex()];
    }

    /**
     * Leading prompt blocks (at most {@code maxHit}) the hinted source rank of {@code s} holds: its GPU cache run,
     * continued in its private G2 pool (a shared pool is the destination's own G2 already).
     */
    int sourceBlocks(Sequence s, int maxHit) {
        EngineRank source = source(s);
        if (source == null) {
            return 0;
        }
        int n = g1Run(source, s, maxHit);
        HostPool host = privatePool(source);
        if (host != null) {
            n += host.peekReadyRun(s.table().hashesView(), n, maxHit);
        }
        return n;
    }

    private static int g1Run(EngineRank source, Sequence s, int maxHit) {
        BlockPool pool = source.scheduler().pool();
        long[] hashes = s.table().hashesView();
        int n = 0;
        while (n < maxHit && pool.lookup(hashes[n]) >= 0) {
            n++;
        }
        return n;
    }

    private static HostPool privatePool(EngineRank rank) {
        HostOffload o = rank.hostOffload();
        return o == null ? null : o.privatePool();
    }

    private EngineRank source(Sequence s) {
        int w = s.routing().hintWorker();
        return w < 0 ? null : ranks[w * ranksPerWorker + s.routing().hintRank()];
    }

    /**
     * Whether pulling {@code blocks} beats recomputing them: always with {@code decision: always}; with
     * {@code cost}, when first byte + bytes at the NIC rate is shorter than the timing model's prefill of those
     * tokens on top of {@code contextTokens} on the destination ({@code destinationTiming}: pools of a heterogeneous
     * fleet price steps differently). A refusal is counted as {@code rejected_cost}.
     */
    boolean worthPulling(int blocks, int blockSize, int contextTokens, TimingModel destinationTiming) {
        if (config.decision() == KvcrConfig.Decision.ALWAYS) {
            return true;
        }
        double bw = config.bandwidthGbytesPerS();
        long pull = firstByteNanos + (bw > 0 ? (long) Math.ceil(blocks * blockBytes / bw) : 0);
        estimate.reset(0);
        estimate.add(blocks * blockSize, contextTokens, false);
        if (pull < destinationTiming.stepNanos(estimate) + destinationTiming.cpuNanos(estimate)) { // the (sync) step
            return true;
        }
        rejectedCost++;
        return false;
    }

    /** Stages a pull of blocks [{@code from}, {@code from + count}) of {@code s} into rank {@code destination}. */
    void stage(EngineRank destination, Sequence s, int from, int count) {
        EngineRank source = source(s);
        BlockPool pool = source.scheduler().pool();
        long[] hashes = s.table().hashesView();
        int g1 = Math.max(0, Math.min(g1Run(source, s, from + count) - from, count));
        int[] held = new int[g1];
        for (int i = 0; i < g1; i++) {
            held[i] = pool.lookup(hashes[from + i]);
            pool.touch(held[i]); // the source holds them until the bytes land
        }
        long[] pinned = new long[count - g1];
        if (pinned.length > 0) {
            HostPool host = privatePool(source);
            host.readyRun(hashes, from + g1, from + count); // a real read: most recent in the source's G2 LRU
            for (int i = 0; i < pinned.length; i++) {
                pinned[i] = hashes[from + g1 + i];
                host.pin(pinned[i]);
            }
            sourceG2Blocks += pinned.length;
        }
        sourceHolds[source.globalIndex()] += g1; // G1 references (G2 pins do not hold GPU blocks)
        long pullBytes = blockBytes * count;
        staged++;
        bytes += pullBytes;
        s.pullStaged(source.workerId());
        int id = transfers.submit(nic[source.workerId()], nic[destination.workerId()], pullBytes, firstByteNanos);
        Pull p = new Pull(id, destination, source, s, from, held, pinned);
        active.put(id, p);
        jobs.add(id, p);
    }

    /** A hinted request recomputes because its source worker failed. */
    void rejectedFailedSource() {
        rejectedFailed++;
    }

    /** A hinted request recomputes because its source worker drains. */
    void rejectedDrainingSource() {
        rejectedDraining++;
    }

    /** A landed pull was consumed by its request's admission. */
    void pullConsumed() {
        completed++;
    }

    /** A landed pull's request gave its blocks back before admission. */
    void pullDetached() {
        detached++;
    }

    /** Bytes pulled so far (staged pulls). */
    public long bytesPulled() {
        return bytes;
    }

    /** The registry's totals so far. */
    public Totals totals() {
        return new Totals(
                staged,
                landed,
                completed,
                detached,
                aborted,
                sourceOnly,
                rejectedDraining,
                rejectedFailed,
                rejectedCost,
                sourceG2Blocks,
                bytes,
                pullNanos,
                parkedNanos);
    }

    /**
     * KVCR totals.
     *
     * @param staged pulls staged
     * @param landed pulls whose bytes landed
     * @param completed landed pulls consumed by their request's admission
     * @param detached landed pulls whose request released the blocks before consuming them
     * @param aborted pulls cancelled because their source failed
     * @param sourceOnly pulls whose destination failed while their bytes were in flight
     * @param rejectedDraining pulls not staged: the source was draining
     * @param rejectedFailed pulls not staged: the source had failed
     * @param rejectedCost pulls not staged: recomputing was cheaper
     * @param sourceG2Blocks pulled blocks served from the source's G2 pool
     * @param bytes bytes pulled
     * @param pullNanos staging-to-landing time of every landed pull
     * @param parkedNanos staging-to-first-byte time of every landed pull
     */
    public record Totals(
            long staged,
            long landed,
            long completed,
            long detached,
            long aborted,
            long sourceOnly,
            long rejectedDraining,
            long rejectedFailed,
            long rejectedCost,
            long sourceG2Blocks,
            long bytes,
            LatencyDistribution pullNanos,
            LatencyDistribution parkedNanos) {}
}
