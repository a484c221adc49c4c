package io.servesim.router;

import io.servesim.config.KvRouterConfig;
import io.servesim.kv.KvEventSink;
import io.servesim.sim.Mix64;
import io.servesim.sim.SimClock;
import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.ints.IntIterator;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayFIFOQueue;
import java.util.SplittableRandom;

/**
 * Dynamo's KV-aware router ({@code lib/llm/src/kv_router/scheduler.rs}, 2025 to early-2026 form; see
 * vllm-semantics.md §6): per rank, {@code cost = overlap_weight × prefill_blocks + decode_blocks}, where
 * {@code prefill_blocks = (A_r + ISL − overlap_r × block_size) / block_size} ({@code A_r}: prompt tokens not yet
 * computed by the rank's requests that have no first token; {@code overlap_r}: leading prompt blocks the rank
 * holds, at most {@code (ISL − 1) / block_size} since the last token never hits) and
 * {@code decode_blocks = D_r + ceil(ISL / block_size)} ({@code D_r}: KV blocks in use). Lowest cost wins at
 * temperature 0; above 0 a softmax over costs normalised by their range is sampled from the seeded router stream.
 *
 * <p>Sub-linear decisions: for a rank without overlap the cost is its base {@code B_r = w·A_r/bs + D_r} plus
 * terms common to all ranks, kept in an indexed min-heap. So the best rank is among the ranks holding the
 * request's prefix blocks (found by walking the request's block hashes in the prefix index, deepest first,
 * stopping once no remaining rank can beat the best cost found) and the heap's top. A depth held by every rank is
 * resolved by the heap top alone (this assumes a rank holding a block also holds its prefix, which vLLM's
 * reverse-order eviction nearly always ensures; the chosen rank's overlap itself is counted exactly). Temperature
 * &gt; 0 needs every rank's cost, so it is O(ranks) per request.
 *
 * <p>Deviations from Dynamo: ties go to the lowest global rank index (Dynamo prefers the smallest cached tree,
 * then random); the router sees its own engines' caches exactly (events are delivered in event order, with no
 * transport delay); output blocks are tracked like prompt blocks (Dynamo's default does not track them).
 */
public final class KvAwareRouter implements Router, KvEventSink {
    private static final double SCALE = 1024.0; // heap keys: base cost in 1/1024 blocks

    private final int ranks;
    private final int blockSize;
    private final double weight;
    private final double temperature;
    private final boolean approximate;
    private final long ttlNanos;
    private final SimClock clock;
    private final SplittableRandom rng;
    private final KvPrefixIndex index = new KvPrefixIndex();
    private final LoadIndex base;
    private final long[] pendingPrompt;
    private final int[] usedBlocks;
    private final IntOpenHashSet evaluated = new IntOpenHashSet();
    private final Long2LongOpenHashMap expiry = new Long2LongOpenHashMap();
    private final LongArrayFIFOQueue expiryHashes = new LongArrayFIFOQueue();
    private final LongArrayFIFOQueue expiryRanks = new LongArrayFIFOQueue();
    private final LongArrayFIFOQueue expiryTimes = new LongArrayFIFOQueue();
    private final int perWorker;
    private double bestCost;
    private int bestRank;
    private int excludedFrom = -1;
    private int excludedTo = -1;

    /** Creates the router. */
    public KvAwareRouter(RouterContext context) {
        expiry.defaultReturnValue(Long.MIN_VALUE);
        KvRouterConfig c = context.kv();
        this.ranks = context.workers() * context.ranksPerWorker();
        this.perWorker = context.ranksPerWorker();
        this.blockSize = context.blockSize();
        this.weight = c.overlapWeight();
        this.temperature = c.temperature();
        this.approximate = c.mode() == KvRouterConfig.Mode.APPROXIMATE;
        this.ttlNanos = Math.round(c.ttlS() * 1e9);
        this.clock = context.clock();
        this.rng = context.streams().stream(context.streamDomain(), 1);
        this.base = new LoadIndex(ranks);
        this.pendingPrompt = new long[ranks];
        this.usedBlocks = new int[ranks];
    }

    @Override
    public void stored(int rank, long blockHash) {
        index.add(blockHash, rank);
    }

    @Override
    public void removed(int rank, long blockHash) {
        index.remove(blockHash, rank);
    }

    @Override
    public void onRankLoad(int rank, int waiting, int running, long pendingPromptTokens, int used) {
        pendingPrompt[rank] = pendingPromptTokens;
        usedBlocks[rank] = used;
        base.setScore(rank, Math.round(baseCost(rank) * SCALE));
    }

