package io.servesim.run;

import io.servesim.engine.EngineRank;
import io.servesim.engine.RankScheduler;

/**
 * Keeps per-rank queue lengths and KV use, and their cluster totals, up to date as ranks report changes, and feeds
 * them to the router (its load index and {@code onRankLoad}). Only the rank that changed is re-evaluated; the time
 * series reads the totals without scanning ranks.
 */
final class LoadTracker {
    private final Cluster cluster;
    private final int[] rankWaiting;
    private final int[] rankRunning;
    private final int[] rankUsedBlocks;
    private long totalWaiting;
    private long totalRunning;
    private long totalUsedBlocks;

    LoadTracker(Cluster cluster) {
        this.cluster = cluster;
        this.rankWaiting = new int[cluster.numRanks()];
        this.rankRunning = new int[cluster.numRanks()];
        this.rankUsedBlocks = new int[cluster.numRanks()];
    }

    /** A rank's waiting or running count, pending prompt tokens or used blocks changed. */
    void changed(EngineRank rank) {
        RankScheduler s = rank.scheduler();
        int g = rank.globalIndex();
        // vLLM's waiting queue keeps requests whose KV is being loaded (WAITING_FOR_REMOTE_KVS: G2 loads, KVCR and
        // P/D pulls), so its num_requests_waiting and the DP balancer's 4 x waiting + running count them
        int waiting = s.numWaiting() + s.numLoading();
        int running = s.numRunning();
        int used = s.pool().usedBlocks();
        totalWaiting += waiting - rankWaiting[g];
        totalRunning += running - rankRunning[g];
        totalUsedBlocks += used - rankUsedBlocks[g];
        rankWaiting[g] = waiting;
        rankRunning[g] = running;
        rankUsedBlocks[g] = used;
        cluster.groupOf(rank.workerId()).rankLoad(g, waiting, running, s.pendingPromptTokens(), used);
    }

    /** A failed rank holds nothing: its load drops to zero for the router too. */
    void failed(EngineRank rank) {
        changed(rank);
        cluster.groupOf(rank.workerId()).rankFailed(rank.globalIndex());
    }

    long totalWaiting() {
        return totalWaiting;
    }

    long totalRunning() {
        return totalRunning;
    }

    long totalUsedBlocks() {
        return totalUsedBlocks;
    }

    int waiting(int g) {
        return rankWaiting[g];
    }

    int running(int g) {
        return rankRunning[g];
    }

    int usedBlocks(int g) {
        return rankUsedBlocks[g];
    }
}
