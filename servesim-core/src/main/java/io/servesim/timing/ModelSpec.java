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
        TimingConfig.Dtype checkpointDtype) {

    /**
     * The element type vLLM serves the linear layers in: the checkpoint's when its config states FP8 (vLLM reads
     * {@code quantization_config} and loads the FP8 weights as they are; there is no BF16 to run), else {@code stated}
     * ({@code timing.weight_dtype}).
     */
    public TimingConfig.Dtype weightDtype(TimingConfig.Dtype stated) {
        return checkpointDtype != null ? checkpointDtype : stated;
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
        long q = (long) hiddenSize * numHeads * headDim;
        long kv = 2L * hiddenSize * numKvHeads * headDim;
        long o = (long) numHeads * headDim * hiddenSize;
        return q + kv + o;
    }

    /** Parameters of one expert (gate, up and down projections). */
    public long paramsPerExpert() {
        return 3L * hiddenSize * expertIntermediateSize;
    }

    /** MLP parameters of one layer: the dense SwiGLU, or every expert plus the router. */
    public long mlpParamsPerLayer() {
        if (!moe()) {
            return 3L * hiddenSize * intermediateSize;
        }
        return numExperts * paramsPerExpert() + (long) hiddenSize * numExperts;
    }

    /** Embedding parameters (input embedding, plus the LM head unless tied). */
    public long embeddingParams() {
        return (long) vocabSize * hiddenSize * (tiedEmbeddings ? 1 : 2);
    }

    /** All parameters. */
    public long totalParams() {
        return numLayers * (attentionParamsPerLayer() + mlpParamsPerLayer()) + embeddingParams();
    }

    /** Parameters a token passes through (with every embedding counted, as MoE model cards count "active"). */
    public long activeParams() {
        return numLayers * (attentionParamsPerLayer() + activeMlpParamsPerLayer()) + embeddingParams();
    }

    /** MLP parameters one token uses in one layer: the dense MLP, or its experts plus the router. */
    public long activeMlpParamsPerLayer() {
        if (!moe()) {
            return mlpParamsPerLayer();
        }
        return expertsPerToken * paramsPerExpert() + (long) hiddenSize * numExperts;
    }

    /**
     * Matrix-multiply parameters per token (2 FLOPs each): every layer's attention projections and active MLP plus
     * the LM head; the input embedding is a lookup.
     */
    public long linearParamsPerToken() {
        return numLayers * (attentionParamsPerLayer() + activeMlpParamsPerLayer()) + (long) vocabSize * hiddenSize;
    }

    /** Weights that every step reads regardless of routing: all but the experts. */
    public long nonExpertParams() {
        return totalParams() - (moe() ? (long) numLayers * numExperts * paramsPerExpert() : 0);
    }

    /**
     * KV-cache bytes per token on one GPU: {@code 2 × layers × ceil(kv_heads / tp) × head_dim × dtype bytes}; with
     * more TP ranks than KV heads the heads are replicated (vllm-semantics.md §2.6).
     */
    public long kvBytesPerToken(int kvDtypeBytes, int tensorParallel) {
        int headsPerRank = Math.max(1, numKvHeads / Math.max(1, tensorParallel));
        return 2L * numLayers * headsPerRank * headDim * kvDtypeBytes;
    }
}
