package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * vLLM v1 scheduler knobs, per rank. {@code max_num_seqs} and {@code max_num_batched_tokens} left null take vLLM's
 * API-server defaults for {@code timing.gpu} ({@code vllm/engine/arg_utils.py get_batch_defaults}, resolved in {@code
 * timing.Deployment}): 1024 and 8192 on GPUs with at least 70 GiB that are not A100 (and without a GPU), else 256 and
 * 2048.
 *
 * <p>{@code async_scheduling}: vLLM's {@code AsyncScheduler} driven by the engine core's batch queue (two batches in
 * flight, {@code EngineCore.step_with_batch_queue}): the next step is scheduled while the current one runs, with
 * output placeholders for tokens not yet sampled (vllm-oracle ASYNC.md).
 *
 * <p>{@code reserve_full_isl}: vLLM's {@code scheduler_reserve_full_isl} (vllm-project/vllm#37307, first released in
 * v0.19.0, on by default): a waiting request is admitted only if the blocks for its whole known sequence (prompt plus
 * any generated tokens, at most {@code max_model_len}) fit, not just those of its first chunk.
 */
public record SchedulerConfig(
        Integer maxNumSeqs,
        Integer maxNumBatchedTokens,
        int longPrefillTokenThreshold,
        boolean enableChunkedPrefill,
        Policy policy,
        boolean asyncScheduling,
        boolean reserveFullIsl) {
    /** Scheduling policies implemented ({@code engine.scheduler.policy}). */
    public enum Policy implements Named {
        /** First come, first served. */
        FCFS("fcfs", "first come, first served");

        private final String configName;
        private final String description;

        Policy(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Policy of(String name) {
            return Named.parse(Policy.class, name);
        }

        @Override
        public String configName() {
            return configName;
        }

        @Override
        public String description() {
            return description;
        }
    }

    /** Validates the knobs. */
    public SchedulerConfig {
        if (maxNumSeqs != null) {
            Check.atLeast("max_num_seqs", maxNumSeqs, 1);
        }
        if (maxNumBatchedTokens != null) {
            Check.atLeast("max_num_batched_tokens", maxNumBatchedTokens, 1);
        }
        Check.atLeast("long_prefill_token_threshold", longPrefillTokenThreshold, 0);
        Check.present("policy", policy);
    }
}
