package io.servesim.router;

import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
import java.util.SplittableRandom;

/** Uniformly random (worker, rank), from the run's seeded router stream; O(1) per request. */
public final class RandomRouter implements Router {
    private final SplittableRandom rng;
    private final int ranks;
    private final int perWorker;

    /** Creates the router. */
    public RandomRouter(RouterContext context) {
        this.rng = context.streams().stream(RandomStreams.ROUTER, 0);
        this.ranks = context.workers() * context.ranksPerWorker();
        this.perWorker = context.ranksPerWorker();
    }

    private boolean[] draining;

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

    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        int g = rng.nextInt(ranks - perWorker);
        return g >= excludedWorker * perWorker ? g + perWorker : g;
    }

    @Override
    public int route(Request request) {
        int g = rng.nextInt(ranks);
        for (int attempt = 0; !usable(g) && attempt < 64; attempt++) {
            g = rng.nextInt(ranks); // re-draw away from draining workers
        }
        for (int i = 0; !usable(g) && i < ranks; i++) {
            g = (g + 1) % ranks; // many draining workers: the next usable rank, if any
        }
        return g;
    }
}
