package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Engine settings shared by every rank: which engine ({@code kind}, only {@code vllm}) and its settings.
 * {@code max_model_len} null means "what the KV pool can hold" (usable blocks x block size); an explicit value larger
 * than that is rejected, as vLLM refuses to start.
 *
 * @param kind the engine; left out of written configs while it is {@code vllm}, so configs recorded before the key
 *     existed are unchanged (absent or null means {@code vllm}, so a written config binds back to an equal one)
 * @param scheduler the scheduler knobs
 * @param kvCache the KV cache
 * @param maxModelLen the context limit, or null
 * @param kvcr cross-worker KV pulls
 * @param trtllm TensorRT-LLM's scheduler settings, present exactly with {@code kind: trtllm} (left out of written
 *     configs otherwise)
 * @param sglang SGLang's scheduler settings, present exactly with {@code kind: sglang} (left out of written configs
 *     otherwise)
 */
public record EngineConfig(
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = DefaultKind.class)
        EngineKind kind,

        SchedulerConfig scheduler,
        KvCacheConfig kvCache,
        Integer maxModelLen,
        KvcrConfig kvcr,
        @JsonInclude(JsonInclude.Include.NON_NULL) TrtllmConfig trtllm,
        @JsonInclude(JsonInclude.Include.NON_NULL) SglangConfig sglang) {
    /** Validates sections and the context limit against the KV pool. */
    public EngineConfig {
        kind = kind == null ? EngineKind.VLLM : kind;
        Check.present("scheduler", scheduler);
        Check.present("kv_cache", kvCache);
        Check.present("kvcr", kvcr);
        if ((kind == EngineKind.TRTLLM) != (trtllm != null)) {
            throw new ConfigException("trtllm", "is read exactly with engine.kind: trtllm");
        }
        if ((kind == EngineKind.SGLANG) != (sglang != null)) {
            throw new ConfigException("sglang", "is read exactly with engine.kind: sglang");
        }
        if (kind == EngineKind.SGLANG) {
            checkChunkAgainstPage(sglang.chunkedPrefillSize(), kvCache.blockSize());
            if (kvcr.enabled()) {
                throw new ConfigException("kvcr.enabled", "KVCR pulls are modelled for engine.kind: vllm only");
            }
            if (kvCache.hostOffload().enabled()
                    && kvCache.hostOffload().scope() != HostOffloadConfig.Scope.RANK_LOCAL) {
                // HiCache's host tier belongs to one instance; its L3 storage backends are not modelled
                throw new ConfigException(
                        "kv_cache.host_offload.scope",
                        "is cluster_shared, but SGLang's HiCache host tier is per instance: use rank_local");
            }
        }
        if (kind == EngineKind.TRTLLM) {
            if (trtllm.enableChunkedPrefill() && trtllm.maxNumTokens() < kvCache.blockSize()) {
                // a trimmed chunk is rounded down to the chunk unit (tokens_per_block): it would always be 0
                throw new ConfigException(
                        "trtllm.max_num_tokens",
                        "is " + trtllm.maxNumTokens() + " but chunked context needs at least one block of "
                                + kvCache.blockSize() + " tokens (chunks are multiples of kv_cache.block_size)");
            }
            if (kvcr.enabled()) {
                throw new ConfigException("kvcr.enabled", "KVCR pulls are modelled for engine.kind: vllm only");
            }
            if (kvCache.hostOffload().enabled()
                    && kvCache.hostOffload().scope() != HostOffloadConfig.Scope.RANK_LOCAL) {
                // TRT-LLM's secondary pool (host_cache_size) belongs to one executor
                throw new ConfigException(
                        "kv_cache.host_offload.scope",
                        "is cluster_shared, but TensorRT-LLM's host KV pool is per instance: use rank_local");
            }
        }
        if (kvcr.enabled() && !kvCache.prefixCaching()) {
            throw new ConfigException("kvcr.enabled", "KVCR pulls need kv_cache.prefix_caching: true");
        }
        if (maxModelLen != null) {
            Check.atLeast("max_model_len", maxModelLen, 2);
        }
        if (kvCache.numGpuBlocks() != null) {
            checkCapacity(kvCache.numGpuBlocks(), kvCache.blockSize(), maxModelLen, "max_model_len");
        }
        long effective = maxModelLen != null
                ? maxModelLen
                : kvCache.numGpuBlocks() != null ? (long) (kvCache.numGpuBlocks() - 1) * kvCache.blockSize() : 0;
        if (kind == EngineKind.VLLM
                && !scheduler.enableChunkedPrefill()
                && effective > 0
                && scheduler.maxNumBatchedTokens() != null // else the GPU's default, checked in timing.Deployment
                && scheduler.maxNumBatchedTokens() < effective) {
            // vLLM's SchedulerConfig rejects this too: without chunking a prompt must fit one step's budget.
            throw new ConfigException(
                    "scheduler.max_num_batched_tokens",
                    "is " + scheduler.maxNumBatchedTokens()
                            + " but must be >= max_model_len (" + effective
                            + ") when enable_chunked_prefill is false; set engine.max_model_len or raise the budget");
        }
    }

    /**
     * Refuses an SGLang chunk (stated, or resolved for the GPU) shorter than one page: a truncated chunk is
     * page-aligned, so it would always be empty.
     */
    public static void checkChunkAgainstPage(Integer chunkedPrefillSize, int pageSize) {
        if (chunkedPrefillSize != null && chunkedPrefillSize > 0 && chunkedPrefillSize < pageSize) {
            throw new ConfigException(
                    "sglang.chunked_prefill_size",
                    "is " + chunkedPrefillSize + " but a chunk is a multiple of the page size (" + pageSize
                            + ", kv_cache.block_size): use at least one page, or 0 for none");
        }
    }

    /** These settings with SGLang's replaced by {@code resolved} (SGLang's defaults for the GPU filled in). */
    public EngineConfig withSglang(SglangConfig resolved) {
        return new EngineConfig(kind, scheduler, kvCache, maxModelLen, kvcr, trtllm, resolved);
    }

    /**
     * Rejects a {@code max_model_len} one rank's pool of {@code numGpuBlocks} cannot hold, as vLLM does.
     *
     * @param field the path reported in the error
     */
    public static void checkCapacity(int numGpuBlocks, int blockSize, Integer maxModelLen, String field) {
        long capacity = (long) (numGpuBlocks - 1) * blockSize;
        if (maxModelLen != null && maxModelLen > capacity) {
            throw new ConfigException(
                    field,
                    "is " + maxModelLen
                            + " tokens but one rank's KV pool holds only " + capacity
                            + " ((num_gpu_blocks - 1) x block_size); vLLM refuses to start in this case");
        }
    }

    /** The effective context limit in tokens with the configured (or default) pool and no model limit. */
    public int effectiveMaxModelLen() {
        return effectiveMaxModelLen(
                kvCache.numGpuBlocks() != null ? kvCache.numGpuBlocks() : KvCacheConfig.DEFAULT_NUM_GPU_BLOCKS, null);
    }

    /**
     * The effective context limit: the configured {@code max_model_len}, else the smaller of what the pool holds
     * and the model's own limit ({@code modelMaxLen}, null if unknown).
     */
    public int effectiveMaxModelLen(int numGpuBlocks, Integer modelMaxLen) {
        if (maxModelLen != null) {
            return maxModelLen;
        }
        long capacity = (long) (numGpuBlocks - 1) * kvCache.blockSize();
        if (modelMaxLen != null && modelMaxLen > 0) {
            capacity = Math.min(capacity, modelMaxLen);
        }
        return (int) Math.min(Integer.MAX_VALUE, capacity);
    }

    /** Jackson's value filter for {@code kind}: equal to (so leaves out) the default engine. */
    static final class DefaultKind {
        @Override
        public boolean equals(Object value) {
            return value == EngineKind.VLLM;
        }

        @Override
        public int hashCode() {
            return 1;
        }
    }
}
