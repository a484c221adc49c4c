package io.servesim.engine;

import io.servesim.metrics.LatencyDistribution;

/**
 * Cluster-wide totals of what the ranks' {@link VllmScheduler}s did, counted by the schedulers alone (through the
 * package-private methods) and read by the run's summary and time series.
 */
public final class SchedulerCounters {
    private long steps;
    private long scheduledTokens;
    private long promptTokensComputed;
    private long generatedTokens;
    private long preemptions;
    private long admissions;
    private long admissionTokens;
    private long admissionHitTokens;
    private long firstAdmissionTokens;
    private long firstAdmissionHitTokens;
    private long firstAdmissionG2Tokens;
    private long firstAdmissionRemoteTokens;
    private final LatencyDistribution itlNanos = new LatencyDistribution();

    /** Counters whose ITL distribution is exact up to {@code exactSamples} distinct values. */
    public SchedulerCounters(long exactSamples) {
        itlNanos.exactLimit(exactSamples);
    }

    /** A step scheduled {@code tokens} tokens, {@code promptTokens} of them prompt (prefill or recompute). */
    void stepScheduled(int tokens, long promptTokens) {
        scheduledTokens += tokens;
        if (tokens > 0) {
            steps++;
            promptTokensComputed += promptTokens;
        }
    }

    /** A request was admitted knowing {@code tokens} tokens, {@code hitTokens} of them already in KV. */
    void admitted(int tokens, int hitTokens) {
        admissions++;
        admissionTokens += tokens;
        admissionHitTokens += hitTokens;
    }

    /** A request's first admission: its prompt, the prefix hit, and of the hit what G2 and KVCR brought. */
    void firstAdmission(int promptTokens, int hitTokens, int g2Tokens, int remoteTokens) {
        firstAdmissionTokens += promptTokens;
        firstAdmissionHitTokens += hitTokens;
        firstAdmissionG2Tokens += g2Tokens;
        firstAdmissionRemoteTokens += remoteTokens;
    }

    /** An output token was sampled. */
    void tokenSampled() {
        generatedTokens++;
    }

    /** {@code n} tokens were sampled. */
    void tokensSampled(int n) {
        generatedTokens += n;
    }

    /** {@code count} inter-token gaps of {@code gapNanos} each. */
    void gaps(long gapNanos, long count) {
        itlNanos.record(gapNanos, count);
    }

    /** A request was preempted. */
    void preempted() {
        preemptions++;
    }

    /** Engine steps that ran (scheduled at least one token), over all ranks. */
    public long steps() {
        return steps;
    }

    /** Tokens scheduled over all steps. */
    public long scheduledTokens() {
        return scheduledTokens;
    }

    /** Prompt tokens computed (prefill chunks and recomputation after preemption). */
    public long promptTokensComputed() {
        return promptTokensComputed;
    }

    /** Output tokens sampled. */
    public long generatedTokens() {
        return generatedTokens;
    }

    /** Preemptions. */
    public long preemptions() {
        return preemptions;
    }

    /** Admissions from the waiting queue (first admissions and resumptions). */
    public long admissions() {
        return admissions;
    }

    /** Tokens known at each admission, summed. */
    public long admissionTokens() {
        return admissionTokens;
    }

    /** Prefix-cache hit tokens at each admission, summed. */
    public long admissionHitTokens() {
        return admissionHitTokens;
    }

    /** Prompt tokens at first admissions, summed. */
    public long firstAdmissionTokens() {
        return firstAdmissionTokens;
    }

    /** Hit tokens at first admissions (G1, G2 and remote), summed. */
    public long firstAdmissionHitTokens() {
        return firstAdmissionHitTokens;
    }

    /** Prompt tokens loaded from G2 at first admissions, summed. */
    public long firstAdmissionG2Tokens() {
        return firstAdmissionG2Tokens;
    }

    /** Prompt tokens pulled from another worker at first admissions, summed. */
    public long firstAdmissionRemoteTokens() {
        return firstAdmissionRemoteTokens;
    }

    /** Inter-token gaps of all requests, pooled (ns). */
    public LatencyDistribution itlNanos() {
        return itlNanos;
    }
}