    private double baseCost(int rank) {
        return weight * pendingPrompt[rank] / blockSize + usedBlocks[rank];
    }

    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        return routeExcluding(request, promptHashes(request), excludedWorker);
    }

    @Override
    public int routeExcluding(Request request, long[] promptHashes, int excludedWorker) {
        excludedFrom = excludedWorker * perWorker;
        excludedTo = excludedFrom + perWorker;
        try {
            return route(request, promptHashes);
        } finally {
            excludedFrom = -1;
            excludedTo = -1;
        }
    }

    @Override
    public boolean needsPromptHashes() {
        return true;
    }

    private boolean excluded(int rank) {
        return (rank >= excludedFrom && rank < excludedTo) || base.isDisabled(rank);
    }

    @Override
    public void onWorkerDraining(int worker) {
        for (int r = 0; r < perWorker; r++) {
            base.disable(worker * perWorker + r);
        }
    }

    @Override
    public int route(Request request) {
        return route(request, promptHashes(request));
    }

    @Override
    public int route(Request request, long[] hashes) {
        if (approximate) {
            expire(clock.nowNanos());
        }
        int maxHit = Math.min((request.promptLength() - 1) / blockSize, hashes.length);
        int depth = 0;
        while (depth < maxHit && index.count(hashes[depth]) > 0) {
            depth++;
        }
        int chosen = temperature > 0 ? sample(hashes, maxHit) : lowestCost(hashes, depth, maxHit);
        if (approximate) {
            remember(hashes, chosen);
        }
        return chosen;
    }

    private int lowestCost(long[] hashes, int depth, int maxHit) {
        bestCost = Double.POSITIVE_INFINITY;
        bestRank = -1;
        evaluated.clear();
        int top = excludedFrom < 0 ? base.leastLoaded() : base.leastLoadedExcluding(excludedFrom, perWorker);
        double minBase = baseCost(top);
        for (int d = depth; d >= 1; d--) {
            // ranks not evaluated yet hold at most d leading blocks: none can cost less than this bound
            double bound = minBase - weight * d;
            if (bestCost <= bound) {
                break;
            }
            long h = hashes[d - 1];
            int count = index.count(h);
            if (count == ranks) {
                break; // every rank holds this depth: the heap top is the best of the rest
            }
            int only = index.single(h);
            if (only >= 0) {
                if (!excluded(only) && evaluated.add(only)) {
                    consider(only, overlap(hashes, maxHit, only));
                }
                continue;
            }
            IntIterator it = index.several(h);
            while (it != null && it.hasNext()) {
                int r = it.nextInt();
                if (!excluded(r) && evaluated.add(r)) {
                    consider(r, overlap(hashes, maxHit, r));
                }
            }
        }
        if (evaluated.add(top)) {
            consider(top, overlap(hashes, maxHit, top));
        }
        return bestRank;
    }

    /** cost − (terms common to all ranks) = B_r − w × overlap_r; ties to the lower index. */
    private void consider(int rank, int overlap) {
        double c = baseCost(rank) - weight * overlap;
        if (c < bestCost || (c == bestCost && rank < bestRank)) {
            bestCost = c;
            bestRank = rank;
        }
    }

    private int overlap(long[] hashes, int maxHit, int rank) {
        int o = 0;
        while (o < maxHit && index.holds(hashes[o], rank)) {
            o++;
        }
        return o;
    }

    /** Dynamo's softmax_sample: normalise logits by their range, negate, divide by the temperature. */
    private int sample(long[] hashes, int maxHit) {
        double[] cost = new double[ranks];
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int r = 0; r < ranks; r++) {
            if (excluded(r)) {
                continue;
            }
            cost[r] = baseCost(r) - weight * overlap(hashes, maxHit, r);
            min = Math.min(min, cost[r]);
            max = Math.max(max, cost[r]);
        }
        double sum = 0;
        for (int r = 0; r < ranks; r++) {
            cost[r] = excluded(r) ? 0 : max == min ? 1 : StrictMath.exp(-((cost[r] - min) / (max - min)) / temperature);
            sum += cost[r];
        }
        double u = rng.nextDouble() * sum;
        for (int r = 0; r < ranks; r++) {
            u -= cost[r];
            if (u < 0) {
                return r;
            }
        }
        return ranks - 1;
    }

    private long[] promptHashes(Request request) {
        return request.promptHashes(blockSize);
    }

    /**
     * Approximate mode (Dynamo's {@code --no-kv-events}, {@code approx.rs}): the routed prompt's blocks are assumed
     * cached on the chosen rank for {@code ttl_s}; routing them there again refreshes the entry.
     */
    private void remember(long[] hashes, int rank) {
        long until = clock.nowNanos() + ttlNanos;
        for (long h : hashes) {
            index.add(h, rank);
            expiry.put(Mix64.mix(h, rank), until);
            expiryHashes.enqueue(h);
            expiryRanks.enqueue(rank);
            expiryTimes.enqueue(until);
        }
    }

    /** Drops entries whose TTL passed (FIFO by expiry time; refreshed entries leave stale queue items, skipped). */
    private void expire(long now) {
        while (!expiryTimes.isEmpty() && expiryTimes.firstLong() <= now) {
            long h = expiryHashes.dequeueLong();
            int r = (int) expiryRanks.dequeueLong();
            long until = expiryTimes.dequeueLong();
            long key = Mix64.mix(h, r);
            if (expiry.get(key) == until) {
                expiry.remove(key);
                index.remove(h, r);
            }
        }
    }
}
