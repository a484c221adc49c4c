package io.servesim.run;

import io.servesim.metrics.RequestMetrics;
import io.servesim.timing.Deployment;

/**
 * One pool of a heterogeneous fleet after a run: which workers it was, what it resolved to, and the requests that
 * ended on it.
 *
 * @param name the pool's name
 * @param firstWorker its first worker's index (its workers are consecutive)
 * @param workers its worker count
 * @param deployment what its engine and timing resolved to
 * @param metrics statistics of the requests that ended on its workers
 * @param requestsRouted requests routed to its workers (restarts count again)
 */
public record PoolResult(
        String name,
        int firstWorker,
        int workers,
        Deployment deployment,
        RequestMetrics metrics,
        long requestsRouted) {}
