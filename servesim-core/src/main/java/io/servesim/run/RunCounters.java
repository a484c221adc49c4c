package io.servesim.run;

import io.servesim.engine.KvcrRegistry;
import io.servesim.engine.OffloadCounters;
import io.servesim.engine.SchedulerCounters;
import io.servesim.metrics.LatencyDistribution;

/**
 * A run's engine totals at one instant, gathered from their owners (the schedulers' {@link SchedulerCounters}, the
 * G2 links' {@link OffloadCounters}, the {@link KvcrRegistry}, the fleet events, the KV pools): read-only.
 *
 * @param promptTokensComputed prompt tokens computed (prefill chunks and recomputation), over all ranks
 * @param generatedTokens output tokens sampled
 * @param steps engine steps that ran
 * @param scheduledTokens tokens scheduled over all steps
 * @param preemptions preemptions
 * @param admissions admissions from the waiting queue (first admissions and resumptions)
 * @param admissionTokens tokens known at each admission, summed
 * @param admissionHitTokens prefix-cache hit tokens at each admission, summed
 * @param firstAdmissionTokens prompt tokens at first admissions, summed
 * @param firstAdmissionHitTokens hit tokens at first admissions, summed
 * @param firstAdmissionG2Tokens prompt tokens loaded from G2 at first admissions
 * @param firstAdmissionRemoteTokens prompt tokens pulled from another worker at first admissions
 * @param evictions cached blocks evicted from GPU pools
 * @param g2StoreBytes bytes copied GPU → host
 * @param g2LoadBytes bytes copied host → GPU
 * @param g2Loads G2 loads started
 * @param g2Evictions G2 blocks evicted
 * @param kvcrStaged KVCR pulls staged
 * @param kvcrLanded pulls whose bytes landed
 * @param kvcrCompleted pulls consumed by their request's admission
 * @param kvcrDetached landed pulls released before consumption
 * @param kvcrRejectedDraining pulls not staged: source draining
 * @param kvcrRejectedFailed pulls not staged: source failed
 * @param kvcrRejectedCost pulls not staged: recomputing cheaper
 * @param kvcrAborted pulls cancelled because their source failed
 * @param kvcrSourceOnly pulls whose destination failed in flight
 * @param kvcrSourceG2Blocks pulled blocks served from a source's G2 pool
 * @param kvcrBytes bytes pulled
 * @param kvcrMovingPeak the most pulls moving at once
 * @param kvcrRegistryWakeups ranks woken by the KVCR registry, summed
 * @param workersDrained workers that started draining
 * @param workersFailed workers that failed
 * @param restarts requests restarted because their worker failed
 * @param itlNanos inter-token gaps of all requests, pooled (ns)
 * @param kvcrPullNanos staging-to-landing time of every pull (ns)
 * @param kvcrParkedNanos staging-to-first-byte time of every landed pull (ns)
 */
public record RunCounters(
        long promptTokensComputed,
        long generatedTokens,
        long steps,
        long scheduledTokens,
        long preemptions,
        long admissions,
        long admissionTokens,
        long admissionHitTokens,
        long firstAdmissionTokens,
        long firstAdmissionHitTokens,
        long firstAdmissionG2Tokens,
        long firstAdmissionRemoteTokens,
        long evictions,
        long g2StoreBytes,
        long g2LoadBytes,
        long g2Loads,
        long g2Evictions,
        long kvcrStaged,
        long kvcrLanded,
        long kvcrCompleted,
        long kvcrDetached,
        long kvcrRejectedDraining,
        long kvcrRejectedFailed,
        long kvcrRejectedCost,
        long kvcrAborted,
        long kvcrSourceOnly,
        long kvcrSourceG2Blocks,
        long kvcrBytes,
        long kvcrMovingPeak,
        long kvcrRegistryWakeups,
        long workersDrained,
        long workersFailed,
        long restarts,
        LatencyDistribution itlNanos,
        LatencyDistribution kvcrPullNanos,
        LatencyDistribution kvcrParkedNanos) {}
