package io.servesim.engine;

import io.servesim.timing.StepBatch;

/** A test hook that sees every step right after scheduling and right after outputs are applied. */
public interface StepObserver {
    /** Called after {@code schedule()} built the batch, before time advances. */
    void afterSchedule(EngineRank rank, StepBatch batch);

    /** Called after the step's outputs were applied. */
    default void afterOutputs(EngineRank rank) {}
}
