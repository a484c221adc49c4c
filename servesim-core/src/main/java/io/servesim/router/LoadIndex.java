package io.servesim.router;

import io.servesim.sim.IndexedMinHeap;

/**
 * Per-rank load scores in an indexed binary min-heap, so "least loaded rank" is O(1) and an update is O(log R).
 *
 * <p>The score is vLLM's DP load balancer score {@code 4 × waiting + running}
 * ({@code vllm/v1/engine/core_client.py} DPLBAsyncMPClient). vLLM reads coordinator snapshots (about every 100 ms)
 * plus its own optimistic increments and breaks ties by scanning from a rotating start; servesim uses the live
 * counts and breaks ties by the lowest global rank index, which is deterministic and needs no scan.
 */
public final class LoadIndex {
    private static final long DISABLED = Long.MAX_VALUE;
    private final IndexedMinHeap heap = new IndexedMinHeap();
    private final int ranks;
    private boolean[] disabled;

    /** Creates an index over {@code ranks} ranks, all with score 0. */
    public LoadIndex(int ranks) {
        this.ranks = ranks;
        for (int i = 0; i < ranks; i++) {
            heap.set(i, 0);
        }
    }

    /** The vLLM balancer score of a rank. */
    public static long score(int waitingCount, int runningCount) {
        return 4L * waitingCount + runningCount;
    }

    /** Takes a rank out of consideration (a draining worker): it sorts last unless every rank is disabled. */
    public void disable(int rank) {
        if (disabled == null) {
            disabled = new boolean[ranks];
        }
        disabled[rank] = true;
        heap.set(rank, DISABLED);
    }

    /** Whether a rank was disabled. */
    public boolean isDisabled(int rank) {
        return disabled != null && disabled[rank];
    }

    /** Updates a rank's counts (its score becomes 4 × waiting + running). */
    public void update(int rank, int waitingCount, int runningCount) {
        setScore(rank, score(waitingCount, runningCount));
    }

    /** Sets a rank's score directly (non-negative); lower scores come first, a disabled rank stays last. */
    public void setScore(int rank, long score) {
        heap.set(rank, disabled != null && disabled[rank] ? DISABLED : Math.min(score, DISABLED - 1));
    }

    /** The rank with the lowest score (lowest index among equals). */
    public int leastLoaded() {
        return heap.peek();
    }

    /** The least-loaded rank outside [{@code from}, {@code from + count}) (O(count · log R)); -1 if none. */
    public int leastLoadedExcluding(int from, int count) {
        if (count >= ranks) {
            return -1;
        }
        long[] saved = new long[count];
        for (int i = 0; i < count; i++) {
            saved[i] = heap.keyOf(from + i);
            heap.set(from + i, DISABLED);
        }
        int best = heap.peek();
        for (int i = 0; i < count; i++) {
            heap.set(from + i, saved[i]);
        }
        return best;
    }

    /** The current score of a rank. */
    public long scoreOf(int rank) {
        long k = heap.keyOf(rank);
        return k == DISABLED ? (1L << 39) - 1 : k;
    }
}
