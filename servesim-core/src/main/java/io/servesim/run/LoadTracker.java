package io.servesim.run;

import io.servesim.engine.EngineRank;
import io.servesim.engine.VllmScheduler;
import io.servesim.router.LoadIndex;
import io.servesim.router.Router;

/**
 * Keeps per-rank queue lengths and KV use, and their cluster totals, up to date as ranks report changes, and feeds
 * them to the router (its load index and {@code onRankLoad}). Only the rank that changed is re-evaluated; the time
 * series reads the totals without scanning ranks.
 */
final class LoadTracker {
    private final Router router;
    private final LoadIndex load;
    private final int[] rankWaiting;
    private final int[] rankRunning;
    private final int[] rankUsedBlocks;
    private long totalWaiting;
    private long totalRunning;
    private long totalUsedBlocks;

    LoadTracker(Cluster cluster) {
        this.router = cluster.router();
        this.load = cluster.load();
        this.rankWaiting = new int[cluster.numRanks()];
        this.rankRunning = new int[cluster.numRanks()];
        this.rankUsedBlocks = new int[cluster.numRanks()];
    }

    /** A rank's waiting or running count, pending prompt tokens or used blocks changed. */
    void changed(EngineRank rank) {
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
            load.update(g, waiting, running);
        }
        router.onRankLoad(g, waiting, running, s.pendingPromptTokens(), used);
    }

    /** A failed rank holds nothing: its load drops to zero for the router too. */
    void failed(EngineRank rank) {
        changed(rank);
        if (router.usesLoad()) {
            load.update(rank.globalIndex(), 0, 0);
        }
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
