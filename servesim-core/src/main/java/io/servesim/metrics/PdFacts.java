package io.servesim.metrics;

/**
 * A request's disaggregated prefill/decode facts (present on every record of a disaggregated run, absent otherwise).
 * Times are virtual nanoseconds; -1 marks "never happened".
 *
 * @param prefillWorker the worker that ran its prompt (its decode worker for a local prefill), or -1
 * @param localPrefill whether its prompt ran on its decode worker (conditional disaggregation)
 * @param prefillDoneNanos when its prefill sampled the one token and its request went on to the decode worker, or -1
 * @param transferStartNanos when the decode worker staged the pull of its KV, or -1
 * @param transferEndNanos when the pulled bytes landed, or -1
 * @param transferBytes bytes charged by its transfer (0 without one)
 * @param transferTokens prompt tokens its transfer moved
 * @param reprefilled whether its decode worker recomputed the prompt because the prefill worker failed
 */
public record PdFacts(
        int prefillWorker,
        boolean localPrefill,
        long prefillDoneNanos,
        long transferStartNanos,
        long transferEndNanos,
        long transferBytes,
        int transferTokens,
        boolean reprefilled) {
    /** A request of a disaggregated run that reached no prefill. */
    public static final PdFacts NONE = new PdFacts(-1, false, -1, -1, -1, 0, 0, false);

    /** Transfer time (ns): landing − staging, or -1 without a landed transfer. */
    public long transferNanos() {
        return transferEndNanos < 0 ? -1 : transferEndNanos - transferStartNanos;
    }
}
