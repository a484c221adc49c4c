package io.servesim.config;

import java.util.List;

/** A rank's GPU KV cache: block size (tokens), total blocks as vLLM reports them (including its null block). */
public record KvCacheConfig(int blockSize, int numGpuBlocks, boolean prefixCaching) {
    /** Block sizes vLLM accepts ({@code vllm/config/cache.py}). */
    public static final List<Integer> BLOCK_SIZES = List.of(1, 8, 16, 32, 64, 128, 256);

    /** Validates block size and count. */
    public KvCacheConfig {
        if (!BLOCK_SIZES.contains(blockSize)) {
            throw new ConfigException("block_size", "must be one of " + BLOCK_SIZES + ", got " + blockSize);
        }
        Check.atLeast("num_gpu_blocks", numGpuBlocks, 2);
    }
}
