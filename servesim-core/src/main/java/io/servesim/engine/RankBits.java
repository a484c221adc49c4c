package io.servesim.engine;

/**
 * Bit sets over a worker's ranks (one bit per rank index), shared by the lockstep and async drivers so that only
 * ranks with work are visited.
 */
final class RankBits {
    private RankBits() {}

    /** Ends the step on every rank in {@code stepped} (then cleared), applying its outputs at {@code now}. */
    static void endSteps(EngineRank[] ranks, long[] stepped, long now, long passNanos) {
        for (int w = 0; w < stepped.length; w++) {
            long bits = stepped[w];
            while (bits != 0) {
                int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                ranks[i].endStep(now, passNanos);
            }
            stepped[w] = 0;
        }
    }

    /** Keeps in {@code active} only the ranks that still have work; returns whether any has. */
    static boolean retainRanksWithWork(EngineRank[] ranks, long[] active) {
        boolean any = false;
        for (int w = 0; w < active.length; w++) {
            long bits = active[w];
            long keep = 0;
            while (bits != 0) {
                int i = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                if (ranks[i].hasWork()) {
                    keep |= 1L << i;
                }
            }
            active[w] = keep;
            any |= keep != 0;
        }
        return any;
    }
}
