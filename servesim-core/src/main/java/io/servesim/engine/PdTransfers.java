package io.servesim.engine;

import io.servesim.config.DisaggConfig;
import io.servesim.metrics.LatencyDistribution;
import io.servesim.transfer.TransferService;
import it.unimi.dsi.fastutil.ints.Int2ObjectLinkedOpenHashMap;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * Prefill-to-decode KV transfers of a disaggregated cluster, in the shape of vLLM's NIXL connector
 * (vllm-semantics.md §3.5; {@code vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py}):
 *
 * <ul>
 *   <li><b>Delayed free.</b> A prefill runs with {@code max_tokens = 1}; when it finishes, its blocks are not freed
 *       ({@code request_finished} returns {@code delay_free}): the prefill rank holds them until the decode side has
 *       read them, then frees them (full blocks stay in its prefix cache).
 *   <li><b>Pull by the decode worker.</b> The decode-side request enters its worker's waiting queue; when the
 *       scheduler reaches it, {@code get_num_new_matched_tokens} offers the whole prompt less the local prefix hit,
 *       loaded asynchronously: the scheduler allocates the blocks (the partial last block too) and parks the request
 *       off the running list ({@code WAITING_FOR_REMOTE_KVS}, not counted against {@code max_num_seqs}); the
 *       transfer starts then. When the bytes land, the request is scheduled from the head of waiting with
 *       {@code num_computed = prompt − 1}: its first step computes one token and samples the first output token.
 *   <li><b>Shared links.</b> Transfers move between the workers' NIC endpoints on their own bandwidth-shared
 *       {@link TransferService}, so concurrent transfers on one NIC (or under the fabric cap) slow each other down.
 *       AISimulate's replay gives each transfer its own bandwidth (aisimulate-replay.md §2.1.2); servesim follows
 *       the hardware here.
 *   <li><b>Faults.</b> A prefill worker that fails loses its held blocks: a transfer from it is cancelled and the
 *       decode worker recomputes what did not arrive (vLLM's {@code recompute} policy for failed loads, §3.4); a
 *       decode request not yet staged recomputes the prompt. A decode worker that fails cancels its transfers (its
 *       requests start over through dispatch); the holds of its requests end when their NIXL lease expires.
 * </ul>
 *
 * <p>Bytes: {@code destination_missing} charges the prompt less the decode worker's prefix hit; {@code full_prompt}
 * the whole prompt (the decode worker still reuses its own hit blocks).
 */
public final class PdTransfers implements io.servesim.sim.EventHandler {
    private final DisaggConfig.KvTransferConfig config;
    private final TransferService transfers;
    private final CopyJobs jobs;
    private final int[] nic;
    private final long bytesPerToken;
    private final long firstByteNanos;
    private final io.servesim.sim.EventQueue clock;
    private final long leaseNanos;
    private long expired;
    private final long timeLimitNanos;
    private final Int2ObjectLinkedOpenHashMap<Handoff> held = new Int2ObjectLinkedOpenHashMap<>();
    private final LatencyDistribution transferNanos = new LatencyDistribution();
    private final LatencyDistribution waitNanos = new LatencyDistribution();
    private long handoffs;
    private long staged;
    private long landed;
    private long aborted;
    private long cancelled;
    private long reprefills;
    private long localPrefills;
    private long bytes;
    private long tokens;

    /**
     * Creates the transfer service's endpoints (one NIC per worker) and registers itself with every rank.
     *
     * @param ranks every rank of the cluster, by global index
     * @param workers workers in the cluster
     * @param bytesPerToken KV bytes one prompt token moves
     * @param clock the event queue (lease expiries are its events)
     * @param timeLimitNanos the run's time limit: no lease expiry is scheduled past it
     */
    public PdTransfers(
            DisaggConfig.KvTransferConfig config,
            TransferService transfers,
            CopyJobs jobs,
            EngineRank[] ranks,
            int workers,
            long bytesPerToken,
            io.servesim.sim.EventQueue clock,
            long exactSamples,
            long timeLimitNanos) {
        this.config = config;
        this.transfers = transfers;
        this.jobs = jobs;
        this.bytesPerToken = bytesPerToken;
        this.firstByteNanos = Math.round(config.firstByteMs() * 1e6);
        this.clock = clock;
        this.leaseNanos = Math.round(config.kvLeaseS() * 1e9);
        this.timeLimitNanos = timeLimitNanos;
        transferNanos.exactLimit(exactSamples);
        waitNanos.exactLimit(exactSamples);
        this.nic = new int[workers];
        for (int w = 0; w < workers; w++) {
            nic[w] = transfers.addEndpoint(config.nicGbytesPerS(), config.nicGbytesPerS());
        }
        for (EngineRank r : ranks) {
            r.connector().pd(this);
        }
    }

    /** KV bytes one prompt token moves. */
    public long bytesPerToken() {
        return bytesPerToken;
    }

    /** A request is prefilled on its decode worker (conditional disaggregation). */
    public void localPrefill() {
        localPrefills++;
    }

    /**
     * The prefill of {@code h} finished on {@code source} now: its blocks stay held until the decode side has read
     * them (or a fault releases them).
     */
    public void prefillDone(Handoff h, EngineRank source, Sequence prefill) {
        hold(h, source, prefill);
        handoffs++;
    }

    private void hold(Handoff h, EngineRank source, Sequence prefill) {
        h.prefill = prefill;
        h.source = source;
        h.held = true;
        h.prefillDoneNanos = clock.nowNanos();
        held.put(h.id(), h);
    }

    /**
     * The prefill of {@code h} finished on {@code source} after its client had given up ({@code
     * workload.client_timeout_s}): it finished length-capped, so its blocks are held for a read, but the proxy sends no
     * decode request, and the hold lasts until its lease expires (vLLM's NIXL connector frees at once only an aborted
     * or otherwise finished prefill).
     */
    public void prefillOrphaned(Handoff h, EngineRank source, Sequence prefill) {
        hold(h, source, prefill);
        expireLater(h);
    }

    /**
     * The client of {@code h}'s decode side gave up: a read not started yet never will be, so the prefill worker
     * holds the blocks until the lease the decode worker no longer renews expires; a read in flight still lands (vLLM
     * frees an aborted request's blocks once its receive finishes), and after it nothing is held.
     */
    public void decodeAborted(Handoff h) {
        if (h.held && h.transferId < 0 && !h.orphaned) {
            h.awaitingPull = false;
            expireLater(h);
        }
    }

    /**
     * The request of {@code h} will not reach a decode worker (none takes work): its prefill blocks are freed. Called
     * while the prefill rank applies the outputs of the step that finished it, so the rank is not woken (it looks
     * for more work itself when the step ends; a wake now would start a second step at the same instant).
     */
    public void abandon(Handoff h) {
        if (h.held) {
            h.held = false;
            held.remove(h.id());
            h.source.scheduler().releaseHandoff(h.prefill);
        }
    }

    /** The decode side of {@code h} was submitted to {@code destination}: it will pull when admitted. */
    public void decodeSubmitted(Handoff h, EngineRank destination, Sequence decode) {
        h.destination = destination;
        h.decode = decode;
        h.awaitingPull = !h.local();
    }

    /**
     * Blocks a decode-side request {@code s} pulls beyond its {@code localHitBlocks}: every block of its prompt (the
     * partial last one too) it does not hold; 0 when its prefill worker failed before the pull started (it then
     * recomputes the prompt, counted as a re-prefill).
     */
    int blocksToPull(Sequence s, int localHitBlocks, int promptBlocks) {
        Handoff h = s.handoff();
        if (h.sourceFailed) {
            h.awaitingPull = false;
            h.reprefilled = true;
            reprefills++;
            return 0;
        }
        return promptBlocks - localHitBlocks;
    }

    /**
     * Stages the pull of {@code s}'s prompt into blocks [{@code localHitBlocks}, +{@code blocks}) of
     * {@code destination} ({@code update_state_after_alloc}: each request transfers once).
     *
     * @return prompt tokens the pull brings
     */
    int stage(EngineRank destination, Sequence s, int localHitBlocks, int blockSize) {
        Handoff h = s.handoff();
        h.awaitingPull = false;
        int missing = s.promptLength() - localHitBlocks * blockSize;
        int moved = config.mode() == DisaggConfig.Mode.FULL_PROMPT ? s.promptLength() : missing;
        long b = moved * bytesPerToken;
        h.localHitBlocks = localHitBlocks;
        h.transferTokens = moved;
        h.bytes = b;
        h.transferStartNanos = clock.nowNanos();
        waitNanos.record(h.transferStartNanos - h.prefillDoneNanos);
        int id = transfers.submit(nic[h.source.workerId()], nic[destination.workerId()], b, firstByteNanos);
        h.transferId = id;
        jobs.add(id, () -> landed(h));
        staged++;
        bytes += b;
        tokens += moved;
        s.pullStaged(h.source.workerId());
        return missing;
    }

    private void landed(Handoff h) {
        transfers.release(h.transferId);
        h.transferId = -1;
        h.transferEndNanos = clock.nowNanos();
        long t = h.transferEndNanos - h.transferStartNanos;
        transferNanos.record(t);
        h.decode.pullLanded(t);
        landed++;
        releaseSource(h);
        h.destination.scheduler().copyLanded(h.decode);
        h.destination.wakeByRegistry();
    }

    /** The read is over (or cannot happen): the prefill rank frees the prompt's blocks. */
    private void releaseSource(Handoff h) {
        if (!h.held) {
            return;
        }
        h.held = false;
        held.remove(h.id());
        h.source.scheduler().releaseHandoff(h.prefill);
        h.source.wakeByRegistry(); // freed blocks may let its waiting requests in
    }

    /**
     * A worker failed (call before its ranks abandon their requests). Holds on it are gone: transfers from it are
     * cancelled and their decode requests recompute what did not arrive; its decode requests' transfers are
     * cancelled and their prefill holds released. Visits the held handoffs once, in order.
     */
    public void onWorkerFailed(int worker) {
        ObjectArrayList<Handoff> affected = new ObjectArrayList<>();
        for (Handoff h : held.values()) {
            if (h.source.workerId() == worker || (h.destination != null && h.destination.workerId() == worker)) {
                affected.add(h);
            }
        }
        for (Handoff h : affected) {
            boolean moving = h.transferId >= 0;
            if (moving) {
                transfers.cancel(h.transferId);
                transfers.release(h.transferId);
                jobs.remove(h.transferId);
                h.transferId = -1;
            }
            if (h.source.workerId() == worker) {
                h.held = false; // its pool is gone with it
                held.remove(h.id());
                h.sourceFailed = true;
                if (moving) {
                    aborted++;
                    if (h.destination.workerId() != worker) {
                        h.reprefilled = true;
                        reprefills++;
                        h.destination.scheduler().pullAborted(h.decode, h.localHitBlocks);
                        h.destination.wakeByRegistry();
                    }
                }
            } else if (!h.orphaned) {
                if (moving) {
                    cancelled++;
                }
                expireLater(h); // the decode request starts over through dispatch
            }
        }
    }

    private static final int EXPIRE = 1;
    private static final long STABLE_ID = 3; // after the transfer services' 0, 1 and 2

    /**
     * The decode worker of {@code h} failed before it read the blocks: the prefill worker frees them when their lease
     * expires ({@code nixl/worker.py}: {@code _reqs_to_send} expiry, counted as {@code num_kv_expired_reqs};
     * {@code nixl/scheduler.py}: the lease starts at {@code kv_lease_duration} when the prefill finishes, and the
     * decode worker's heartbeats, sent every sixth of it until the KV lands, extend it to two thirds of it from each
     * heartbeat). servesim takes the last heartbeat at the failure (vLLM's comes up to a sixth of the lease before).
     */
    private void expireLater(Handoff h) {
        if (leaseNanos == 0) {
            releaseSource(h);
            return;
        }
        h.orphaned = true;
        long at = Math.max(h.prefillDoneNanos + leaseNanos, clock.nowNanos() + leaseNanos * 2 / 3);
        if (at > timeLimitNanos) {
            return; // the run ends first: the hold stays (an event past the limit would mark the run cut short)
        }
        clock.schedule(at, io.servesim.sim.Phase.TRANSFER_COMPLETION, STABLE_ID, this, EXPIRE, h.id());
    }

    @Override
    public void onEvent(int kind, long payload) {
        Handoff h = held.get((int) payload);
        if (h != null && h.orphaned) {
            expired++;
            releaseSource(h);
        }
    }

    /** Prompt blocks held by prefill ranks for transfers (a scan: reports and tests). */
    public long heldBlocks() {
        long n = 0;
        for (Handoff h : held.values()) {
            n += h.prefill.table().numBlocks();
        }
        return n;
    }

    /** Bytes charged by the transfers staged so far. */
    public long bytesStaged() {
        return bytes;
    }

    /** Transfers moving now. */
    public int moving() {
        return transfers.movingJobs();
    }

    /** The totals so far. */
    public Totals totals() {
        return new Totals(
                handoffs,
                staged,
                landed,
                aborted,
                cancelled,
                expired,
                reprefills,
                localPrefills,
                bytes,
                tokens,
                transfers.peakMovingJobs(),
                transferNanos,
                waitNanos);
    }

    /**
     * P/D totals.
     *
     * @param handoffs prefills that finished on a prefill worker and were handed to a decode worker
     * @param transfers transfers staged
     * @param landed transfers whose bytes landed
     * @param aborted transfers cancelled because their prefill worker failed
     * @param cancelled transfers cancelled because their decode worker failed
     * @param expired prefill holds freed when their lease expired (their decode worker failed before reading them)
     * @param reprefills decode requests that recomputed their prompt because their prefill worker failed
     * @param localPrefills requests prefilled on their decode worker (conditional disaggregation)
     * @param bytes bytes charged by staged transfers
     * @param tokens prompt tokens moved by staged transfers
     * @param movingPeak the most transfers moving at once
     * @param transferNanos staging-to-landing time of every landed transfer
     * @param waitNanos prefill end to staging (the decode worker reaching the request) of every staged transfer
     */
    public record Totals(
            long handoffs,
            long transfers,
            long landed,
            long aborted,
            long cancelled,
            long expired,
            long reprefills,
            long localPrefills,
            long bytes,
            long tokens,
            int movingPeak,
            LatencyDistribution transferNanos,
            LatencyDistribution waitNanos) {}
}
