package io.servesim.engine;

import io.servesim.config.EngineConfig;

/**
 * The per-rank scheduler knobs, flattened from {@link EngineConfig}.
 *
 * @param maxNumSeqs running requests at most
 * @param maxNumBatchedTokens token budget per step
 * @param longPrefillTokenThreshold per-request cap per step (0 = off)
 * @param chunkedPrefill whether prefills may be split across steps
 * @param maxModelLen context limit in tokens
 * @param blockSize tokens per KV block
 * @param numGpuBlocks blocks per rank including the null block
 * @param prefixCaching whether prefix caching is on
 * @param asyncScheduling whether vLLM's async scheduling (output placeholders, two batches in flight) is on
 */
public record SchedulerSettings(
        int maxNumSeqs,
        int maxNumBatchedTokens,
        int longPrefillTokenThreshold,
        boolean chunkedPrefill,
        int maxModelLen,
        int blockSize,
        int numGpuBlocks,
        boolean prefixCaching,
        boolean asyncScheduling) {
    /** Flattens an engine config with a resolved pool size and context limit (see timing.Deployment). */
    public static SchedulerSettings of(EngineConfig c, int numGpuBlocks, int maxModelLen) {
        return new SchedulerSettings(
                c.scheduler().maxNumSeqs(),
                c.scheduler().maxNumBatchedTokens(),
                c.scheduler().longPrefillTokenThreshold(),
                c.scheduler().enableChunkedPrefill(),
                maxModelLen,
                c.kvCache().blockSize(),
                numGpuBlocks,
                c.kvCache().prefixCaching(),
                c.scheduler().asyncScheduling());
    }
}
