package io.servesim.sweep;

import java.util.List;

/** Runs a batch of independent sweep points; results come back in the order of {@code points}. */
public interface SweepEngine extends AutoCloseable {
    /**
     * Evaluates every point with {@link Sweeps#evaluate}.
     *
     * @param failFast stop at the first failed point (its result says why) instead of running the rest
     */
    List<PointResult> run(SweepSpec spec, List<RunSpec> points, boolean failFast);

    /** Host time spent inside simulations so far, summed over threads/tasks (for reports, never in results); -1 if unknown. */
    default long simulationNanos() {
        return -1;
    }

    /**
     * Writes engine-specific outputs (Spark: results.parquet) next to the CSV files and returns their names (of
     * {@code RunDirectory.SWEEP}'s outputs); none by default.
     */
    default List<String> writeExtras(SweepSpec spec, Sweeps.Outcome outcome, java.nio.file.Path dir) {
        return List.of();
    }

    @Override
    default void close() {}
}
