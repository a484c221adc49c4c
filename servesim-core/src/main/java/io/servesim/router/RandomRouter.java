package io.servesim.router;

import io.servesim.workload.Request;
import java.util.SplittableRandom;

/**
 * Uniformly random (worker, rank) among the ranks of workers that are not draining, from the run's seeded router
 * stream; O(1) per request while few workers drain. A draw that lands on a draining worker is redrawn (up to 64
 * times), then the next usable rank is taken. When no usable rank is left the draining workers are used after all:
 * for {@link #route}, any rank; for {@link #routeExcluding}, {@link #route}'s choice, which may be the excluded
 * worker when it is the only one not draining.
 */
public final class RandomRouter implements Router {
    private static final int REDRAWS = 64;

    private final SplittableRandom rng;
    private final int ranks;
    private final int perWorker;
    private boolean[] draining;

    /** Creates the router. */
    public RandomRouter(RouterContext context) {
        this.rng = context.streams().stream(context.streamDomain(), 0);
        this.ranks = context.workers() * context.ranksPerWorker();
        this.perWorker = context.ranksPerWorker();
    }

    @Override
    public void onWorkerDraining(int worker) {
        if (draining == null) {
            draining = new boolean[ranks / perWorker];
        }
        draining[worker] = true;
    }

    private boolean usable(int g) {
        return draining == null || !draining[g / perWorker];
    }

    /**
     * A uniform draw over every rank except the excluded worker's, in the same single draw as before draining was
     * honoured here (so runs without drains are unchanged), redrawn and then scanned away from draining workers.
     */
    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        int others = ranks - perWorker;
        int skipFrom = excludedWorker * perWorker;
        int i = rng.nextInt(others);
        for (int attempt = 0; !usable(skip(i, skipFrom)) && attempt < REDRAWS; attempt++) {
            i = rng.nextInt(others); // re-draw away from draining workers
        }
        for (int n = 0; !usable(skip(i, skipFrom)) && n < others; n++) {
            i = i + 1 == others ? 0 : i + 1; // many draining workers: the next usable rank, if any
        }
        return usable(skip(i, skipFrom)) ? skip(i, skipFrom) : route(request);
    }

    /** Maps an index over the other workers' ranks to a global rank index, stepping over the excluded worker's. */
    private int skip(int i, int skipFrom) {
        return i >= skipFrom ? i + perWorker : i;
    }

    @Override
    public int route(Request request) {
        int g = rng.nextInt(ranks);
        for (int attempt = 0; !usable(g) && attempt < REDRAWS; attempt++) {
            g = rng.nextInt(ranks); // re-draw away from draining workers
        }
        for (int i = 0; !usable(g) && i < ranks; i++) {
            g = (g + 1) % ranks; // many draining workers: the next usable rank, if any
        }
        return g;
    }
}
