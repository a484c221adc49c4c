package io.servesim.engine;

import io.servesim.config.ConfigException;
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
 * @param reserveFullIsl whether vLLM admits a waiting request only if its whole sequence's blocks fit
 *     ({@code scheduler_reserve_full_isl}; read by the vLLM scheduler only)
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
        boolean asyncScheduling,
        boolean reserveFullIsl) {
    /**
     * Flattens an engine config with a resolved pool size, context limit and vLLM batch limits (see
     * timing.Deployment: the stated ones or the GPU's defaults), refusing what vLLM refuses at start-up (see {@link
     * #checkAsVllmDoes}).
     */
    public static SchedulerSettings of(
            EngineConfig c, int numGpuBlocks, int maxModelLen, int maxNumSeqs, int maxNumBatchedTokens) {
        return of(c, numGpuBlocks, maxModelLen, maxNumSeqs, maxNumBatchedTokens, 1);
    }

    /**
     * The same for a rank of a worker with {@code attentionDp} attention-DP ranks (SGLang divides a stated {@code
     * max_running_requests} among them: {@link #sglangMaxRunning}).
     */
    public static SchedulerSettings of(
            EngineConfig c,
            int numGpuBlocks,
            int maxModelLen,
            int maxNumSeqs,
            int maxNumBatchedTokens,
            int attentionDp) {
        if (c.kind() == io.servesim.config.EngineKind.TRTLLM) {
            // TRT-LLM's limits in vLLM's slots: max_batch_size requests and max_num_tokens tokens per iteration
            return new SchedulerSettings(
                    c.trtllm().maxBatchSize(),
                    c.trtllm().maxNumTokens(),
                    0,
                    c.trtllm().enableChunkedPrefill(),
                    maxModelLen,
                    c.kvCache().blockSize(),
                    numGpuBlocks,
                    c.kvCache().prefixCaching(),
                    c.scheduler().asyncScheduling(), // the engine's overlap scheduler
                    false);
        }
        if (c.kind() == io.servesim.config.EngineKind.SGLANG) {
            io.servesim.config.SglangConfig g = c.sglang();
            int maxRunning = sglangMaxRunning(
                    g.maxRunningRequests(),
                    (long) (numGpuBlocks - 1) * c.kvCache().blockSize(),
                    maxModelLen,
                    attentionDp);
            // the most tokens one step can take: a decode batch of every running request, or a prefill batch
            // (max_prefill_tokens, or a single request's chunk, or without chunking a whole prompt)
            long bound = Math.max(
                    maxRunning, Math.max(g.maxPrefillTokens(), g.chunkTokens() > 0 ? g.chunkTokens() : maxModelLen));
            return new SchedulerSettings(
                    maxRunning,
                    (int) Math.min(Integer.MAX_VALUE, bound),
                    0,
                    g.chunkTokens() > 0,
                    maxModelLen,
                    c.kvCache().blockSize(),
                    numGpuBlocks,
                    c.kvCache().prefixCaching(),
                    c.scheduler().asyncScheduling(), // the engine's overlap scheduler
                    false);
        }
        SchedulerSettings s = new SchedulerSettings(
                maxNumSeqs,
                maxNumBatchedTokens,
                c.scheduler().longPrefillTokenThreshold(),
                c.scheduler().enableChunkedPrefill(),
                maxModelLen,
                c.kvCache().blockSize(),
                numGpuBlocks,
                c.kvCache().prefixCaching(),
                c.scheduler().asyncScheduling(),
                c.scheduler().reserveFullIsl());
        s.checkAsVllmDoes();
        return s;
    }

    /**
     * SGLang's {@code max_running_requests} when not stated, from the pool's tokens: {@code min(max_total_num_tokens //
     * 2, req_to_token_pool.size)}, the request pool holding {@code clamp(max_total_num_tokens / context_len x 512,
     * 2048, 4096)} requests (sgl-project/sglang {@code model_runner_kv_cache_mixin.py} {@code init_memory} @ 001ccef0
     * and the model runner's {@code max_running_requests}); a stated value is the whole instance's, divided among its
     * attention-DP ranks ({@code max_running_requests // dp_size} with {@code enable_dp_attention}; the request pool is
     * then sized to it). The context length is the rank's {@code max_model_len}.
     */
    public static int sglangMaxRunning(Integer stated, long poolTokens, int contextLen, int attentionDp) {
        if (stated != null) {
            return Math.max(1, stated / Math.max(1, attentionDp));
        }
        long requestPool = Math.min(Math.max((long) ((double) poolTokens / contextLen * 512), 2048), 4096);
        return (int) Math.max(1, Math.min(poolTokens / 2, requestPool));
    }

    /**
     * The start-up checks vLLM makes on these settings (pinned commit 9aaf83ef), each refused with vLLM's reason:
     *
     * <ul>
     *   <li>{@code SchedulerConfig.verify_max_model_len} ({@code vllm/config/scheduler.py}): with chunked prefill off,
     *       {@code max_num_batched_tokens} below {@code max_model_len} would cap every sequence at the budget;
     *       {@code max_num_batched_tokens} below {@code max_num_seqs} is refused outright.
     * </ul>
     *
     * (The KV pool holding one {@code max_model_len} request, vLLM's {@code check_enough_kv_cache_memory}, is checked
     * where the context limit is resolved, in {@code timing.Deployment}.)
     *
     * @throws ConfigException naming the key
     */
    public void checkAsVllmDoes() {
        if (!chunkedPrefill && maxNumBatchedTokens < maxModelLen) {
            throw new ConfigException(
                    "engine.scheduler.max_num_batched_tokens",
                    maxNumBatchedTokens + " is smaller than max_model_len " + maxModelLen
                            + " with chunked prefill off, which vLLM refuses (no sequence could exceed the budget):"
                            + " raise max_num_batched_tokens, lower engine.max_model_len or enable chunked prefill");
        }
        if (maxNumBatchedTokens < maxNumSeqs) {
            throw new ConfigException(
                    "engine.scheduler.max_num_batched_tokens",
                    maxNumBatchedTokens + " is smaller than max_num_seqs " + maxNumSeqs
                            + ", which vLLM refuses: it must be at least max_num_seqs");
        }
    }
}
