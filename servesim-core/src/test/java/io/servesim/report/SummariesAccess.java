package io.servesim.report;

/** Test access to package-private summary helpers. */
public final class SummariesAccess {
    private SummariesAccess() {}

    /** {@link Summaries#imbalance}. */
    public static double imbalance(long[] busy) {
        return Summaries.imbalance(busy);
    }
}
