package io.servesim.config;

import java.util.List;

/**
 * vLLM v1 scheduler knobs, per rank. Defaults (reference.yaml) are vLLM's API-server defaults for GPUs with at least
 * 70 GiB that are not A100 (H100/H200): max_num_seqs 1024, max_num_batched_tokens 8192
 * ({@code vllm/engine/arg_utils.py get_batch_defaults}).
 */
public record SchedulerConfig(
        int maxNumSeqs,
        int maxNumBatchedTokens,
        int longPrefillTokenThreshold,
        boolean enableChunkedPrefill,
        String policy) {
    /** Scheduling policies implemented. */
    public static final List<String> POLICIES = List.of("fcfs");

    /** Validates the knobs. */
    public SchedulerConfig {
        Check.atLeast("max_num_seqs", maxNumSeqs, 1);
        Check.atLeast("max_num_batched_tokens", maxNumBatchedTokens, 1);
        Check.atLeast("long_prefill_token_threshold", longPrefillTokenThreshold, 0);
        Check.oneOf("policy", policy, POLICIES);
    }
}
