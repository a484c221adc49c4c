package io.servesim.engine;

import io.servesim.kv.BlockPool;
import io.servesim.kv.HostPool;
import io.servesim.kv.KvCacheManager;
import io.servesim.transfer.TransferService;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.Arrays;

/**
 * One rank's link to the G2 host tier, following vLLM's OffloadingConnector ({@code offloading/scheduler.py},
 * {@code offloading/worker.py}; vllm-semantics.md §3.2):
 *
 * <ul>
 *   <li><b>Stores.</b> Blocks cached (computed) in a step are stored to G2 when the rank's <em>next</em> step starts,
 *       only those G2 lacks; each G1 block is pinned (an extra reference) until its copy lands, so it cannot be
 *       evicted meanwhile; a store G2 cannot make room for is skipped.
 *   <li><b>Loads.</b> At admission the prefix lookup continues into G2 past the G1 hit (ready blocks only); the
 *       request gets its G1 blocks, its G2 blocks are pinned, the copy runs host → GPU, and the request waits off
 *       the running list (no token budget, not counted against {@code max_num_seqs}); when the copy lands the blocks
 *       are cached in G1 and the request goes to the head of the waiting queue.
 * </ul>
 *
 * Copies go through the shared {@link TransferService}: GPU endpoint egress = d2h bandwidth, ingress = h2d
 * bandwidth; the G2 endpoint is unlimited per rank, or the shared pool's cap for {@code cluster_shared}.
 */
final class HostOffload {
    private final HostPool host;
    private final TransferService transfers;
    private final CopyJobs jobs;
    private final int gpuEndpoint;
    private final int hostEndpoint;
    private final long blockBytes;
    private final long firstByteNanos;
    private final OffloadCounters counters;
    private final IntArrayList active = new IntArrayList(); // this rank's copies in flight, in submission order
    private final boolean sharedPool;
    private final IntArrayList pendingBlocks = new IntArrayList();
    private final LongArrayList pendingHashes = new LongArrayList();
    // whether the pending lists may hold blocks (set when any is added): most steps cache nothing new, and this field
    // sits in an object the step touches anyway, unlike the lists
    private boolean pendingAny;
    private int pinnedForStore;
    private final EngineRank rank;
    private final double h2dBytesPerNano;
    private final double d2hBytesPerNano;
    private boolean writeBack;
    private boolean selective;
    private final IntArrayList discardBlocks = new IntArrayList();
    private final LongArrayList discardHashes = new LongArrayList();
    private int writtenBack;

    HostOffload(
            EngineRank rank,
            HostPool host,
            TransferService transfers,
            CopyJobs jobs,
            int gpuEndpoint,
            int hostEndpoint,
            long blockBytes,
            long firstByteNanos,
            boolean sharedPool,
            OffloadCounters counters,
            double h2dGbytesPerS,
            double d2hGbytesPerS) {
        this.rank = rank;
        this.h2dBytesPerNano = h2dGbytesPerS; // GB/s = bytes/ns
        this.d2hBytesPerNano = d2hGbytesPerS;
        this.host = host;
        this.sharedPool = sharedPool;
        this.transfers = transfers;
        this.jobs = jobs;
        this.gpuEndpoint = gpuEndpoint;
        this.hostEndpoint = hostEndpoint;
        this.blockBytes = blockBytes;
        this.firstByteNanos = firstByteNanos;
        this.counters = counters;
        rank.scheduler().kv().trackNewlyCached();
    }

    /** G1 blocks pinned by stores in flight (for invariant checks). */
    int pinnedForStore() {
        return pinnedForStore;
    }

    /**
     * SGLang HiCache's {@code write_back} policy: nothing is stored when computed; a cached page the GPU evicts is
     * backed up to the host then ({@code evict} with {@code write_backup(node, write_back=True)}), and the eviction waits
     * for the copy.
     */
    void writeBack() {
        if (!writeBack) {
            writeBack = true;
            rank.scheduler().pool().onEviction(this::storeEvicted);
        }
    }

    private void storeEvicted(long hash) {
        if (host.reserve(hash)) {
            host.completeStore(hash);
            counters.storeStarted(blockBytes);
            writtenBack++;
        }
    }

