package io.servesim.engine;

/** Decides when ranks step: each rank on its own, or all ranks of a worker together behind a barrier. */
public interface StepDriver {
    /** A rank received work; the driver arms a step if none is pending or running. */
    void wake(EngineRank rank);
}
