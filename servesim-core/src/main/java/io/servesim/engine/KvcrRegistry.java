package io.servesim.engine;

import io.servesim.config.KvcrConfig;
import io.servesim.kv.BlockPool;
import io.servesim.metrics.EngineCounters;
import io.servesim.sim.SimClock;
import io.servesim.timing.StepBatch;
import io.servesim.timing.TimingModel;
import io.servesim.transfer.TransferService;

/**
 * Cross-worker KV pulls (KVCR: router-hinted, destination-initiated, peer-to-peer; aisimulate-replay.md §5). When a
 * request reaches admission on a destination rank and its hint names another worker's rank that holds more of its
 * prefix than the destination's local G1 + G2 hit, the destination allocates the blocks and stages a pull for the
 * extra blocks: the source <em>holds</em> them (an extra reference, so they cannot be evicted) until the bytes land;
 * the request waits off the running list, then is scheduled from the head of waiting, where the pull is consumed.
 * Pulls move between the workers' NIC endpoints on their own bandwidth-shared {@link TransferService}.
 */
public final class KvcrRegistry {
    private final KvcrConfig config;
    private final TransferService transfers;
    private final CopyJobs jobs;
    private final EngineRank[] ranks;
    private final int[] nic;
    private final int ranksPerWorker;
    private final long blockBytes;
    private final long firstByteNanos;
    private final TimingModel timing;
    private final SimClock clock;
    private final EngineCounters counters;
    private final StepBatch estimate = new StepBatch();
    private boolean[] draining;

    /** A worker started draining: it is no longer a pull source. */
    public void onWorkerDraining(int worker) {
        if (draining == null) {
            draining = new boolean[nic.length];
        }
        draining[worker] = true;
    }

    /** Whether the hinted source of {@code s} is on a draining worker (staging from it is rejected). */
    boolean sourceDraining(Sequence s) {
        int w = s.request.hintWorker();
        return draining != null && w >= 0 && draining[w];
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
            TimingModel timing,
            SimClock clock,
            EngineCounters counters) {
        this.config = config;
        this.transfers = transfers;
        this.jobs = jobs;
        this.ranks = ranks.clone();
        this.ranksPerWorker = ranksPerWorker;
        this.blockBytes = blockBytes;
        this.firstByteNanos = Math.round(config.firstByteMs() * 1e6);
        this.timing = timing;
        this.clock = clock;
        this.counters = counters;
        int workers = ranks.length / ranksPerWorker;
        this.nic = new int[workers];
        for (int w = 0; w < workers; w++) {
            nic[w] = transfers.addEndpoint(config.bandwidthGbps(), config.bandwidthGbps());
        }
        for (EngineRank r : this.ranks) {
            r.scheduler().kvcr(this);
        }
    }

    /** Leading prompt blocks (at most {@code maxHit}) the hinted source rank of {@code s} holds in its GPU cache. */
    int sourceBlocks(Sequence s, int maxHit) {
        int source = source(s);
        if (source < 0) {
            return 0;
        }
        BlockPool pool = ranks[source].scheduler().pool();
        long[] hashes = s.table.hashesView();
        int n = 0;
        while (n < maxHit && pool.lookup(hashes[n]) >= 0) {
            n++;
        }
        return n;
    }

    private int source(Sequence s) {
        int w = s.request.hintWorker();
        return w < 0 ? -1 : w * ranksPerWorker + s.request.hintRank();
    }

    /**
     * Whether pulling {@code blocks} beats recomputing them: always with {@code decision: always}; with
     * {@code cost}, when first byte + bytes at the NIC rate is shorter than the timing model's prefill of those
     * tokens on top of {@code contextTokens}.
     */
    boolean worthPulling(int blocks, int blockSize, int contextTokens) {
        if (config.decision().equals("always")) {
            return true;
        }
        double bw = config.bandwidthGbps();
        long pull = firstByteNanos + (bw > 0 ? (long) Math.ceil(blocks * blockBytes / bw) : 0);
        estimate.reset(0);
        estimate.add(blocks * blockSize, contextTokens, false);
        return pull < timing.stepNanos(estimate);
    }

    /** Stages a pull of blocks [{@code from}, {@code from + count}) of {@code s} into rank {@code destination}. */
    void stage(EngineRank destination, Sequence s, int from, int count) {
        int source = source(s);
        BlockPool pool = ranks[source].scheduler().pool();
        long[] hashes = s.table.hashesView();
        int[] held = new int[count];
        VllmScheduler sourceScheduler = ranks[source].scheduler();
        for (int i = 0; i < count; i++) {
            held[i] = pool.lookup(hashes[from + i]);
            pool.touch(held[i]); // the source holds them until the bytes land
        }
        sourceScheduler.heldForPulls += count;
        long bytes = blockBytes * count;
        long staged = clock.nowNanos();
        counters.kvcrStaged++;
        counters.kvcrBytes += bytes;
        s.pullSource = source / ranksPerWorker;
        int id = transfers.submit(nic[source / ranksPerWorker], nic[destination.workerId()], bytes, firstByteNanos, 0);
        jobs.jobs.put(id, () -> {
            for (int b : held) {
                pool.release(b);
            }
            sourceScheduler.heldForPulls -= count;
            ranks[source].wakeAfterLoad(); // released holds may unblock the source's own waiting requests
            s.pullNanos = clock.nowNanos() - staged;
            counters.kvcrPullNanos.record(s.pullNanos);
            counters.kvcrLanded++;
            destination.scheduler().copyLanded(s);
            destination.wakeAfterLoad();
        });
    }
}