    /**
     * The copy time of the pages written back since the last call (first byte, then the rank's d2h bandwidth), which
     * the step that evicted them lasts at least; 0 if none.
     */
    long takeWriteBackNanos() {
        if (writtenBack == 0) {
            return 0;
        }
        long bytes = blockBytes * writtenBack;
        writtenBack = 0;
        long nanos = firstByteNanos;
        if (d2hBytesPerNano > 0) {
            nanos += (long) Math.ceil(bytes / d2hBytesPerNano);
        }
        return nanos;
    }

    private int onboarded;

    /**
     * TensorRT-LLM's secondary (host) pool ({@code host_cache_size}; {@code WindowBlockManager::getFreeBlock},
     * {@code onboardBlock}, {@code KVCacheTransferManager}): a cached block the GPU evicts is offloaded to the host
     * then, nothing is stored when computed, and a block reused from the host moves back (its host slot is freed).
     * Both copies run on their own streams while the iteration is prepared, and the forward waits for them ({@link
     * #takeCopyNanos}).
     */
    void offloadOnEviction() {
        if (!writeBack) {
            writeBack();
            rank.scheduler().kv().stopTrackingNewlyCached();
        }
    }

    /** Pins host blocks {@code hashes[from, from + count)} while their GPU blocks are allocated (no host eviction). */
    void pinRun(long[] hashes, int from, int count) {
        for (int i = from; i < from + count; i++) {
            host.pin(hashes[i]);
        }
    }

    /** Host blocks {@code hashes[from, from + count)}, pinned by {@link #pinRun}, moved back to the GPU. */
    void onboard(long[] hashes, int from, int count) {
        for (int i = from; i < from + count; i++) {
            host.unpin(hashes[i]);
            host.take(hashes[i]);
        }
        counters.loadStarted(blockBytes * count);
        onboarded += count;
    }

    /**
     * The copy time of the blocks offloaded and onboarded since the last call: each direction a first byte then its
     * bandwidth, the two streams in parallel; 0 if none.
     */
    long takeCopyNanos() {
        long offload = takeWriteBackNanos();
        long onboard = 0;
        if (onboarded > 0) {
            onboard = firstByteNanos;
            if (h2dBytesPerNano > 0) {
                onboard += (long) Math.ceil(blockBytes * onboarded / h2dBytesPerNano);
            }
            onboarded = 0;
        }
        return Math.max(offload, onboard);
    }

    /** At the start of a step: store what the previous step computed and G2 lacks. */
    void storePrevious(KvCacheManager kv) {
        if (!pendingAny) {
            return; // nothing pending: as below with empty lists
        }
        pendingAny = false;
        kv.storesQueued(false);
        if (writeBack) {
            pendingBlocks.clear(); // write-back stores on eviction only
            pendingHashes.clear();
            return;
        }
        BlockPool gpu = kv.pool();
        // the blocks kept are compacted to the front of the pending lists (most steps store none: nothing allocated),
        // then copied into exact arrays for the copy job
        int kept = 0;
        for (int i = 0, n = pendingBlocks.size(); i < n; i++) {
            int b = pendingBlocks.getInt(i);
            long h = pendingHashes.getLong(i);
            if (gpu.blockHash(b) != h || !host.reserve(h)) {
                continue; // evicted already, or G2 has it / cannot make room
            }
            gpu.touch(b); // pinned until the copy lands
            pendingBlocks.set(kept, b);
            pendingHashes.set(kept, h);
            kept++;
        }
        int[] blocks = kept == 0 ? null : Arrays.copyOf(pendingBlocks.elements(), kept);
        long[] hashes = kept == 0 ? null : Arrays.copyOf(pendingHashes.elements(), kept);
        pendingBlocks.clear();
        pendingHashes.clear();
        if (kept == 0) {
            return;
        }
        pinnedForStore += kept;
        long bytes = blockBytes * kept;
        counters.storeStarted(bytes);
        int id = transfers.submit(gpuEndpoint, hostEndpoint, bytes, firstByteNanos);
        active.add(id);
        jobs.add(id, new CopyJobs.Job() {
            @Override
            public void done() {
                active.rem(id);
                for (int i = 0; i < blocks.length; i++) {
                    host.completeStore(hashes[i]);
                    gpu.release(blocks[i]);
                }
                pinnedForStore -= blocks.length;
                transfers.release(id);
                rank.wakeAfterLoad(); // freed pins may unblock a waiting request
            }

            @Override
            public void abort() {
                for (long h : hashes) {
                    host.abortStore(h); // the reserved entries never fill
                }
            }
        });
    }

