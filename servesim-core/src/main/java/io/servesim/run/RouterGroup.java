package io.servesim.run;

import io.servesim.router.LoadIndex;
import io.servesim.router.Router;
import io.servesim.workload.Request;

/**
 * A router over a contiguous range of workers: the whole fleet in an aggregated cluster, or one pool (prefill or
 * decode) of a disaggregated one. The router and its load index see local indices (worker 0 is the group's first);
 * the group translates to and from the cluster's global rank indices.
 */
final class RouterGroup {
    private final Router router;
    private final LoadIndex load;
    private final int firstWorker;
    private final int workers;
    private final int firstRank;
    private final int ranksPerWorker;
    private int acceptingWorkers;

    RouterGroup(Router router, LoadIndex load, int firstWorker, int workers, int ranksPerWorker, int firstRank) {
        this.router = router;
        this.load = load;
        this.firstWorker = firstWorker;
        this.workers = workers;
        this.ranksPerWorker = ranksPerWorker;
        this.firstRank = firstRank;
        this.acceptingWorkers = workers;
    }

    /** Attention-DP ranks per worker of the group. */
    int ranksPerWorker() {
        return ranksPerWorker;
    }

    /** The router (local indices). */
    Router router() {
        return router;
    }

    /** Its load index (local rank indices). */
    LoadIndex load() {
        return load;
    }

    /** The group's first worker (global id). */
    int firstWorker() {
        return firstWorker;
    }

    /** Workers in the group. */
    int workers() {
        return workers;
    }

    /** Whether global worker {@code w} is in the group. */
    boolean contains(int w) {
        return w >= firstWorker && w < firstWorker + workers;
    }

    /** Workers of the group that take new work. */
    int acceptingWorkers() {
        return acceptingWorkers;
    }

    /** One of its workers stopped taking new work (drain or failure, counted once per worker by the cluster). */
    void workerStopped() {
        acceptingWorkers--;
    }

    /** The global rank index the router picks for {@code request}. */
    int route(Request request, long[] promptHashes) {
        return firstRank + router.route(request, promptHashes);
    }

    /** The global rank index the router picks on any worker of the group but global worker {@code excluded}. */
    int routeExcluding(Request request, long[] promptHashes, int excluded) {
        return firstRank + router.routeExcluding(request, promptHashes, excluded - firstWorker);
    }

    /** Global worker {@code w} drains or failed: the router sends it nothing new. */
    void onWorkerDraining(int w) {
        router.onWorkerDraining(w - firstWorker);
    }

    /** Global rank {@code g}'s load changed. */
    void rankLoad(int g, int waiting, int running, long pendingPromptTokens, int usedBlocks) {
        int local = g - firstRank;
        if (router.usesLoad()) {
            load.update(local, waiting, running);
        }
        router.onRankLoad(local, waiting, running, pendingPromptTokens, usedBlocks);
    }

    /** Global rank {@code g} failed: its load is zero for the router. */
    void rankFailed(int g) {
        if (router.usesLoad()) {
            load.update(g - firstRank, 0, 0);
        }
    }

    /** Global rank index of the group's local rank {@code local}. */
    int globalRank(int local) {
        return firstRank + local;
    }
}
