package io.servesim.config;

import java.util.List;

/**
 * A rank's GPU KV cache: block size (tokens), total blocks as vLLM reports them (including its null block), prefix
 * caching, KV bytes per token (for copies; default Llama-3.1-8B bf16: 131,072), and the optional G2 host tier.
 */
public record KvCacheConfig(
        int blockSize, int numGpuBlocks, boolean prefixCaching, long bytesPerToken, HostOffloadConfig hostOffload) {
    /** Block sizes vLLM accepts ({@code vllm/config/cache.py}). */
    public static final List<Integer> BLOCK_SIZES = List.of(1, 8, 16, 32, 64, 128, 256);

    /** Validates block size and count. */
    public KvCacheConfig {
        if (!BLOCK_SIZES.contains(blockSize)) {
            throw new ConfigException("block_size", "must be one of " + BLOCK_SIZES + ", got " + blockSize);
        }
        Check.atLeast("num_gpu_blocks", numGpuBlocks, 2);
        Check.atLeast("bytes_per_token", bytesPerToken, 1);
        Check.present("host_offload", hostOffload);
        if (hostOffload.enabled() && !prefixCaching) {
            throw new ConfigException("host_offload.num_host_blocks", "host offload needs prefix_caching: true");
        }
    }
}