    /** After scheduling: remember the blocks cached (computed) in this step, for the next step's store. */
    void collect(KvCacheManager kv) {
        if (!kv.hasNewlyCached()) {
            return; // nothing to drain: as below with nothing cached
        }
        if (selective) {
            kv.drainNewlyCached(discardBlocks, discardHashes); // stored only when hit again (storeHit)
            discardBlocks.clear();
            discardHashes.clear();
            return;
        }
        kv.drainNewlyCached(pendingBlocks, pendingHashes);
        pendingAny = true;
        kv.storesQueued(true);
    }

    /**
     * SGLang HiCache's {@code write_through_selective}: a page is backed up only when a request inserts it again
     * (its hit count reaches {@code write_through_threshold}, 2), through {@link #storeHit}.
     */
    void selective() {
        selective = true;
    }

    /** Queues cached G1 block {@code block} (hash {@code hash}) for the next step's stores. */
    void storeHit(int block, long hash) {
        pendingBlocks.add(block);
        pendingHashes.add(hash);
        pendingAny = true;
        rank.scheduler().kv().storesQueued(true);
    }

    /** Ready G2 blocks continuing the prefix at {@code from} (before {@code to}), touched as most recent. */
    int readyRun(long[] hashes, int from, int to) {
        return host.readyRun(hashes, from, to);
    }

    /** As {@link #readyRun}, without touching the entries (sizing a request before it is allocated). */
    int peekReadyRun(long[] hashes, int from, int to) {
        return host.peekReadyRun(hashes, from, to);
    }

    /** Starts the host-to-GPU copy of blocks [{@code from}, {@code from + count}) of a waiting request. */
    void startLoad(Sequence s, int from, int count, long[] hashes) {
        for (int i = from; i < from + count; i++) {
            host.pin(hashes[i]);
        }
        long bytes = blockBytes * count;
        counters.loadStarted(bytes);
        int id = transfers.submit(hostEndpoint, gpuEndpoint, bytes, firstByteNanos);
        active.add(id);
        jobs.add(id, new CopyJobs.Job() {
            @Override
            public void done() {
                active.rem(id);
                abort(); // the pins go either way
                transfers.release(id);
                rank.scheduler().copyLanded(s);
                rank.wakeAfterLoad();
            }

            @Override
            public void abort() {
                for (int i = from; i < from + count; i++) {
                    host.unpin(hashes[i]);
                }
            }
        });
    }

    /**
     * SGLang HiCache's load-back ({@code init_load_back}, then the layer-wise load overlapped with the batch's
     * forward): {@code count} G2 blocks are copied host to GPU during the step that uses them. Returns the copy's time
     * (first byte, then the rank's h2d bandwidth; this rank's loads do not overlap each other, and a rank-local G2
     * shares its h2d link with nothing else), which the step lasts at least.
     */
    long loadInStep(int count) {
        long bytes = blockBytes * count;
        counters.loadStarted(bytes);
        long nanos = firstByteNanos;
        if (h2dBytesPerNano > 0) {
            nanos += (long) Math.ceil(bytes / h2dBytesPerNano);
        }
        return nanos;
    }

    /** The rank failed: cancel its copies in flight (in submission order) and undo their holds on the G2 pool. */
    void abortAll() {
        for (int i = 0, n = active.size(); i < n; i++) {
            int id = active.getInt(i);
            transfers.cancel(id);
            transfers.release(id);
            CopyJobs.Job job = jobs.remove(id);
            if (job != null) {
                job.abort();
            }
        }
        active.clear();
        pinnedForStore = 0;
        pendingBlocks.clear();
        pendingHashes.clear();
        pendingAny = false;
        rank.scheduler().kv().storesQueued(false);
    }

    /** The G2 pool when it is this rank's own (a KVCR source may serve pulls from it), else null. */
    HostPool privatePool() {
        return sharedPool ? null : host;
    }
}
