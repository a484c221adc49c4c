package io.servesim.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs points on a fixed pool of {@code parallel} threads, one simulation per task (a simulation is
 * single-threaded and shares nothing). Results are placed by index, so the order never depends on which thread
 * finished first.
 */
public final class LocalEngine implements SweepEngine {
    private final ExecutorService pool;
    private final Progress progress;

    /** Told how many points of the current batch are finished (called from worker threads). */
    @FunctionalInterface
    public interface Progress {
        /** {@code done} of {@code total} points of the batch have finished. */
        void update(int done, int total);
    }

    private final java.util.concurrent.atomic.AtomicLong simNanos = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Creates the engine.
     *
     * @param parallel threads (simulations at once)
     * @param progress told how far the current batch is, from worker threads (may be a no-op)
     */
    public LocalEngine(int parallel, Progress progress) {
        this.pool = Executors.newFixedThreadPool(Math.max(1, parallel), r -> {
            Thread t = new Thread(r, "servesim-sweep");
            t.setDaemon(true);
            return t;
        });
        this.progress = progress;
    }

    @Override
    public List<PointResult> run(SweepSpec spec, List<RunSpec> points, boolean failFast) {
        PointResult[] out = new PointResult[points.size()];
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger done = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>(points.size());
        for (int i = 0; i < points.size(); i++) {
            int idx = i;
            futures.add(pool.submit(() -> {
                RunSpec p = points.get(idx);
                if (stop.get()) {
                    out[idx] = PointResult.failed(p, "not run: an earlier point failed (--fail-fast)");
                } else {
                    long t0 = System.nanoTime();
                    out[idx] = Sweeps.evaluate(spec, p);
                    simNanos.addAndGet(System.nanoTime() - t0);
                    if (failFast && out[idx].error() != null) {
                        stop.set(true);
                    }
                }
                progress.update(done.incrementAndGet(), points.size());
            }));
        }
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("sweep interrupted", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("sweep task failed: " + e.getCause(), e.getCause());
            }
        }
        return List.of(out);
    }

    @Override
    public long simulationNanos() {
        return simNanos.get();
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
