package io.servesim.timing;

import io.servesim.config.ConfigException;
import io.servesim.config.TimingConfig;

/**
 * A transformer's architecture, as far as step time and KV size depend on it (dense or mixture-of-experts, GQA,
 * SwiGLU MLPs). Parameter counts are derived from the shapes, not copied: see {@link #totalParams()}.
 *
 * @param name preset name or config path
 * @param architecture the Hugging Face architecture class (e.g. {@code LlamaForCausalLM})
 * @param hiddenSize model width
 * @param numLayers decoder layers
 * @param numHeads query heads
 * @param numKvHeads key/value heads (GQA)
 * @param headDim per-head width
 * @param intermediateSize dense MLP width (for Mixtral and gpt-oss: each expert's width)
 * @param vocabSize vocabulary
 * @param numExperts routed experts per layer (0 for a dense model)
 * @param expertsPerToken experts each token is routed to (0 for a dense model)
 * @param expertIntermediateSize each expert's MLP width (0 for a dense model)
 * @param tiedEmbeddings whether the LM head shares the input embedding
 * @param slidingWindow attention window of the sliding-window layers (0: none); gpt-oss alternates full and
 *     sliding layers
 * @param maxPositionEmbeddings the model's context limit
 * @param checkpointExpertDtype the routed experts' element type in the published checkpoint when it differs from the
 *     other weights' (gpt-oss: MXFP4, from {@code quantization_config.quant_method}), else null
 * @param checkpointDtype the linear layers' element type in the published checkpoint when its {@code
 *     quantization_config} states FP8 ({@code quant_method: fp8}: {@code fp8_block} with a {@code weight_block_size},
 *     else per-tensor {@code fp8}), else null: vLLM serves such a checkpoint in its own type ({@link #weightDtype})
 * @param sharedExperts experts every token passes through besides its routed ones, in each MoE layer (DeepSeek's
 *     {@code n_shared_experts}, each {@code expertIntermediateSize} wide; 0 for the others)
 * @param denseLayers leading layers with a dense MLP of {@code intermediateSize} in a MoE model (DeepSeek's {@code
 *     first_k_dense_replace}; 0 for the others)
 * @param mla multi-head latent attention's shapes (DeepSeek-V2/V3), or null for multi-head/grouped-query attention
 * @param attentionChunkSize the chunk of Llama 4's chunked local attention in tokens: a query in a chunked layer
 *     attends only to the keys of its own {@code attentionChunkSize}-aligned chunk (0: none)
 * @param chunkedLayers how many layers attend that way (Llama 4: the three of every four with rotary positions; 0
 *     for the others)
 * @param checkpointKvDtype the KV cache's element type a ModelOpt checkpoint states ({@code kv_cache_quant_algo} or
 *     {@code kv_cache_scheme}: FP8), else null ({@link #kvDtype})
 */
