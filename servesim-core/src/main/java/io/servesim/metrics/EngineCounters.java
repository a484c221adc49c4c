package io.servesim.metrics;

/** Cluster-wide engine counters, incremented by the ranks as things happen. */
public final class EngineCounters {
    /** Prompt tokens computed (prefill chunks and recomputation after preemption), over all ranks. */
    public long promptTokensComputed;
    /** Output tokens sampled, over all ranks. */
    public long generatedTokens;
    /** Engine steps run (over all ranks). */
    public long steps;
    /** Tokens scheduled over all steps. */
    public long scheduledTokens;
    /** Preemptions. */
    public long preemptions;
    /** Admissions from the waiting queue (first admissions and resumptions). */
    public long admissions;
    /** Tokens known (prompt + generated) at each admission, summed. */
    public long admissionTokens;
    /** Prefix-cache hit tokens at each admission, summed. */
    public long admissionHitTokens;
    /** Prompt tokens at first admissions, summed. */
    public long firstAdmissionTokens;
    /** Prefix-cache hit tokens at first admissions, summed. */
    public long firstAdmissionHitTokens;
    /** Prompt tokens loaded from G2 at first admissions, summed. */
    public long firstAdmissionG2Tokens;
    /** Bytes copied GPU → host (G2 stores). */
    public long g2StoreBytes;
    /** Bytes copied host → GPU (G2 loads). */
    public long g2LoadBytes;
    /** G2 loads started. */
    public long g2Loads;
    /** KVCR pulls staged. */
    public long kvcrStaged;
    /** KVCR pulls whose bytes landed at the destination. */
    public long kvcrLanded;
    /** KVCR pulls consumed by their request's admission. */
    public long kvcrCompleted;
    /** Landed pulls whose request released the blocks before consuming them (tiny-pool safety release). */
    public long kvcrDetached;
    /** Pulls not staged because the hinted source's worker was draining. */
    public long kvcrRejectedDraining;
    /** Pulls not staged because the hinted source's worker had failed. */
    public long kvcrRejectedFailed;
    /** Pulls not staged because {@code decision: cost} found recomputing faster. */
    public long kvcrRejectedCost;
    /** Pulls cancelled because their source worker failed (the destination recomputes). */
    public long kvcrAborted;
    /** Pulls whose destination worker failed while their bytes were in flight. */
    public long kvcrSourceOnly;
    /** Pulled blocks served from the source's G2 pool (not its GPU cache). */
    public long kvcrSourceG2Blocks;
    /** Staging-to-first-byte time of every landed pull (ns). */
    public final LatencyDistribution kvcrParkedNanos = new LatencyDistribution();
    /** The most pulls that were moving at once (filled in at the end of a run). */
    public long kvcrMovingPeak;
    /** Ranks woken by the KVCR registry, summed over ranks (filled in at the end of a run). */
    public long kvcrRegistryWakeups;
    /** Workers that failed. */
    public long workersFailed;
    /** Requests restarted from scratch because their worker failed. */
    public long restarts;
    /** Workers that started draining. */
    public long workersDrained;
    /** Bytes pulled across workers. */
    public long kvcrBytes;
    /** Prompt tokens pulled from another worker at first admissions, summed. */
    public long firstAdmissionRemoteTokens;
    /** Staging-to-landing time of every pull (ns). */
    public final LatencyDistribution kvcrPullNanos = new LatencyDistribution();
    /** G2 blocks evicted (filled in at the end of a run). */
    public long g2Evictions;
    /** Cached blocks evicted from GPU pools. */
    public long evictions;
    /** Inter-token gaps of all requests, pooled (ns). */
    public final LatencyDistribution itlNanos = new LatencyDistribution();
}
