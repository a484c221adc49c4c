package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * TensorRT-LLM's scheduler settings ({@code engine.trtllm}, read only with {@code engine.kind: trtllm}; defaults are
 * TRT-LLM's PyTorch LLM API ones, {@code tensorrt_llm/llmapi/llm_args.py}). The KV block size is {@code
 * engine.kv_cache.block_size} (TRT-LLM's {@code tokens_per_block}, 32 by default there) and block reuse is {@code
 * engine.kv_cache.prefix_caching} ({@code enable_block_reuse}); vLLM's {@code engine.scheduler} keys are not read.
 *
 * @param capacitySchedulerPolicy which requests may run, and what they reserve
 * @param maxBatchSize requests scheduled per iteration at most
 * @param maxNumTokens tokens per iteration at most (and the longest context chunk)
 * @param enableChunkedPrefill whether context requests may be split across iterations (chunked context)
 * @param contextChunkingPolicy how the token budget is shared among context chunks when they do not all fit
 * @param enablePartialReuse whether a cached block whose first tokens match a prompt's next block is reused in part
 * @param copyOnPartialReuse whether a partly matching block that other requests hold, or that other stored blocks
 *     follow, is copied for reuse; false: only an unreferenced leaf block is a candidate (reused in place, as it
 *     always is)
 * @param freeGpuMemoryFraction {@code kv_cache_config.free_gpu_memory_fraction}: the share of the memory left after
 *     the weights and the start-up profiling run that the KV cache takes ({@code timing.Deployment#trtllmCapacity})
 */
public record TrtllmConfig(
        Policy capacitySchedulerPolicy,
        int maxBatchSize,
        int maxNumTokens,
        boolean enableChunkedPrefill,
        ChunkingPolicy contextChunkingPolicy,
        boolean enablePartialReuse,
        boolean copyOnPartialReuse,
        double freeGpuMemoryFraction) {
    /** Validates the settings. */
    public TrtllmConfig {
        Check.present("capacity_scheduler_policy", capacitySchedulerPolicy);
        Check.present("context_chunking_policy", contextChunkingPolicy);
        Check.atLeast("max_batch_size", maxBatchSize, 1);
        Check.atLeast("max_num_tokens", maxNumTokens, 1);
        if (!(freeGpuMemoryFraction > 0 && freeGpuMemoryFraction <= 1)) {
            throw new ConfigException(
                    "free_gpu_memory_fraction",
                    "must be in (0, 1] (a share of the free GPU memory), got " + freeGpuMemoryFraction);
        }
    }

    /** TRT-LLM's {@code ContextChunkingPolicy}. */
    public enum ChunkingPolicy implements Named {
        /** In order, each context takes what it needs of what is left. */
        FIRST_COME_FIRST_SERVED(
                "first_come_first_served",
                "in order, each context takes the rest of its prompt or what budget is left"),
        /** Rounds of one chunk unit per context. */
        EQUAL_PROGRESS("equal_progress", "rounds of one chunk unit per context until the budget is spent");

        private final String configName;
        private final String description;

        ChunkingPolicy(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static ChunkingPolicy of(String name) {
            return Named.parse(ChunkingPolicy.class, name);
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

    /** TRT-LLM's {@code CapacitySchedulerPolicy}. */
    public enum Policy implements Named {
        /** Reserve every request's blocks to completion; never pause (TRT-LLM's default). */
        GUARANTEED_NO_EVICT(
                "guaranteed_no_evict", "admit a request only if its blocks to completion fit; never pause one"),
        /** Charge only the next step's blocks; pause the latest started request when they do not fit. */
        MAX_UTILIZATION(
                "max_utilization", "admit on the next step's blocks; pause the latest started request when short"),
        /** As guaranteed_no_evict, but new contexts only when nothing is generating. */
        STATIC_BATCH("static_batch", "start new requests only when no request is generating");

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
}