public record ModelSpec(
        String name,
        String architecture,
        int hiddenSize,
        int numLayers,
        int numHeads,
        int numKvHeads,
        int headDim,
        int intermediateSize,
        int vocabSize,
        int numExperts,
        int expertsPerToken,
        int expertIntermediateSize,
        boolean tiedEmbeddings,
        int slidingWindow,
        int maxPositionEmbeddings,
        TimingConfig.Dtype checkpointExpertDtype,
        TimingConfig.Dtype checkpointDtype,
        int sharedExperts,
        int denseLayers,
        Mla mla,
        int attentionChunkSize,
        int chunkedLayers,
        TimingConfig.Dtype checkpointKvDtype) {

    /**
     * Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, §2.1): keys and values are cached as one compressed
     * latent of {@code kvLoraRank} plus a shared rotary key of {@code qkRopeHeadDim} per token and layer, whatever
     * the head count, and up-projected per head ({@code kv_b_proj}) when attended.
     *
     * @param qLoraRank the query's low-rank width (0: a full-rank query projection, as in DeepSeek-V2-Lite)
     * @param kvLoraRank the cached latent's width
     * @param qkNopeHeadDim each head's query/key width without rotary position
     * @param qkRopeHeadDim the rotary part's width (one key shared by every head)
     * @param vHeadDim each head's value width
     */
    public record Mla(int qLoraRank, int kvLoraRank, int qkNopeHeadDim, int qkRopeHeadDim, int vHeadDim) {
        /** The elements cached per token and layer: the latent and the rotary key. */
        public int cachedWidth() {
            return kvLoraRank + qkRopeHeadDim;
        }
    }

    /**
     * The element type vLLM serves the linear layers in: the checkpoint's when its config states FP8 (vLLM reads
     * {@code quantization_config} and loads the FP8 weights as they are; there is no BF16 to run), else {@code stated}
     * ({@code timing.weight_dtype}).
     */
    public TimingConfig.Dtype weightDtype(TimingConfig.Dtype stated) {
        return checkpointDtype != null ? checkpointDtype : stated;
    }

    /** This model with another checkpoint type for its linear layers (null: none, {@link #weightDtype} the stated). */
    public ModelSpec withCheckpointDtype(TimingConfig.Dtype dtype) {
        return withCheckpointDtypes(checkpointExpertDtype, dtype);
    }

    /**
     * This model with other checkpoint types for its routed experts and its linear layers (null: none, the stated
     * types apply).
     */
    public ModelSpec withCheckpointDtypes(TimingConfig.Dtype experts, TimingConfig.Dtype dtype) {
        return withCheckpointDtypes(experts, dtype, checkpointKvDtype);
    }

    /**
     * This model with other checkpoint types for its routed experts, its linear layers and its KV cache (null: none,
     * the stated types apply).
     */
    public ModelSpec withCheckpointDtypes(TimingConfig.Dtype experts, TimingConfig.Dtype dtype, TimingConfig.Dtype kv) {
        return new ModelSpec(
                name,
                architecture,
                hiddenSize,
                numLayers,
                numHeads,
                numKvHeads,
                headDim,
                intermediateSize,
                vocabSize,
                numExperts,
                expertsPerToken,
                expertIntermediateSize,
                tiedEmbeddings,
                slidingWindow,
                maxPositionEmbeddings,
                experts,
                dtype,
                sharedExperts,
                denseLayers,
                mla,
                attentionChunkSize,
                chunkedLayers,
                kv);
    }

    /**
     * The KV cache's element type: the checkpoint's when its ModelOpt config states one, else {@code stated} ({@code
     * timing.kv_dtype}). vLLM's {@code --kv-cache-dtype auto} (its default) takes a ModelOpt checkpoint's {@code
     * kv_cache_quant_algo} ({@code resolve_kv_cache_dtype_string}, {@code vllm/utils/torch_utils.py} at 28be48fa9), so
     * NVIDIA's FP8 and NVFP4 releases that calibrated FP8 KV scales store their KV cache in FP8.
     */
    public TimingConfig.Dtype kvDtype(TimingConfig.Dtype stated) {
        return checkpointKvDtype != null ? checkpointKvDtype : stated;
    }

    /** Bytes per KV element as {@link #kvDtype} resolves it. */
    public int kvBytes(TimingConfig.Dtype stated) {
        return (int) kvDtype(stated).bytes();
    }

    /**
     * The routed experts' element type: {@code stated} ({@code timing.expert_dtype}) if set, else the checkpoint's,
     * else the other weights' ({@link #weightDtype} of {@code weights}).
     *
     * @throws ConfigException naming {@code timing.expert_dtype} when one is stated for a dense model
     */
    public TimingConfig.Dtype expertDtype(TimingConfig.Dtype stated, TimingConfig.Dtype weights) {
        if (stated != null && !moe()) {
            throw new ConfigException(
                    "timing.expert_dtype", "model " + name + " has no experts (set it only for a MoE model)");
        }
        if (stated != null) {
            return stated;
        }
        return checkpointExpertDtype != null ? checkpointExpertDtype : weightDtype(weights);
    }

    /**
     * Whether each layer all-reduces over the TP group for its query/key norm: MiniMax-M2 normalizes q and k over all
     * heads, not per head, so vLLM's attention ({@code minimax_m2.py}, {@code MiniMaxText01RMSNormTP.forward_qk} at
     * the pinned commit 28be48fa9) sums the ranks' partial variances, one FP32 value each for q and k per token, with
     * one extra all-reduce per layer when TP is above 1.
     */
    public boolean qkNormAllReduce() {
        return architecture.equals("MiniMaxM2ForCausalLM");
    }

    /** Whether the model routes tokens to experts. */
    public boolean moe() {
        return numExperts > 0;
    }

    /** Attention projection parameters of one layer: Q, K, V and O (biases and norms are negligible). */
    public long attentionParamsPerLayer() {
        if (mla != null) {
            // q_a and q_b (or one q_proj without a query rank), kv_a (latent and rotary key), kv_b (per-head key and
            // value up-projections), o (DeepSeek-V3's config.json shapes; vLLM's deepseek_v2.py)
            long qk = (long) mla.qkNopeHeadDim() + mla.qkRopeHeadDim();
            long q = mla.qLoraRank() > 0
                    ? (long) hiddenSize * mla.qLoraRank() + (long) mla.qLoraRank() * numHeads * qk
                    : (long) hiddenSize * numHeads * qk;
            long kvA = (long) hiddenSize * mla.cachedWidth();
            long kvB = (long) mla.kvLoraRank() * numHeads * (mla.qkNopeHeadDim() + mla.vHeadDim());
            long o = (long) numHeads * mla.vHeadDim() * hiddenSize;
            return q + kvA + kvB + o;
        }
        long q = (long) hiddenSize * numHeads * headDim;
        long kv = 2L * hiddenSize * numKvHeads * headDim;
        long o = (long) numHeads * headDim * hiddenSize;
        return q + kv + o;
    }

    /**
     * Attention parameters of one layer that every TP rank holds whole: latent attention's down-projections
     * ({@code q_a_proj} and {@code kv_a_proj_with_mqa}, replicated linear layers in vLLM's {@code deepseek_v2.py}); 0
     * for the others.
     */
    public long replicatedParamsPerLayer() {
        if (mla == null) {
            return 0;
        }
        return (long) hiddenSize * (mla.qLoraRank() + mla.cachedWidth());
    }

    /** Parameters of one expert (gate, up and down projections). */
    public long paramsPerExpert() {
        return 3L * hiddenSize * expertIntermediateSize;
    }

    /** Layers with experts: all of a MoE model's but its {@link #denseLayers} (0 for a dense model). */
    public int moeLayers() {
        return moe() ? numLayers - denseLayers : 0;
    }

    /** MLP parameters of one layer: the dense SwiGLU, or every expert plus the router (a MoE layer). */
    public long mlpParamsPerLayer() {
        if (!moe()) {
            return 3L * hiddenSize * intermediateSize;
        }
        return (numExperts + sharedExperts) * paramsPerExpert() + (long) hiddenSize * numExperts;
    }

    /** MLP parameters of all layers: the MoE layers' and the {@link #denseLayers}' dense SwiGLUs. */
    private long mlpParams() {
        return numLayers == moeLayers() || !moe()
                ? numLayers * mlpParamsPerLayer()
                : moeLayers() * mlpParamsPerLayer() + denseLayers * 3L * hiddenSize * intermediateSize;
    }

    /** Embedding parameters (input embedding, plus the LM head unless tied). */
    public long embeddingParams() {
        return (long) vocabSize * hiddenSize * (tiedEmbeddings ? 1 : 2);
    }

    /** All parameters. */
    public long totalParams() {
        return numLayers * attentionParamsPerLayer() + mlpParams() + embeddingParams();
    }

    /** Parameters a token passes through (with every embedding counted, as MoE model cards count "active"). */
    public long activeParams() {
        return numLayers * attentionParamsPerLayer() + activeMlpParams() + embeddingParams();
    }

    /**
     * MLP parameters one token uses in one MoE layer (its routed experts, the shared ones and the router), or in one
     * layer of a dense model.
     */
    public long activeMlpParamsPerLayer() {
        if (!moe()) {
            return mlpParamsPerLayer();
        }
        return (expertsPerToken + sharedExperts) * paramsPerExpert() + (long) hiddenSize * numExperts;
    }

    /** MLP parameters one token uses over all layers. */
    private long activeMlpParams() {
        return moeLayers() * activeMlpParamsPerLayer()
                + (moe() ? denseLayers * 3L * hiddenSize * intermediateSize : 0)
                + (moe() ? 0 : numLayers * activeMlpParamsPerLayer());
    }

    /**
     * Matrix-multiply parameters per token (2 FLOPs each): every layer's attention projections and active MLP plus
     * the LM head; the input embedding is a lookup.
     */
    public long linearParamsPerToken() {
        return numLayers * attentionParamsPerLayer() + activeMlpParams() + (long) vocabSize * hiddenSize;
    }

    /** Parameters of the routed experts (every MoE layer's). */
    public long routedExpertParams() {
        return moe() ? (long) moeLayers() * numExperts * paramsPerExpert() : 0;
    }

    /** Weights that every step reads regardless of routing: all but the routed experts. */
    public long nonExpertParams() {
        return totalParams() - routedExpertParams();
    }

    /**
     * KV-cache bytes per token on one GPU: {@code 2 × layers × ceil(kv_heads / tp) × head_dim × dtype bytes}; with
     * more TP ranks than KV heads the heads are replicated (vllm-semantics.md §2.6). Latent attention caches {@code
     * layers × (kv_lora_rank + qk_rope_head_dim) × dtype bytes} on every rank.
     */
    public long kvBytesPerToken(int kvDtypeBytes, int tensorParallel) {
        if (mla != null) {
            // one latent and rotary key per token and layer, whatever the heads: every TP rank caches it whole
            // (vLLM's MLA attention backends; SGLang's and TensorRT-LLM's MLA KV pools alike)
            return (long) numLayers * mla.cachedWidth() * kvDtypeBytes;
        }
        int headsPerRank = Math.max(1, numKvHeads / Math.max(1, tensorParallel));
        return 2L * numLayers * headsPerRank * headDim * kvDtypeBytes;
    }
}
