package io.servesim.timing;

/**
 * Predicts one engine step from its batch composition, split into its GPU part (the forward pass) and its CPU part
 * (the engine core's scheduling, input preparation, sampling and output processing). The synchronous engine loop
 * pays both in turn; the async loop overlaps the CPU part of the next step with the GPU part of the current one.
 * Implementations are pure functions.
 */
public interface TimingModel {
    /** GPU (forward-pass) time of a step, in nanoseconds, at least 1 for a non-empty batch. */
    long stepNanos(StepBatch batch);

    /**
     * CPU time of a step on the engine core, in nanoseconds (0 when the model folds it into {@link #stepNanos}:
     * fitted and measured step times include it).
     */
    default long cpuNanos(StepBatch batch) {
        return 0;
    }

    /**
     * The GPU part split into named terms that sum to it (before rounding), for explaining a price ({@code servesim
     * step}); a model without parts gives one term, {@code step}.
     */
    default java.util.List<StepTerm> stepTerms(StepBatch batch) {
        return java.util.List.of(new StepTerm("step", stepNanos(batch)));
    }

    /** One named part of a step's GPU time, in nanoseconds. */
    record StepTerm(String name, double nanos) {}
}
