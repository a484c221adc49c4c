package io.servesim.router;

import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
import java.util.SplittableRandom;

/** Uniformly random (worker, rank), from the run's seeded router stream; O(1) per request. */
public final class RandomRouter implements Router {
    private final SplittableRandom rng;
    private final int ranks;

    /** Creates the router. */
    public RandomRouter(RouterContext context) {
        this.rng = context.streams().stream(RandomStreams.ROUTER, 0);
        this.ranks = context.workers() * context.ranksPerWorker();
    }

    @Override
    public int route(Request request) {
        return rng.nextInt(ranks);
    }
}
