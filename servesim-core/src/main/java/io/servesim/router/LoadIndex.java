package io.servesim.router;

/**
 * Per-rank load scores in an indexed binary min-heap, so "least loaded rank" is O(1) and an update is O(log R).
 *
 * <p>The score is vLLM's DP load balancer score {@code 4 × waiting + running}
 * ({@code vllm/v1/engine/core_client.py} DPLBAsyncMPClient). vLLM reads coordinator snapshots (about every 100 ms)
 * plus its own optimistic increments and breaks ties by scanning from a rotating start; servesim uses the live
 * counts and breaks ties by the lowest global rank index, which is deterministic and needs no scan.
 */
public final class LoadIndex {
    private static final int INDEX_BITS = 24;
    private final int[] heap;
    private final int[] position;
    private final long[] key;

    /** Creates an index over {@code ranks} ranks, all with score 0. */
    public LoadIndex(int ranks) {
        if (ranks > 1 << INDEX_BITS) {
            throw new IllegalArgumentException("too many ranks: " + ranks);
        }
        heap = new int[ranks];
        position = new int[ranks];
        key = new long[ranks];
        for (int i = 0; i < ranks; i++) {
            heap[i] = i;
            position[i] = i;
            key[i] = i;
        }
    }

    /** The vLLM balancer score of a rank. */
    public static long score(int waitingCount, int runningCount) {
        return 4L * waitingCount + runningCount;
    }

    private boolean[] disabled;

    /** Takes a rank out of consideration (a draining worker): it sorts last unless every rank is disabled. */
    public void disable(int rank) {
        if (disabled == null) {
            disabled = new boolean[key.length];
        }
        disabled[rank] = true;
        setScore(rank, (1L << 39) - 1);
    }

    /** Whether a rank was disabled. */
    public boolean isDisabled(int rank) {
        return disabled != null && disabled[rank];
    }

    /** Updates a rank's counts (its score becomes 4 × waiting + running). */
    public void update(int rank, int waitingCount, int runningCount) {
        setScore(rank, score(waitingCount, runningCount));
    }

    /** Sets a rank's score directly (any non-negative value below 2^39); lower scores come first. */
    public void setScore(int rank, long score) {
        if (disabled != null && disabled[rank]) {
            score = (1L << 39) - 1;
        }
        long newKey = (Math.min(score, (1L << 39) - 1) << INDEX_BITS) | rank;
        long old = key[rank];
        key[rank] = newKey;
        if (newKey < old) {
            siftUp(position[rank]);
        } else if (newKey > old) {
            siftDown(position[rank]);
        }
    }

    /** The rank with the lowest score (lowest index among equals). */
    public int leastLoaded() {
        return heap[0];
    }

    /** The least-loaded rank outside [{@code from}, {@code from + count}) (O(count · log R)); -1 if none. */
    public int leastLoadedExcluding(int from, int count) {
        if (count >= heap.length) {
            return -1;
        }
        long[] saved = new long[count];
        for (int i = 0; i < count; i++) {
            saved[i] = key[from + i] >>> INDEX_BITS;
            setScore(from + i, (1L << 39) - 1);
        }
        int best = heap[0];
        for (int i = 0; i < count; i++) {
            setScore(from + i, saved[i]);
        }
        return best;
    }

    /** The current score of a rank. */
    public long scoreOf(int rank) {
        return key[rank] >>> INDEX_BITS;
    }

    private void siftUp(int index) {
        int i = index;
        int r = heap[i];
        long k = key[r];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            int p = heap[parent];
            if (key[p] <= k) {
                break;
            }
            heap[i] = p;
            position[p] = i;
            i = parent;
        }
        heap[i] = r;
        position[r] = i;
    }

    private void siftDown(int index) {
        int n = heap.length;
        int i = index;
        int r = heap[i];
        long k = key[r];
        while (true) {
            int child = 2 * i + 1;
            if (child >= n) {
                break;
            }
            int c = heap[child];
            int right = child + 1;
            if (right < n && key[heap[right]] < key[c]) {
                child = right;
                c = heap[child];
            }
            if (key[c] >= k) {
                break;
            }
            heap[i] = c;
            position[c] = i;
            i = child;
        }
        heap[i] = r;
        position[r] = i;
    }
}
