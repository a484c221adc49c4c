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

    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        int g = rng.nextInt(ranks - perWorker);
        return g >= excludedWorker * perWorker ? g + perWorker : g;
    }

    @Override
    public int route(Request request) {
        return rng.nextInt(ranks);
    }
}
