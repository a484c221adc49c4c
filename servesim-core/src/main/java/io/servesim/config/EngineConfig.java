package io.servesim.config;

/**
 * Engine (vLLM v1) settings shared by every rank. {@code max_model_len} null means "what the KV pool can hold"
 * (usable blocks x block size); an explicit value larger than that is rejected, as vLLM refuses to start.
 */
public record EngineConfig(SchedulerConfig scheduler, KvCacheConfig kvCache, Integer maxModelLen, KvcrConfig kvcr) {
    /** Validates sections and the context limit against the KV pool. */
    public EngineConfig {
        Check.present("scheduler", scheduler);
        Check.present("kv_cache", kvCache);
        Check.present("kvcr", kvcr);
        if (kvcr.enabled() && !kvCache.prefixCaching()) {
            throw new ConfigException("kvcr.enabled", "KVCR pulls need kv_cache.prefix_caching: true");
        }
        if (maxModelLen != null) {
            Check.atLeast("max_model_len", maxModelLen, 2);
            long capacity = (long) (kvCache.numGpuBlocks() - 1) * kvCache.blockSize();
            if (maxModelLen > capacity) {
                throw new ConfigException(
                        "max_model_len",
                        "is " + maxModelLen
                                + " tokens but one rank's KV pool holds only " + capacity
                                + " ((num_gpu_blocks - 1) x block_size); vLLM refuses to start in this case");
            }
        }
        int effective = effectiveMaxModelLen(kvCache, maxModelLen);
        if (!scheduler.enableChunkedPrefill() && scheduler.maxNumBatchedTokens() < effective) {
            // vLLM's SchedulerConfig rejects this too: without chunking a prompt must fit one step's budget.
            throw new ConfigException(
                    "scheduler.max_num_batched_tokens",
                    "is " + scheduler.maxNumBatchedTokens()
                            + " but must be >= max_model_len (" + effective
                            + ") when enable_chunked_prefill is false; set engine.max_model_len or raise the budget");
        }
    }

    /** The effective context limit in tokens. */
    public int effectiveMaxModelLen() {
        return effectiveMaxModelLen(kvCache, maxModelLen);
    }

    private static int effectiveMaxModelLen(KvCacheConfig kvCache, Integer maxModelLen) {
        long capacity = (long) (kvCache.numGpuBlocks() - 1) * kvCache.blockSize();
        return maxModelLen != null ? maxModelLen : (int) Math.min(Integer.MAX_VALUE, capacity);
    }
}
