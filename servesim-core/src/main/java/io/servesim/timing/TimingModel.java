package io.servesim.timing;

/** Predicts the duration of one engine step from its batch composition. Implementations are pure functions. */
public interface TimingModel {
    /** Duration of a step, in nanoseconds, at least 1 for a non-empty batch. */
    long stepNanos(StepBatch batch);
}
