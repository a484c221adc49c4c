package io.servesim.router;

import io.servesim.workload.Request;

/**
 * Round robin as AISimulate's engine stack does it: a global cursor rotates over workers and each worker has its
 * own rank cursor, so requests go to W0r0, W1r0, ..., W0r1, W1r1, ... O(1) per request.
 */
public final class RoundRobinRouter implements Router {
    private final RouterContext context;
    private final int[] rankCursor;
    private final boolean[] draining;
    private int drainingCount;
    private int workerCursor;

    /** Creates the router. */
    public RoundRobinRouter(RouterContext context) {
        this.context = context;
        this.rankCursor = new int[context.workers()];
        this.draining = new boolean[context.workers()];
    }

    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        int g = route(request);
        if (g / context.ranksPerWorker() == excludedWorker) {
            g = route(request); // the next worker in the rotation
        }
        return g;
    }

    @Override
    public void onWorkerDraining(int worker) {
        if (!draining[worker]) {
            draining[worker] = true;
            drainingCount++;
        }
    }

    @Override
    public int route(Request request) {
        int w = workerCursor;
        workerCursor = w + 1 == context.workers() ? 0 : w + 1;
        if (draining[w] && drainingCount < context.workers()) {
            return route(request); // skip a draining worker (terminates: some worker is not draining)
        }
        int r = rankCursor[w];
        rankCursor[w] = r + 1 == context.ranksPerWorker() ? 0 : r + 1;
        return context.globalIndex(w, r);
    }
}
