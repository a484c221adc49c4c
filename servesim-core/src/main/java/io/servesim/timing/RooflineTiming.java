package io.servesim.timing;

import io.servesim.config.AttentionKernel;
import io.servesim.config.RooflineConfig;
import io.servesim.config.TimingConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Step time from first principles: the batch's work on one GPU of a TP group, each operation bounded by compute
 * or memory, whichever is slower, softened at the knee (the roofline model; Williams et al., CACM 2009, applied to LLM serving as in
 * vllm-semantics.md §7.6), plus the fixed costs a forward pass pays regardless of its work. The terms, each a
 * physical quantity over a measured GPU rate (docs/timing.md; the efficiencies and overheads are fitted once on the
 * measured corpus, docs/accuracy.md):
 *
 * <ul>
 *   <li><b>Dense linear layers</b>: {@code 2 × dense linear params per token × new tokens / TP} FLOPs — except the LM
 *       head, which vLLM applies only at each scheduled request's last position ({@code logits_indices}), so its
 *       FLOPs count sequences, not tokens — against reading every non-expert weight once per step, each matrix at
 *       the rate vLLM's GEMMs measurably stream a matrix of its shape ({@link GpuSpec.StreamingShapes}).
 *   <li><b>Experts</b> (MoE): the experts a token is routed to, FLOPs as above at the GPU's measured fused-MoE
 *       rate ({@code GpuSpec.Achieved.moeTflops}, not {@code mfu} of the dense GEMM rate: vLLM's grouped expert
 *       kernels are measured whole, and {@code mfu} carries the ragged-shape losses of prefill steps that
 *       the MoE measurement already contains), against reading the experts the batch actually hits,
 *       {@code E × (1 − (1 − k/E)^tokens)} per layer at the weight-streaming rate; {@code moe_efficiency} scales
 *       both. On a GPU whose fused MoE was measured for the experts' element type (AIConfigurator's tables: MXFP4,
 *       BF16, block-scaled FP8), the kernel's fixed time per layer call plus the touched bytes at its measured rate
 *       instead of {@code mbu} of the streaming rate.
 *   <li><b>Attention</b>: {@code 4 × layers × q width} FLOPs per (new token, context token) pair — a prefill chunk
 *       of n tokens after c cached ones attends {@code n × (c + (n + 1) / 2)} pairs (causal), a decode
 *       {@code c + 1} — at the GPU's measured prefill-attention rate ({@code GpuSpec.Achieved.attentionTflops}:
 *       vLLM's flash-attention kernels reach 0.62–0.75 of the dense GEMM rate on long prompts, more than {@code mfu}
 *       of it), against reading each request's KV once ({@code KV bytes/token × (c + n)}) at {@code kv_mbu} of the
 *       rate vLLM's decode attention measurably reads KV at on the GPU, overlapping with that layer's measured
 *       work per (sequence, KV head) pair, plus its measured fixed time per call ({@link GpuSpec.DecodeAttention}:
 *       AIConfigurator's generation_attention tables; 11.5 µs and 27.1 ns per layer on the H100). Sliding-window
 *       layers (gpt-oss: every other layer) see at most the window.
 *   <li><b>Collectives</b>: with TP, two all-reduces per layer of {@code tokens × hidden} BF16 elements. Where vLLM's
 *       all-reduce was measured on the GPU for the group size ({@link GpuSpec.CollectiveTable}: AIConfigurator's tables,
 *       which show PCIe groups of 4 and 8 up to 15 times slower than a ring over the link's bandwidth
 *       predicts), each costs its measured latency at that size divided by {@code collective_efficiency} (inside a
 *       forward pass the all-reduce reaches about half its isolated rate: a corpus fit, docs/accuracy.md item 16)
 *       plus {@code collective_overhead_us} — over PCIe divided by {@code pcie_collective_efficiency} instead (1: no
 *       corpus run measures the in-pass slowdown there) — from the table of the deployment's vLLM version where the
 *       versions' tables differ ({@code timing.vllm_version}; on the RTX PRO 6000 vLLM 0.19's takes 2–4 times vLLM
 *       0.24's); elsewhere the link model: ring cost {@code 2 (TP − 1) / TP × bytes} over the GPU link plus
 *       {@code log2(TP)} link latencies (NVLink or PCIe). Where vLLM fuses the all-reduce with the RMSNorm after it
 *       (from 0.16 on Hopper and Blackwell data centre, steps up to its size limit: {@link Specs#fusedAllReduce}), the
 *       hidden states' all-reduces cost the fused kernel's measured latency instead, with the same efficiency.
 *       With expert parallelism over DP ranks, an all-gather and a reduce-scatter of the
 *       gathered hidden states per MoE layer over the DP group (NCCL's measured latencies, else the link model).
 *   <li><b>Per-sequence attention overhead</b>: {@code attention_overhead_us} per sequence in the batch per decoder
 *       layer (the paged kernel's per-sequence work beyond streaming its KV: block-table walk, split-KV reduction),
 *       which makes a step's cost grow with its batch even when contexts are short.
 *   <li><b>Per-layer overhead</b>: {@code layer_overhead_us} per decoder layer per step (norms, rotary, activation,
 *       attention metadata and launch gaps: small kernels whose time does not scale with the GEMMs).
 *   <li><b>CPU part</b> ({@link #cpuNanos}): {@code step_overhead_us} per step plus {@code per_sequence_overhead_us}
 *       per request in the batch (the engine core's scheduling, input preparation, sampling and output processing).
 * </ul>
 *
 * Every compute/memory operation needs {@code C = FLOPs / (achieved FLOP/s × mfu)} (experts and attention: their own
 * measured rates) and {@code M = bytes / (achieved
 * bandwidth × mbu)} and takes {@code (C^p + M^p)^(1/p)} with p = {@code knee_exponent} (the classic {@code max(C, M)}
 * as p grows; {@link #roof}), where the achieved rates are what vLLM's own GEMM kernels measurably reach on the GPU
 * ({@link GpuSpec.Achieved}: AIConfigurator's per-GPU tables, or the datasheet scaled by the measured GPUs' mean
 * ratio), so the fitted efficiencies carry the model's inefficiency and the GPU tables carry the GPU's.
 */
public final class RooflineTiming implements TimingModel {
    private final ModelSpec model;
    private final double denseFlopsPerToken;
    private final double lmHeadFlopsPerSequence;
    /** {@link #linearTime} of decode-only steps by batch size (0: not computed yet; a real one is never 0). */
    private final double[] linearByBatch = new double[1025];

    /**
     * {@link #attentionTime} of decode-only steps by batch size (below {@link #ATTENTION_MEMO_BATCH}) and KV tokens
     * (below {@link #ATTENTION_MEMO}), rows allocated when first used (0: not computed yet; a real one is never 0).
     */
    private double[][] attentionByKv;

    private static final int ATTENTION_MEMO = 1 << 16;
    private static final int ATTENTION_MEMO_BATCH = 16;

    private final double expertFlopsPerToken;
    private final double attentionFlopsPerPair;
    /** Latent attention's FLOPs per (decode token, context token) pair in the absorbed form; 0 without it. */
    private final double mlaDecodeFlopsPerPair;
    /** Seconds to stream the non-expert weights once: each matrix at its shape's rate ({@link #denseWeightSeconds}). */
    private final double denseWeightSeconds;

    private final double expertBytesPerLayer;
    private final double kvBytesPerToken;
    private final double flops;
    private final double moeFlops;
    private final double attentionFlops;
    private final double bytesPerSecond;
    private final double kvBytesPerSecond;
    private final double linkBytesPerSecond;
    private final double collectiveLatencySeconds;
    private final double dpLatencySeconds;
    private final GpuSpec.CollectiveTable allReduce;
    /** vLLM's fused all-reduce + RMSNorm for the hidden states' all-reduces, or null ({@link GpuSpec#fusedAllReduce}). */
    private final GpuSpec.CollectiveTable fusedAllReduce;
    /** The most tokens a step may have for the fused all-reduce (vLLM's compile range bound), or -1. */
    private final long fusedMaxTokens;

    private final GpuSpec.CollectiveTable allGather;
    private final GpuSpec.CollectiveTable reduceScatter;
    private final int dataParallel;
    private final double allReduceOverheadSeconds;
    private final double collectiveSlowdown;
    private final double fixedSeconds;
    private final double perSequenceSeconds;
    /** The attention layers' fixed time per step ({@link GpuSpec.DecodeAttention#callUs} × layers), seconds. */
    private final double attentionCallSeconds;
    /** The attention layers' work per sequence in the step (per (sequence, KV head) pair × KV heads × layers). */
    private final double attentionSequenceSeconds;

    private final int tensorParallel;
    private final RooflineConfig params;
    // the share of layers attending locally: gpt-oss's sliding-window layers, or Llama 4's chunked local attention
    // layers (then chunk > 0: the chunk in tokens)
    private final double localShare;
    private final int chunk;
    private final double knee;
    /** {@link ModelSpec#qkNormAllReduce}, read once (the step loop does not compare architecture names). */
    private final boolean qkNormAllReduce;

    /**
     * How many times a mixed step's decode sequences read their KV: the query heads per KV head (per GPU) under
     * FlashAttention 2, else 1. FlashAttention 2's varlen forward ({@code vllm-project/flash-attention},
     * {@code csrc/flash_attn/flash_api.cpp}, {@code mha_varlen_fwd}) folds a KV head's query heads into one tile row
     * block ({@code seqlenq_ngroups_swapped}) and splits long KV across CTAs only when every sequence in the launch
     * has one query token; vLLM runs a step's prefill chunks and decodes in one launch, so in a step with a prefill
     * the decodes' query heads each stream the KV themselves. LLMServingSim's vLLM 0.19 attention profiles show it on
     * both FA2 GPUs they measure (Llama-3.1-8B, 4 query heads per KV head): 128 decodes at 4,096 tokens of context
     * take 2.9–3.4× (RTX PRO 6000) and 3.5–3.9× (RTX 4090) as long beside a prefill chunk as alone, and at 16,384
     * tokens the extra time is the 4× traffic at the GPU's bandwidth (1.59 and 0.96 TB/s). Fewer or shorter decodes
     * reuse part of the repeated reads from L2 (1.2–1.5× at 16 decodes); the term takes the full factor. FlashAttention
     * 3 (Hopper) packs the query heads in every launch.
     */
    private final double mixedDecodeKvReads;

    /**
     * The experts' fused MoE as measured on this GPU for their element type ({@link GpuSpec#mxfp4Moe}, {@link
     * GpuSpec#fusedMoe}): the kernel's fixed time per layer call, seconds, and its streaming rate, bytes per second;
     * NaN when not measured (the roofline prices them).
     */
    private final double moeCallSeconds;

    private final double moeKernelBytesPerSecond;

    /**
     * Creates the model.
     *
     * @param dataParallel attention-DP ranks a MoE layer spans (1 without DP; ignored for a dense model): vLLM
     *     shards the experts over TP × DP GPUs, whether split whole (expert parallelism) or sliced (TP flattened
     *     across DP), and gathers the DP ranks' tokens for every MoE layer
     * @param vllmAttention whether the engine runs vLLM's attention kernels (the GPU's {@code attention_kernel});
     *     SGLang (FlashInfer or FlashAttention 3) and TensorRT-LLM (separate generation kernels) fold a KV head's
     *     query heads in every launch, so their mixed steps read the KV once
     * @param expertDtype the routed experts' element type ({@code timing.expert_dtype}); null: the checkpoint's
     *     ({@link ModelSpec#expertDtype}), else {@code weightDtype}. MXFP4 experts stream 4.25 bits per weight and
     *     compute at the BF16 fused-MoE rate: vLLM runs gpt-oss's MXFP4 experts with BF16 activations on NVIDIA GPUs
     *     (its backend priority, {@code fused_moe/oracle/mxfp4.py} at 28be48fa9: FlashInfer TRT-LLM MXFP4 x BF16 on
     *     Blackwell, the Triton kernels on Hopper)
     */
    public RooflineTiming(
            ModelSpec model,
            GpuSpec gpu,
            int tensorParallel,
            int dataParallel,
            TimingConfig.Dtype weightDtype,
            TimingConfig.Dtype expertDtype,
            double weightBytes,
            int kvBytes,
            RooflineConfig params,
            boolean vllmAttention) {
        TimingConfig.Dtype experts = model.expertDtype(expertDtype, weightDtype);
        this.model = model;
        this.tensorParallel = tensorParallel;
        this.params = params;
        this.dataParallel = model.moe() ? dataParallel : 1;
        int expertShards = tensorParallel * this.dataParallel;
        long expertParamsPerToken =
                model.moe() ? (long) model.moeLayers() * model.expertsPerToken() * model.paramsPerExpert() : 0;
        long lmHead = (long) model.vocabSize() * model.hiddenSize();
        long replicated = (long) model.numLayers() * model.replicatedParamsPerLayer();
        this.denseFlopsPerToken = replicated == 0
                ? 2.0 * (model.linearParamsPerToken() - expertParamsPerToken - lmHead) / tensorParallel
                // latent attention's down-projections run whole on every TP rank
                : 2.0 * (model.linearParamsPerToken() - expertParamsPerToken - lmHead - replicated) / tensorParallel
                        + 2.0 * replicated;
        // the LM head stays BF16 under every FP8 method (denseWeightSeconds): its FLOPs, which linearTime divides by
        // the weights' rate, are scaled to take the BF16 rate's time
        this.lmHeadFlopsPerSequence = 2.0
                * lmHead
                / tensorParallel
                * (gpu.achievedFlopsPerSecond(weightDtype) / gpu.achievedFlopsPerSecond(TimingConfig.Dtype.BF16));
        this.expertFlopsPerToken = 2.0 * expertParamsPerToken / expertShards;
        ModelSpec.Mla mla = model.mla();
        if (mla == null) {
            this.attentionFlopsPerPair = 4.0 * model.numLayers() * model.numHeads() * model.headDim() / tensorParallel;
            this.mlaDecodeFlopsPerPair = 0;
        } else {
            /*
             * Latent attention runs two ways (vLLM's MLA backends, vllm/v1/attention/backends/mla/common.py; SGLang's
             * and TensorRT-LLM's alike; DeepSeek-V2, arXiv:2405.04434, appendix C): prefill tokens attend as ordinary
             * multi-head attention after up-projecting the keys and values (per pair and head: q.k over the
             * no-rope and rope widths, p.v over the value width), decode tokens in the absorbed form over the cached
             * latent itself (q.k over latent + rope, p.v over the latent): fewer bytes, more FLOPs per pair.
             */
            double headsPerRank = (double) model.numHeads() / tensorParallel;
            this.attentionFlopsPerPair = 2.0
                    * model.numLayers()
                    * headsPerRank
                    * (mla.qkNopeHeadDim() + mla.qkRopeHeadDim() + mla.vHeadDim());
            this.mlaDecodeFlopsPerPair =
                    2.0 * model.numLayers() * headsPerRank * (mla.cachedWidth() + mla.kvLoraRank());
        }
        this.expertBytesPerLayer = model.moe() ? model.paramsPerExpert() * experts.bytes() / expertShards : 0;
        this.kvBytesPerToken = model.kvBytesPerToken(kvBytes, tensorParallel);
        this.mixedDecodeKvReads = vllmAttention && gpu.attentionKernel() == AttentionKernel.FA2 && mla == null
                ? Math.max(
                        1.0,
                        ((double) model.numHeads() / tensorParallel) / Math.max(1, model.numKvHeads() / tensorParallel))
                : 1.0;
        this.flops = gpu.achievedFlopsPerSecond(weightDtype) * params.mfu();
        this.moeFlops = gpu.achievedMoeFlopsPerSecond(experts);
        GpuSpec.MoeKernel moeKernel = model.moe() ? gpu.moeKernel(experts) : null;
        this.moeCallSeconds = moeKernel != null ? moeKernel.callUs() * 1e-6 : Double.NaN;
        this.moeKernelBytesPerSecond = moeKernel != null ? moeKernel.gbytesPerS() * 1e9 : Double.NaN;
        this.attentionFlops = gpu.achievedAttentionFlopsPerSecond();
        this.bytesPerSecond = gpu.achievedBytesPerSecond() * params.mbu();
        this.denseWeightSeconds =
                denseWeightSeconds(model, gpu, tensorParallel, weightDtype, weightBytes, bytesPerSecond, params.mbu());
        GpuSpec.DecodeAttention decode = gpu.achieved().decodeAttention();
        this.kvBytesPerSecond = decode.gbytesPerS() * 1e9 * params.kvMbu();
        // latent attention caches one shared latent per token: one KV "head" per GPU for the per-pair cost
        int kvHeadsPerGpu = mla != null ? 1 : Math.max(1, model.numKvHeads() / tensorParallel);
        this.attentionCallSeconds = model.numLayers() * decode.callUs() * 1e-6;
        this.attentionSequenceSeconds = model.numLayers() * kvHeadsPerGpu * decode.seqKvHeadNs() * 1e-9;
        this.linkBytesPerSecond = gpu.linkGbytesPerS() * 1e9;
        double linkLatencyUs = gpu.hasNvlink() ? params.collectiveLatencyUs() : params.pcieCollectiveLatencyUs();
        this.collectiveLatencySeconds = tensorParallel > 1 ? linkLatencyUs * 1e-6 * log2(tensorParallel) : 0;
        this.allReduce = gpu.allReduce() != null && gpu.allReduce().covers(tensorParallel) ? gpu.allReduce() : null;
        GpuSpec.FusedAllReduce fused = gpu.fusedAllReduce();
        if (allReduce != null
                && fused != null
                && fused.table().covers(tensorParallel)
                && (dataParallel == 1 || fused.withAttentionDp())) {
            // vLLM bounds the fused graph by max_token_num = max size // (hidden size x 2 bytes) (VllmConfig's
            // compile ranges), and steps of more tokens run the unfused all-reduce
            this.fusedAllReduce = fused.table();
            this.fusedMaxTokens = fused.maxBytes() / (2L * model.hiddenSize());
        } else {
            this.fusedAllReduce = null;
            this.fusedMaxTokens = -1;
        }
        // expert parallelism spans TP x DP; the dispatch and combine collectives run over the DP group
        this.dpLatencySeconds = dataParallel > 1 ? linkLatencyUs * 1e-6 * log2(dataParallel) : 0;
        boolean measured = gpu.allGather() != null
                && gpu.reduceScatter() != null
                && gpu.allGather().covers(dataParallel)
                && gpu.reduceScatter().covers(dataParallel);
        this.allGather = measured ? gpu.allGather() : null;
        this.reduceScatter = measured ? gpu.reduceScatter() : null;
        this.allReduceOverheadSeconds = params.collectiveOverheadUs() * 1e-6;
        this.collectiveSlowdown =
                1.0 / (gpu.hasNvlink() ? params.collectiveEfficiency() : params.pcieCollectiveEfficiency());
        this.fixedSeconds = model.numLayers() * params.layerOverheadUs() * 1e-6;
        this.perSequenceSeconds = model.numLayers() * params.attentionOverheadUs() * 1e-6;
        this.chunk = model.attentionChunkSize();
        this.localShare = model.slidingWindow() > 0
                ? 0.5 // gpt-oss alternates sliding and full layers
                : chunk > 0 ? (double) model.chunkedLayers() / model.numLayers() : 0;
        this.knee = params.kneeExponent();
        this.qkNormAllReduce = model.qkNormAllReduce();
    }

    /**
     * Seconds to read every non-expert weight once on one GPU of the TP group, each weight matrix at the rate vLLM's
     * GEMMs measurably stream a matrix of its shape ({@link GpuSpec.StreamingShapes}: small matrices stream far
     * below the large-GEMM rate) times {@code mbu}. Per GPU, as vLLM shards them: the fused QKV projection is
     * column-parallel ({@code hidden × (heads / TP + 2 × max(1, kv_heads / TP)) × head_dim}: KV heads replicate when
     * TP exceeds them), the output projection row-parallel ({@code heads × head_dim / TP × hidden}), the fused
     * gate/up projection column-parallel ({@code hidden × 2 × intermediate / TP}), the down projection row-parallel,
     * the LM head vocabulary-parallel ({@code hidden × vocab / TP}); a MoE layer's router is replicated. The input
     * embedding is a lookup, not a read of the table; routed experts are priced per step in {@link #gpuNanos}.
     *
     * <p>The projections and the dense MLP are in the weights' type; the router and the LM head stay BF16 whatever it
     * is: vLLM's FP8 methods quantize its linear layers, and the LM head is a vocabulary embedding, not one of them
     * ({@code Fp8Config.get_quant_method}), while the MoE models build their router without a quantization config
     * (and MiniMax's and Qwen3's FP8 checkpoints list it among the modules not converted). Block-scaled FP8 weights,
     * where the GPU's block-FP8 GEMM was measured ({@link GpuSpec.QuantizedGemm}), cost that kernel's fixed time per
     * call plus their bytes at its rate instead: at decode sizes that kernel, with the per-group quantization of its
     * input, is slower than the BF16 GEMM of the same matrix on the Hopper GPUs (AIConfigurator's fp8_block tables).
     */
    private static double denseWeightSeconds(
            ModelSpec model,
            GpuSpec gpu,
            int tensorParallel,
            TimingConfig.Dtype weights,
            double weightBytes,
            double bytesPerSecond,
            double mbu) {
        GpuSpec.StreamingShapes shapes = gpu.achieved().shapes();
        GpuSpec.QuantizedGemm block = gpu.measuredGemm(weights);
        // NVFP4 weights stream at their own measured rate per shape (GpuSpec.Nvfp4Kernels), BF16 ones at the GPU's
        GpuSpec.StreamingShapes quantizedShapes = weights == TimingConfig.Dtype.NVFP4 && gpu.nvfp4() != null
                ? gpu.nvfp4().shapes()
                : shapes;
        long hidden = model.hiddenSize();
        if (model.mla() != null) {
            return latentModelWeightSeconds(
                    model, shapes, quantizedShapes, block, tensorParallel, weightBytes, bytesPerSecond, mbu);
        }
        long qkv = ((long) model.numHeads() / tensorParallel + 2L * Math.max(1, model.numKvHeads() / tensorParallel))
                * model.headDim();
        long attentionOut = (long) model.numHeads() * model.headDim() / tensorParallel;
        long[][] quantized; // {k, n} of each matrix in the weights' type
        if (model.moe()) {
            quantized = new long[][] {{hidden, qkv}, {attentionOut, hidden}};
        } else {
            long intermediate = (long) model.intermediateSize() / tensorParallel;
            quantized = new long[][] {
                {hidden, qkv}, {attentionOut, hidden}, {hidden, 2 * intermediate}, {intermediate, hidden}
            };
        }
        double perLayer = 0;
        for (long[] m : quantized) {
            perLayer += block != null
                    ? block.seconds((double) m[0] * m[1] * weightBytes, mbu)
                    : matrixSeconds(quantizedShapes, m[0], m[1]) * weightBytes / bytesPerSecond;
        }
        double bf16 = model.moe() ? matrixSeconds(shapes, hidden, model.numExperts()) : 0; // the router
        double lmHead = matrixSeconds(shapes, hidden, (long) model.vocabSize() / tensorParallel);
        if (model.denseLayers() == 0 && model.sharedExperts() == 0) {
            return model.numLayers() * (perLayer + bf16 * 2 / bytesPerSecond) + lmHead * 2 / bytesPerSecond;
        }
        // Llama 4: the dense layers' SwiGLU (intermediate_size_mlp) and each MoE layer's shared expert (a SwiGLU of
        // n_shared x the experts' width), both over TP in the weights' type; the router on the MoE layers only
        long dense = (long) model.intermediateSize() / tensorParallel;
        long shared = (long) model.sharedExperts() * model.expertIntermediateSize() / tensorParallel;
        long[][] denseMlp = {{hidden, 2 * dense}, {dense, hidden}};
        long[][] sharedMlp = shared > 0 ? new long[][] {{hidden, 2 * shared}, {shared, hidden}} : new long[0][];
        return model.numLayers() * perLayer
                + model.denseLayers()
                        * quantizedSeconds(denseMlp, quantizedShapes, block, weightBytes, bytesPerSecond, mbu)
                + model.moeLayers()
                        * (quantizedSeconds(sharedMlp, quantizedShapes, block, weightBytes, bytesPerSecond, mbu)
                                + bf16 * 2 / bytesPerSecond)
                + lmHead * 2 / bytesPerSecond;
    }

    /**
     * {@link #denseWeightSeconds} of a DeepSeek-style model (vLLM's {@code deepseek_v2.py}): per layer the latent
     * attention's replicated down-projections ({@code hidden × q_lora_rank} and {@code hidden × (kv_lora_rank +
     * rope)}, whole on every rank; with a query rank one fused GEMM), its column-parallel up-projections ({@code
     * q_lora_rank × heads / TP × (nope + rope)}, {@code kv_lora_rank × heads / TP × (nope + v)}) and the
     * row-parallel output ({@code heads / TP × v × hidden}); the leading dense layers' SwiGLU and each MoE layer's
     * shared experts (a SwiGLU of {@code n_shared_experts × moe_intermediate_size}), both over TP, and its BF16
     * router; the LM head. The routed experts are priced per step.
     */
    private static double latentModelWeightSeconds(
            ModelSpec model,
            GpuSpec.StreamingShapes shapes,
            GpuSpec.StreamingShapes quantized,
            GpuSpec.QuantizedGemm block,
            int tensorParallel,
            double weightBytes,
            double bytesPerSecond,
            double mbu) {
        ModelSpec.Mla mla = model.mla();
        long hidden = model.hiddenSize();
        long heads = model.numHeads() / tensorParallel;
        java.util.List<long[]> attention = new java.util.ArrayList<>();
        if (mla.qLoraRank() > 0) {
            // one GEMM for both down-projections (fused_qkv_a_proj; SGLang's fused_qkv_a_proj_with_mqa)
            attention.add(new long[] {hidden, mla.qLoraRank() + mla.cachedWidth()});
            attention.add(new long[] {mla.qLoraRank(), heads * (mla.qkNopeHeadDim() + mla.qkRopeHeadDim())});
        } else {
            attention.add(new long[] {hidden, heads * (mla.qkNopeHeadDim() + mla.qkRopeHeadDim())});
            attention.add(new long[] {hidden, mla.cachedWidth()});
        }
        attention.add(new long[] {mla.kvLoraRank(), heads * (mla.qkNopeHeadDim() + mla.vHeadDim())});
        attention.add(new long[] {heads * mla.vHeadDim(), hidden});
        long dense = (long) model.intermediateSize() / tensorParallel;
        long[][] denseMlp = {{hidden, 2 * dense}, {dense, hidden}};
        long shared = (long) model.sharedExperts() * model.expertIntermediateSize() / tensorParallel;
        long[][] sharedMlp = shared > 0 ? new long[][] {{hidden, 2 * shared}, {shared, hidden}} : new long[0][];
        double seconds = model.numLayers()
                        * quantizedSeconds(
                                attention.toArray(new long[0][]), quantized, block, weightBytes, bytesPerSecond, mbu)
                + model.denseLayers() * quantizedSeconds(denseMlp, quantized, block, weightBytes, bytesPerSecond, mbu)
                + model.moeLayers()
                        * (quantizedSeconds(sharedMlp, quantized, block, weightBytes, bytesPerSecond, mbu)
                                + matrixSeconds(shapes, hidden, model.numExperts()) * 2 / bytesPerSecond);
        double lmHead = matrixSeconds(shapes, hidden, (long) model.vocabSize() / tensorParallel);
        return seconds + lmHead * 2 / bytesPerSecond;
    }

    /** Seconds to stream {@code matrices} ({k, n} each) in the weights' type, as {@link #denseWeightSeconds} does. */
    private static double quantizedSeconds(
            long[][] matrices,
            GpuSpec.StreamingShapes shapes,
            GpuSpec.QuantizedGemm block,
            double weightBytes,
            double bytesPerSecond,
            double mbu) {
        double sum = 0;
        for (long[] m : matrices) {
            sum += block != null
                    ? block.seconds((double) m[0] * m[1] * weightBytes, mbu)
                    : matrixSeconds(shapes, m[0], m[1]) * weightBytes / bytesPerSecond;
        }
        return sum;
    }

    /** A {@code k × n} matrix's elements over its shape's relative streaming rate (seconds per byte at rate 1). */
    private static double matrixSeconds(GpuSpec.StreamingShapes shapes, long k, long n) {
        return (double) k * n / shapes.factor((double) k, (double) n);
    }

    /**
     * The time of an operation needing {@code compute} seconds at its FLOP rate and {@code memory} seconds at its
     * bandwidth: {@code (compute^p + memory^p)^(1/p)} with p = {@code knee_exponent}. Real kernels do not overlap
     * the two perfectly, so near the knee (compute ≈ memory) they are slower than the larger alone; vLLM's measured
     * GEMMs (AIConfigurator's H100 BF16 table, docs/timing.md) are fitted best by p ≈ 3, the classic roofline
     * being p → ∞.
     */
    private double roof(double compute, double memory) {
        double hi = Math.max(compute, memory);
        if (hi <= 0) {
            return 0;
        }
        double ratio = Math.min(compute, memory) / hi;
        if (knee == 3) {
            return hi * Math.cbrt(1 + ratio * ratio * ratio); // the default, without two pow calls per operation
        }
        return hi * Math.pow(1 + Math.pow(ratio, knee), 1 / knee);
    }

    /**
     * One all-reduce of {@code elements} BF16 elements over the TP group: the measured latency at that size over
     * {@code collective_efficiency} plus {@code collective_overhead_us}, else the link model's ring.
     */
    private double allReduceSeconds(double elements) {
        if (allReduce != null) {
            return allReduce.seconds(tensorParallel, elements) * collectiveSlowdown + allReduceOverheadSeconds;
        }
        double ring = 2.0 * (tensorParallel - 1) / tensorParallel * elements * 2.0 / linkBytesPerSecond;
        return collectiveLatencySeconds + ring;
    }

    /**
     * One fused all-reduce + RMSNorm of {@code elements} BF16 hidden-state elements: the fused kernel's measured
     * latency, but never more than the unfused all-reduce's. vLLM set its fusion size limits by benchmarking the fused
     * kernel against the unfused all-reduce and RMSNorm (vllm-project/vllm#24248), so within them the fusion does not
     * lose; the measured stand-in (TensorRT-LLM's AUTO strategy) may pick another algorithm at large sizes (on four
     * H100s at 1,048,576 elements 26.1 µs, where vLLM's custom all-reduce takes 18.6).
     */
    private double fusedAllReduceSeconds(double elements) {
        double us =
                Math.min(fusedAllReduce.seconds(tensorParallel, elements), allReduce.seconds(tensorParallel, elements));
        return us * collectiveSlowdown + allReduceOverheadSeconds;
    }

    /** The dense (non-expert) layers and the LM head for {@code tokens} new tokens over {@code n} sequences. */
    private double linearTime(double tokens, int n) {
        double linearFlops = denseFlopsPerToken * tokens + lmHeadFlopsPerSequence * n;
        return roof(linearFlops / flops, denseWeightSeconds);
    }

    /**
     * Attention over {@code pairs} (new, context) token pairs reading {@code kvTokens} tokens of KV. The FLOPs run at
     * the measured flash-attention rate, not {@code mfu} of the GEMM rate: AIConfigurator's context-attention tables
     * (vLLM 0.24, H100: 628 TFLOP/s at prompts of 4,096 tokens or more, against 0.5515 × 844 = 465 for the GEMMs
     * under the defaults of 2026-12-04)
     * show the kernel's own efficiency. Below about 2,048 tokens per sequence the kernel is slower than that rate
     * (per-tile and launch costs: 2.3× at 16 × 512 tokens on the H100), which {@code layer_overhead_us} carries; at
     * such lengths attention is a few per cent of a prefill step (Llama-3.1-8B, 16 × 512 tokens: 1.4 %).
     */
    private double attentionTime(double pairs, double kvTokens, int sequences) {
        return attentionRoof(attentionFlopsPerPair * pairs / attentionFlops, kvTokens, sequences);
    }

    /**
     * {@code roof(compute, attentionMemory(kvTokens, sequences))} plus the layers' calls; with the default knee (p =
     * 3) that is {@code cbrt(compute^3 + read^3 + work^3)}, one cube root (the same value in closed form).
     */
    private double attentionRoof(double compute, double kvTokens, int sequences) {
        if (knee == 3) {
            double read = kvBytesPerToken * kvTokens / kvBytesPerSecond;
            double work = sequences * attentionSequenceSeconds;
            return Math.cbrt(compute * compute * compute + read * read * read + work * work * work)
                    + attentionCallSeconds;
        }
        return roof(compute, attentionMemory(kvTokens, sequences)) + attentionCallSeconds;
    }

    /**
     * The attention layers' memory side for {@code sequences} sequences reading {@code kvTokens} tokens of KV: the
     * KV read at its rate and the work per (sequence, KV head) pair overlapping as the decode attention layer's
     * measured fit has them, {@code cbrt(read^3 + pairs^3)} ({@link GpuSpec.DecodeAttention}): at long contexts the
     * read, at short ones with many sequences the pairs (on the H100 1,024 sequences of 8 KV heads at 8 tokens of
     * context: 11.5 + 222 µs per layer).
     */
    private double attentionMemory(double kvTokens, int sequences) {
        double read = kvBytesPerToken * kvTokens / kvBytesPerSecond;
        double work = sequences * attentionSequenceSeconds;
        return work == 0 ? read : Math.cbrt(read * read * read + work * work * work);
    }

    private static double log2(int n) {
        return Math.log(n) / Math.log(2);
    }

    @Override
    public long stepNanos(StepBatch batch) {
        return gpuNanos(batch, null);
    }

    /** The names of {@link #stepTerms}' parts, in order. */
    static final List<String> TERMS = List.of("dense", "experts", "attention", "collectives", "fixed");

    /**
     * The GPU part split as {@link #gpuNanos} sums it: the dense layers and LM head (weights and GEMMs), the routed
     * experts, attention, the TP and DP collectives, and the fixed per-layer (and per-sequence) time.
     */
    @Override
    public List<StepTerm> stepTerms(StepBatch batch) {
        double[] seconds = new double[TERMS.size()];
        gpuNanos(batch, seconds);
        List<StepTerm> out = new ArrayList<>(seconds.length);
        for (int i = 0; i < seconds.length; i++) {
            out.add(new StepTerm(TERMS.get(i), seconds[i] * 1e9));
        }
        return out;
    }

    /**
     * The CPU part: {@code step_overhead_us + sequences × per_sequence_overhead_us} (the engine core's scheduling,
     * input preparation, sampling and output processing): the synchronous loop adds it to the GPU part, the async
     * loop overlaps it with the previous step's GPU part.
     */
    @Override
    public long cpuNanos(StepBatch batch) {
        if (batch.size() == 0) {
            return 0;
        }
        return Math.round((params.stepOverheadUs() + batch.size() * params.perSequenceOverheadUs()) * 1e3);
    }

    /**
     * Query-key pairs of a chunked-local layer over positions {@code 0 .. n - 1}: the query at {@code p} attends to
     * {@code p mod chunk + 1} keys, so {@code q} whole chunks give {@code q × chunk (chunk + 1) / 2} and the {@code r}
     * positions after them {@code r (r + 1) / 2}.
     */
    static double chunkPairsBefore(int n, int chunk) {
        long q = n / chunk;
        long r = n % chunk;
        return q * ((double) chunk * (chunk + 1) / 2) + r * (r + 1) / 2.0;
    }

    /** The GPU part; {@code terms}, when not null, receives its parts in seconds ({@link #TERMS}' order). */
    private long gpuNanos(StepBatch batch, double[] terms) {
        int n = batch.size();
        if (n == 0) {
            return 1;
        }
        // O(1) from the batch's aggregates (summed as it was built); sliding-window layers need each sequence's
        // context, so only they loop over the batch
        double tokens = batch.newTokensSum();
        double pairs = batch.causalPairs();
        double kvTokens = batch.kvTokens();
        if (localShare > 0) {
            /*
             * Layers that attend locally; the others attend to everything (c + t keys read, t (c + (t + 1) / 2)
             * pairs).
             *
             * A sliding-window layer (gpt-oss): a query attends to at most the window's keys, and the kernel reads
             * only the keys some query of the chunk can see: a query sees itself and the w - 1 tokens before it (vLLM
             * passes the window to the kernels as w - 1 keys to the left), so t new tokens on c computed ones read
             * min(c + t, w - 1 + t) (the kernels skip the KV tiles left of every query's window).
             *
             * A chunked local attention layer (Llama 4; vLLM's ChunkedLocalAttention, which splits each request into
             * one virtual request per attention_chunk_size-aligned chunk): the query at position p attends to the keys
             * from its chunk's start, p - p mod C, through itself, p mod C + 1 of them, and t new tokens on c computed
             * ones read the keys from the start of the first new token's chunk, c + t - C floor(c / C). Below C tokens
             * of context that is full attention.
             */
            int window = model.slidingWindow();
            pairs = 0;
            kvTokens = 0;
            for (int i = 0; i < n; i++) {
                int t = batch.newTokens(i);
                int c = batch.contextTokens(i);
                double full = t * (c + (t + 1) / 2.0);
                double local;
                double localKv;
                if (chunk > 0) {
                    local = chunkPairsBefore(c + t, chunk) - chunkPairsBefore(c, chunk);
                    localKv = c + t - (long) (c / chunk) * chunk;
                } else {
                    local = t * Math.min(c + (t + 1) / 2.0, window);
                    localKv = Math.min(c + t, window - 1 + t);
                }
                pairs += (1 - localShare) * full + localShare * local;
                kvTokens += (1 - localShare) * (c + t) + localShare * localKv;
            }
        }
        double linear;
        if (tokens == n && n < linearByBatch.length) {
            // a decode-only step: the dense layers' time depends on the batch size alone, computed once per size
            linear = linearByBatch[n];
            if (linear == 0) {
                linear = linearTime(tokens, n);
                linearByBatch[n] = linear;
            }
        } else {
            linear = linearTime(tokens, n);
        }
        double experts = 0;
        if (model.moe()) {
            double e = model.numExperts();
            double k = model.expertsPerToken();
            // with DP, each MoE layer runs on every DP rank's tokens (gathered; ranks pad to the largest)
            double routed = tokens * dataParallel;
            double hit = e * (1 - Math.pow(1 - k / e, routed)); // distinct experts the batch touches per layer
            double bytes = model.moeLayers() * hit * expertBytesPerLayer; // each GPU holds 1/(TP x DP) of them
            if (moeKernelBytesPerSecond > 0) {
                /*
                 * vLLM's fused MoE as measured on this GPU for the experts' element type (AIConfigurator's moe_perf
                 * tables, fitted per vLLM version: w4a16_mxfp4, bfloat16, fp8_block). Memory side: the kernel's
                 * fixed time per layer call — its launches, routing, gather and scatter, 15-65 us on the GPUs
                 * measured, several times the weight read of a small decode batch of a fine-grained MoE — plus the
                 * touched experts' bytes at the measured rate (the decode-range fit). Compute side: the fused-MoE
                 * FLOP rate, measured on whole layers of 4,096 tokens or more, so it already contains the call time,
                 * which a prefill's soft roof then mostly hides. Both rates at moe_efficiency, the share of its
                 * isolated rate the kernel keeps inside a forward pass (fitted on the corpus's Mixtral runs); the
                 * call time as measured.
                 */
                double eff = params.moeEfficiency();
                experts = roof(
                        expertFlopsPerToken * routed / moeFlops / eff,
                        model.moeLayers() * moeCallSeconds + bytes / moeKernelBytesPerSecond / eff);
            } else {
                experts =
                        roof(expertFlopsPerToken * routed / moeFlops, bytes / bytesPerSecond) / params.moeEfficiency();
            }
        }
        double attention;
        if (mlaDecodeFlopsPerPair > 0) {
            // latent attention: the decodes' pairs in the absorbed form, the prefill chunks' as multi-head attention
            double decodePairs = batch.decodeContextTokens();
            double flops = (pairs - decodePairs) * attentionFlopsPerPair + decodePairs * mlaDecodeFlopsPerPair;
            attention = attentionRoof(flops / attentionFlops, kvTokens, n);
        } else if (pairs == kvTokens && kvTokens < ATTENTION_MEMO && n < ATTENTION_MEMO_BATCH && localShare == 0) {
            // every request computes one token (decode steps): the attention time depends on the KV tokens and the
            // batch size alone, computed once per pair of values (not with sliding-window layers, whose weighted sums
            // need not be whole)
            int kv = (int) kvTokens;
            if (attentionByKv == null) {
                attentionByKv = new double[ATTENTION_MEMO_BATCH][];
            }
            double[] row = attentionByKv[n];
            if (row == null) {
                row = new double[ATTENTION_MEMO];
                attentionByKv[n] = row;
            }
            attention = row[kv];
            if (attention == 0) {
                attention = attentionTime(pairs, kvTokens, n);
                row[kv] = attention;
            }
        } else if (mixedDecodeKvReads > 1 && batch.prefillRequests() > 0 && batch.decodeRequests() > 0) {
            attention = attentionTime(pairs, kvTokens + (mixedDecodeKvReads - 1) * batch.decodeContextTokens(), n);
        } else {
            attention = attentionTime(pairs, kvTokens, n);
        }
        double collectives = 0;
        if (tensorParallel > 1) {
            double hiddenElements = tokens * model.hiddenSize();
            collectives += 2.0
                    * model.numLayers()
                    * (tokens <= fusedMaxTokens
                            ? fusedAllReduceSeconds(hiddenElements)
                            : allReduceSeconds(hiddenElements));
            if (qkNormAllReduce) {
                // MiniMax-M2's QK norm spans every head: each layer all-reduces the TP ranks' partial variances, two
                // FP32 values per token (ModelSpec.qkNormAllReduce), the size of 4 BF16 elements per token
                collectives += model.numLayers() * allReduceSeconds(4 * tokens);
            }
        }
        if (dataParallel > 1) {
            /*
             * MoE with attention DP as vLLM runs it by default (fused_moe/runner/moe_runner.py: the naive dispatch and
             * combine run whenever dp_size > 1, with or without expert parallelism; ParallelConfig.all2all_backend
             * "allgather_reducescatter", device_communicators/all2all.py AgRsAll2AllManager): each MoE layer's
             * dispatch all-gathers every DP rank's hidden states over the DP group and its combine reduce-scatters
             * the experts' outputs back, each over the whole gathered tensor. DP ranks pad to the largest rank's
             * token count, so this rank's tokens x DP is the message when this rank is the largest, which is the
             * rank that sets a lockstep pass. With DP 1 (experts spread over the TP group only) there is neither:
             * the TP all-reduce above combines the experts' partial outputs.
             */
            double elements = tokens * dataParallel * model.hiddenSize();
            double perLayer;
            if (allGather != null) {
                perLayer = allGather.seconds(dataParallel, elements)
                        + reduceScatter.seconds(dataParallel, elements)
                        + 2 * allReduceOverheadSeconds;
            } else {
                // link model: each rank receives (all-gather) and sends (reduce-scatter) the other ranks' share
                double bytes = elements * 2.0 * (dataParallel - 1) / dataParallel;
                perLayer = 2 * (dpLatencySeconds + bytes / linkBytesPerSecond);
            }
            collectives += model.moeLayers() * perLayer;
        }
        double fixed = fixedSeconds + n * perSequenceSeconds;
        if (terms != null) {
            terms[0] = linear;
            terms[1] = experts;
            terms[2] = attention;
            terms[3] = collectives;
            terms[4] = fixed;
        }
        long nanos = Math.round((linear + experts + attention + collectives + fixed) * 1e9);
        return Math.max(1, nanos);
    }
}
