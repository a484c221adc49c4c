package io.servesim.config;

import java.util.List;

/**
 * A rank's GPU KV cache: block size (tokens), total blocks as vLLM reports them (including its null block; null =
 * derived from timing.model and timing.gpu, else {@link #DEFAULT_NUM_GPU_BLOCKS}), prefix caching, KV bytes per
 * token (for copies; null = from timing.model, else {@link #DEFAULT_BYTES_PER_TOKEN}), the optional G2 tier, and the
 * sliding window of vLLM's hybrid KV cache ({@code hybrid_window}: null = the model's, 0 = off, as vLLM's {@code
 * --disable-hybrid-kv-cache-manager}; docs/config.md).
 */
public record KvCacheConfig(
        int blockSize,
        Integer numGpuBlocks,
        boolean prefixCaching,
        Long bytesPerToken,
        HostOffloadConfig hostOffload,
        Integer hybridWindow) {
    /** Blocks per rank without a model and GPU to derive them from (about Llama-3.1-8B on one H100). */
    public static final int DEFAULT_NUM_GPU_BLOCKS = 27_500;

    /** KV bytes per token without a model (Llama-3.1-8B bf16: 2 × 32 layers × 8 heads × 128 × 2 B). */
    public static final long DEFAULT_BYTES_PER_TOKEN = 131_072;

    /** Block sizes vLLM accepts ({@code vllm/config/cache.py}). */
    public static final List<Integer> BLOCK_SIZES = List.of(1, 8, 16, 32, 64, 128, 256);

    /** Validates block size and count. */
    public KvCacheConfig {
        if (!BLOCK_SIZES.contains(blockSize)) {
            throw new ConfigException("block_size", "must be one of " + BLOCK_SIZES + ", got " + blockSize);
        }
        if (numGpuBlocks != null) {
            Check.atLeast("num_gpu_blocks", numGpuBlocks, 2);
        }
        if (bytesPerToken != null) {
            Check.atLeast("bytes_per_token", bytesPerToken, 1);
        }
        if (hybridWindow != null && hybridWindow != 0) {
            Check.atLeast("hybrid_window", hybridWindow, 2);
        }
        Check.present("host_offload", hostOffload);
        if (hostOffload.enabled() && !prefixCaching) {
            throw new ConfigException("host_offload.num_host_blocks", "host offload needs prefix_caching: true");
        }
    }
}
