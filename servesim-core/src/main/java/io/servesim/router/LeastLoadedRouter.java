package io.servesim.router;

import io.servesim.workload.Request;

/** vLLM's DP balancer: the rank with the lowest {@code 4 × waiting + running}; O(log R) per request. */
public final class LeastLoadedRouter implements Router {
    private final LoadIndex load;
    private final int perWorker;

    /** Creates the router. */
    public LeastLoadedRouter(RouterContext context) {
        this.load = context.load();
        this.perWorker = context.ranksPerWorker();
    }

    @Override
    public void onWorkerDraining(int worker) {
        for (int r = 0; r < perWorker; r++) {
            load.disable(worker * perWorker + r);
        }
    }

    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        return load.leastLoadedExcluding(excludedWorker * perWorker, perWorker);
    }

    @Override
    public int route(Request request) {
        return load.leastLoaded();
    }

    @Override
    public boolean usesLoad() {
        return true;
    }
}
