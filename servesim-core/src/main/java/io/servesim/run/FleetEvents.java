package io.servesim.run;

import io.servesim.config.ClusterEventConfig;
import io.servesim.engine.EngineRank;
import io.servesim.engine.KvcrRegistry;
import io.servesim.engine.Sequence;
import io.servesim.engine.Worker;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;
import java.util.List;

/**
 * Scheduled fleet changes ({@code cluster.events}): a worker that drains finishes what it has and gets nothing new;
 * a worker that fails is gone, and every request it held starts over elsewhere.
 */
final class FleetEvents {
    private final Cluster cluster;
    private final LoadTracker load;
    private final Dispatcher dispatcher;
    private long workersDrained;
    private long workersFailed;
    private long restarts;
    private int pending;

    FleetEvents(Cluster cluster, LoadTracker load, Dispatcher dispatcher) {
        this.cluster = cluster;
        this.load = load;
        this.dispatcher = dispatcher;
    }

    /** Schedules every configured event (each at its instant, in the WORKER_READY phase, in config order). */
    void schedule(EventQueue queue, List<ClusterEventConfig> events) {
        for (ClusterEventConfig e : events) {
            int worker = e.worker();
            boolean fail = e.action() == ClusterEventConfig.Action.FAIL;
            pending++;
            queue.schedule(
                    Math.round(e.atMs() * 1e6),
                    Phase.WORKER_READY,
                    worker,
                    (k, p) -> {
                        pending--;
                        if (fail) {
                            fail(worker);
                        } else {
                            drain(worker);
                        }
                    },
                    0,
                    worker);
        }
    }

    /** Fleet events scheduled and not yet applied. */
    int pending() {
        return pending;
    }

    private void drain(int worker) {
        workersDrained++;
        cluster.markDraining(worker);
        cluster.groupOf(worker).onWorkerDraining(worker); // nothing new is routed there; it finishes what it has
        KvcrRegistry kvcr = cluster.kvcr();
        if (kvcr != null) {
            kvcr.onWorkerDraining(worker);
        }
    }

    /**
     * A worker fails: nothing is routed to it again; pulls from it abort and pulls to it become source-only; every
     * request it held restarts from scratch on another worker (see {@link Dispatcher#restart}).
     */
    private void fail(int worker) {
        if (!cluster.markFailed(worker)) {
            return;
        }
        workersFailed++;
        cluster.groupOf(worker).onWorkerDraining(worker);
        KvcrRegistry kvcr = cluster.kvcr();
        if (kvcr != null) {
            kvcr.onWorkerFailed(worker);
        }
        if (cluster.pd() != null) {
            cluster.pd().onWorkerFailed(worker); // transfers from it abort, transfers to it are cancelled
        }
        ObjectArrayList<Sequence> orphans = new ObjectArrayList<>();
        Worker w = cluster.worker(worker);
        for (int r = 0; r < w.numRanks(); r++) {
            EngineRank rank = w.rank(r);
            rank.fail(orphans);
            load.failed(rank); // its queues are empty now: totals drop its requests
        }
        // a request whose client gave up was recorded as timed out then: nobody sends it again (vLLM would have aborted
        // it at its next step, which the failure pre-empted)
        orphans.removeIf(Sequence::clientGone);
        restarts += orphans.size();
        dispatcher.restart(orphans);
    }

    /** Workers that started draining. */
    long workersDrained() {
        return workersDrained;
    }

    /** Workers that failed. */
    long workersFailed() {
        return workersFailed;
    }

    /** Requests restarted because their worker failed. */
    long restarts() {
        return restarts;
    }
}
