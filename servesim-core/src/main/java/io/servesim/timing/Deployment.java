package io.servesim.timing;

import io.servesim.config.ConfigException;
import io.servesim.config.CustomGpuConfig;
import io.servesim.config.EngineConfig;
import io.servesim.config.EngineKind;
import io.servesim.config.KvCacheConfig;
import io.servesim.config.RooflineConfig;
import io.servesim.config.SglangConfig;
import io.servesim.config.SimConfig;
import io.servesim.config.TimingConfig;
import io.servesim.config.TimingType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * What a config resolves to on hardware: the model and GPU (if named), KV bytes per token, the KV pool size per
 * rank (derived as vLLM derives it unless {@code num_gpu_blocks} is set), the context limit, and the step-time
 * model.
 *
 * @param model the model, or null
 * @param gpu the GPU, or null
 * @param bytesPerToken KV bytes per token on one GPU
 * @param numGpuBlocks blocks per rank including the null block
 * @param blocksSource {@code configured}, {@code derived} or {@code default}
 * @param maxModelLen effective context limit
 * @param capacity the derivation's terms (null unless derived)
 * @param timingType the resolved timing type (never {@code auto})
 * @param roofline the roofline parameters in effect (after a calibration profile), or null
 * @param expertDtype a MoE model's routed experts' element type as resolved ({@link ModelSpec#expertDtype}), else null
 * @param hybridWindowTokens the sliding window of vLLM's hybrid KV cache when it runs ({@link #hybridWindow}), else 0
 * @param maxNumSeqs vLLM's {@code max_num_seqs} in effect: the stated one, else the GPU's default ({@link #batchDefaults})
 * @param maxNumBatchedTokens vLLM's {@code max_num_batched_tokens} in effect, likewise
 * @param vllmEngine whether the pool runs the vLLM engine, whose scheduler reads the two limits above (SGLang's and
 *     TensorRT-LLM's read their own keys)
 * @param sglang SGLang's settings in effect, {@code chunked_prefill_size} resolved for the GPU ({@link
 *     #sglangChunkDefault}); null unless the pool runs SGLang
 */
public record Deployment(
        ModelSpec model,
        GpuSpec gpu,
        long bytesPerToken,
        int numGpuBlocks,
        String blocksSource,
        int maxModelLen,
        Capacity capacity,
        TimingType timingType,
        RooflineConfig roofline,
        TimingConfig.Dtype expertDtype,
        int hybridWindowTokens,
        int maxNumSeqs,
        int maxNumBatchedTokens,
        boolean vllmEngine,
        SglangConfig sglang) {

    /**
     * The terms of an engine's KV-capacity derivation, per GPU of the TP group. vLLM ({@code
     * gpu_worker.determine_available_memory}, vllm-semantics.md §2.6): {@code available = utilization × memory −
     * weights − activation peak − non-torch}; SGLang ({@link #sglangCapacity}): {@code mem_fraction_static × memory −
     * weights}, the activation term then being what SGLang holds back, {@code (1 − mem_fraction_static) × memory};
     * TensorRT-LLM ({@link #trtllmCapacity}): {@code free_gpu_memory_fraction × (memory − weights − activation peak −
     * non-torch)}. Then {@code blocks = floor(available / (block_size × KV bytes per token))}.
     *
     * @param memoryGib device memory
     * @param weightsGib weights per GPU
     * @param activationGib estimated peak activation of the profiling forward (or of the sampler), per GPU; SGLang:
     *     the memory it holds back for activations and CUDA graphs
     * @param nonTorchGib NCCL/cuBLAS workspaces and CUDA-graph pools (a fixed estimate; 0 for SGLang, whose reserve
     *     covers them)
     * @param availableKvGib what is left for the KV cache
     * @param engine the engine whose rule derived it
     * @param fraction the rule's memory share: vLLM's {@code gpu_memory_utilization}, SGLang's {@code
     *     mem_fraction_static}, TensorRT-LLM's {@code free_gpu_memory_fraction}
     */
    public record Capacity(
            double memoryGib,
            double weightsGib,
            double activationGib,
            double nonTorchGib,
            double availableKvGib,
            EngineKind engine,
            double fraction) {}

    /** Non-torch memory and CUDA graphs, GiB: vLLM logs typically show 0.2–1 GiB of each on 8–70 B models. */
    public static final double NON_TORCH_GIB = 1.0;

    private static final double GIB = 1L << 30;

    /** Resolves a config. */
    public static Deployment resolve(SimConfig config) {
        TimingConfig t = config.timing();
        EngineConfig e = config.engine();
        KvCacheConfig kv = e.kvCache();
        ModelSpec model = t.model() == null ? null : Specs.model(t.model(), "timing.model", config.baseDir());
        if (model != null
                && (t.weightDtype() == TimingConfig.Dtype.NVFP4 || t.expertDtype() == TimingConfig.Dtype.NVFP4)
                && ((model.checkpointDtype() != null && model.checkpointDtype() != TimingConfig.Dtype.NVFP4)
                        || model.checkpointExpertDtype() == TimingConfig.Dtype.INT4)) {
            // an NVFP4 release of a model whose own checkpoint is FP8 (MiniMax-M2.5, DeepSeek-V3, Kimi-K2) or has
            // W4A16 experts (Kimi-K2.5) replaces that quantization: its layers are what the release says (NVFP4, or
            // BF16 where it leaves them out)
            model = model.withCheckpointDtypes(null, null);
        }
        GpuSpec gpu = gpu(t, e.kind());
        int[] batch = batchDefaults(gpu);
        int maxNumSeqs = e.scheduler().maxNumSeqs() != null ? e.scheduler().maxNumSeqs() : batch[0];
        int budget = e.scheduler().maxNumBatchedTokens() != null ? e.scheduler().maxNumBatchedTokens() : batch[1];
        int tp = t.tensorParallel();
        if (model != null) {
            checkTensorParallel(model, tp);
        }
        // refuses an expert type for a dense model
        TimingConfig.Dtype expertDtype = model == null ? null : model.expertDtype(t.expertDtype(), t.weightDtype());
        if (model != null && !model.moe()) {
            expertDtype = null;
        }
        // vLLM shards a MoE layer's experts over TP x DP GPUs, split whole (EP) or sliced (TP flattened across DP)
        int expertShards = tp * config.cluster().attentionDp();
        long bytesPerToken = kv.bytesPerToken() != null
                ? kv.bytesPerToken()
                : model != null
                        ? model.kvBytesPerToken(model.kvBytes(t.kvDtype()), tp)
                        : KvCacheConfig.DEFAULT_BYTES_PER_TOKEN;
        SglangConfig sglang = null;
        if (e.kind() == EngineKind.SGLANG) {
            sglang = e.sglang().chunkedPrefillSize() != null
                    ? e.sglang()
                    : e.sglang().withChunkedPrefillSize(sglangChunkDefault(gpu));
            try {
                EngineConfig.checkChunkAgainstPage(sglang.chunkedPrefillSize(), kv.blockSize());
            } catch (ConfigException ex) {
                throw ex.under("engine");
            }
        }
        int blocks;
        String source;
        Capacity capacity = null;
        if (kv.numGpuBlocks() != null) {
            blocks = kv.numGpuBlocks();
            source = "configured";
        } else if (model != null && gpu != null) {
            capacity = switch (e.kind()) {
                case VLLM -> capacity(model, gpu, t, tp, expertShards, maxNumSeqs, budget);
                case SGLANG ->
                    sglangCapacity(model, gpu, t, tp, config.cluster().attentionDp(), expertShards, sglang);
                case TRTLLM -> trtllmCapacity(model, gpu, t, tp, expertShards, e.trtllm());
            };
            double blockBytes = (double) kv.blockSize() * model.kvBytesPerToken(model.kvBytes(t.kvDtype()), tp);
            if (hybridWindow(config, model) > 0) {
                // one block holds one KV cache group's layers (half of gpt-oss's), not every layer's
                blockBytes = blockBytes * hybridGroupLayers(model) / model.numLayers();
            }
            long n = (long) Math.floor(capacity.availableKvGib() * GIB / blockBytes);
            if (n < 2) {
                throw new ConfigException(
                        "engine.kv_cache.num_gpu_blocks",
                        String.format(
                                java.util.Locale.ROOT,
                                "%s does not fit on %s with tensor_parallel %d: %.1f GiB of weights, %.1f GiB left"
                                        + " for the KV cache (raise tensor_parallel or use a larger GPU)",
                                model.name(),
                                gpu.name(),
                                tp,
                                capacity.weightsGib(),
                                capacity.availableKvGib()));
            }
            blocks = (int) Math.min(Integer.MAX_VALUE, n);
            source = "derived";
        } else {
            blocks = KvCacheConfig.DEFAULT_NUM_GPU_BLOCKS;
            source = "default";
        }
        EngineConfig.checkCapacity(blocks, kv.blockSize(), e.maxModelLen(), "engine.max_model_len");
        int maxLen = e.effectiveMaxModelLen(
                blocks, model != null && model.maxPositionEmbeddings() > 0 ? model.maxPositionEmbeddings() : null);
        int window = hybridWindow(config, model);
        if (window > 0) {
            maxLen = hybridMaxModelLen(blocks, kv.blockSize(), window, budget, maxLen, e.maxModelLen() != null);
        }
        if (!e.scheduler().enableChunkedPrefill() && budget < maxLen) {
            throw new ConfigException(
                    "engine.scheduler.max_num_batched_tokens",
                    "is " + budget + " but must be >= max_model_len (" + maxLen
                            + ") when enable_chunked_prefill is false; set engine.max_model_len or raise the budget");
        }
        TimingType type = t.effectiveType();
        if (type.needsModelAndGpu() && (model == null || gpu == null)) {
            throw new ConfigException("timing.type", type.configName() + " needs timing.model and timing.gpu");
        }
        RooflineConfig roofline = null;
        if (type == TimingType.ROOFLINE) {
            roofline = t.calibration() != null
                    ? loadCalibration(t.calibration(), t.roofline(), config.baseDir())
                    : t.roofline();
        }
        return new Deployment(
                model,
                gpu,
                bytesPerToken,
                blocks,
                source,
                maxLen,
                capacity,
                type,
                roofline,
                expertDtype,
                window,
                maxNumSeqs,
                budget,
                e.kind() == EngineKind.VLLM,
                sglang);
    }

    /**
     * The sliding window of vLLM's hybrid KV cache when it runs for this deployment, else 0. vLLM's hybrid KV cache
     * manager is on by default for a model with full-attention and sliding-window layers ({@code VllmConfig} leaves
     * {@code disable_hybrid_kv_cache_manager} false unless a connector lacks support; its NIXL and offloading
     * connectors have it). servesim runs it for the vLLM engine without a KV connector: with G2, KVCR or P/D the
     * sliding-window layers are kept and sized as full attention (docs/timing.md, KV capacity). {@code
     * engine.kv_cache.hybrid_window} overrides the model's window (0: off).
     *
     * @throws ConfigException naming {@code engine.kv_cache.hybrid_window} when a window is stated where it cannot run
     */
    public static int hybridWindow(SimConfig config, ModelSpec model) {
        EngineConfig e = config.engine();
        Integer stated = e.kvCache().hybridWindow();
        boolean connector = e.kvcr().enabled()
                || e.kvCache().hostOffload().enabled()
                || config.cluster().disaggregated();
        if (stated != null && stated > 0) {
            String why = e.kind() != io.servesim.config.EngineKind.VLLM
                    ? "is vLLM's hybrid KV cache, read only with engine.kind: vllm"
                    : connector
                            ? "is not modelled with a KV connector (G2, KVCR or P/D): set it to null or 0"
                            : model != null && model.slidingWindow() == 0
                                    ? "model " + model.name() + " has no sliding-window layers"
                                    : null;
            if (why != null) {
                throw new ConfigException("engine.kv_cache.hybrid_window", why);
            }
            return stated;
        }
        if (stated != null || model == null || e.kind() != io.servesim.config.EngineKind.VLLM || connector) {
            return 0;
        }
        return model.slidingWindow();
    }

    /**
     * vLLM's API-server batch limits for a GPU ({@code EngineArgs.get_batch_defaults} at 9aaf83ef, OpenAI server usage
     * context): {max_num_seqs, max_num_batched_tokens} = {1024, 8192} on GPUs with at least 70 GiB that are not
     * A100s (large budgets lower A100 throughput, vllm-project/vllm#17885), else {256, 2048}; without a GPU, the
     * H100's.
     */
    public static int[] batchDefaults(GpuSpec gpu) {
        boolean large = gpu == null
                || (gpu.memoryGib() >= 70
                        && !gpu.name().toLowerCase(java.util.Locale.ROOT).contains("a100"));
        return large ? new int[] {1024, 8192} : new int[] {256, 2048};
    }

    /**
     * vLLM's start-up check on a hybrid KV cache ({@code check_enough_kv_cache_memory} over {@code
     * _max_memory_usage_bytes_from_groups}): one {@code max_model_len} request needs {@code ceil(len / block)}
     * full-attention blocks plus the sliding-window group's admission bound, {@code ceil(min(window - 1 + budget, len)
     * / block) + 1}. A stated length that does not fit is refused; a derived one is lowered to the longest that fits
     * (vLLM's auto-fit), as the pool with full attention alone would otherwise admit a request no pool could hold.
     */
    static int hybridMaxModelLen(int numGpuBlocks, int blockSize, int window, int budget, int maxLen, boolean stated) {
        long usable = numGpuBlocks - 1L;
        java.util.function.IntPredicate fits = len -> (len + (long) blockSize - 1) / blockSize
                        + (Math.min((long) window - 1 + budget, len) + blockSize - 1) / blockSize
                        + 1
                <= usable;
        if (fits.test(maxLen)) {
            return maxLen;
        }
        if (stated) {
            throw new ConfigException(
                    "engine.max_model_len",
                    "is " + maxLen + " tokens but one rank's KV pool (" + usable + " blocks) cannot hold a request"
                            + " that long in both groups of vLLM's hybrid KV cache (its sliding-window group needs up"
                            + " to ceil(min(window - 1 + max_num_batched_tokens, max_model_len) / block_size) + 1"
                            + " blocks besides the full-attention ones); vLLM refuses to start in this case");
        }
        int lo = 0; // fits (trivially)
        int hi = maxLen; // does not fit
        while (hi - lo > 1) {
            int mid = (int) (((long) lo + hi) >>> 1);
            if (fits.test(mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if (lo < 1) {
            throw new ConfigException(
                    "engine.kv_cache.num_gpu_blocks",
                    numGpuBlocks + " blocks cannot hold one token in both groups of vLLM's hybrid KV cache");
        }
        return lo;
    }

    /**
     * Layers per KV cache group ({@code _get_kv_cache_groups_uniform_page_size}): the fewer layers of the two types,
     * or the more when they differ by less than half (gpt-oss: half its layers of each, so half its layers).
     */
    static int hybridGroupLayers(ModelSpec model) {
        int sliding = model.numLayers() / 2; // gpt-oss alternates sliding and full layers from a sliding one
        int full = model.numLayers() - sliding;
        int min = Math.min(sliding, full);
        int max = Math.max(sliding, full);
        return max < min * 1.5 ? max : min;
    }

    /**
     * vLLM's tensor-parallel shape rules ({@code ModelConfig.verify_with_parallel_config}: the attention heads must
     * divide evenly; {@code QKVParallelLinear}: the KV heads must divide evenly, or be replicated evenly when TP
     * exceeds them).
     */
    static void checkTensorParallel(ModelSpec m, int tp) {
        if (m.numHeads() % tp != 0) {
            throw new ConfigException(
                    "timing.tensor_parallel",
                    "is " + tp + " but " + m.name() + " has " + m.numHeads()
                            + " attention heads, which must be divisible by it (vLLM refuses to start otherwise)");
        }
        int kv = m.numKvHeads();
        if (kv % tp != 0 && tp % kv != 0) {
            throw new ConfigException(
                    "timing.tensor_parallel",
                    "is " + tp + " but " + m.name() + " has " + kv
                            + " KV heads: one must divide the other (vLLM shards or replicates KV heads evenly)");
        }
    }

    /**
     * The step-time model of this deployment ({@link TimingModels}); a relative {@code timing.profile.path} resolves
     * against {@code baseDir} ({@link SimConfig#resolve}).
     */
    public TimingModel timingModel(TimingConfig t, EngineKind engine, int attentionDp, Path baseDir) {
        return TimingModels.create(t, this, engine, attentionDp, baseDir);
    }

    private static GpuSpec gpu(TimingConfig t, EngineKind engine) {
        GpuSpec g = gpuSpec(t);
        io.servesim.config.VllmVersion version = t.version();
        if (g != null && version != null && !t.gpu().equals("custom")) {
            // vLLM's all-reduce as the deployment's version measured it, where versions differ (Specs.allReduce)
            GpuSpec.CollectiveTable allReduce = Specs.allReduce(t.gpu(), version, t.tensorParallel());
            if (allReduce != null) {
                g = g.withCollectives(allReduce, g.allGather(), g.reduceScatter());
            }
            // and its fused MoE: MXFP4 (Specs.mxfp4Moe), BF16 and FP8 (Specs.fusedMoe)
            g = g.withMxfp4Moe(Specs.mxfp4Moe(t.gpu(), version)).withFusedMoe(Specs.fusedMoe(t.gpu(), version));
            // and its NVFP4 GEMM and fused MoE (Specs.nvfp4)
            g = g.withNvfp4(Specs.nvfp4(t.gpu(), version));
        }
        if (g != null && !t.gpu().equals("custom") && engine == EngineKind.VLLM) {
            // vLLM's fused all-reduce + RMSNorm for this TP group, where its version runs it (Specs.fusedAllReduce)
            g = g.withFusedAllReduce(Specs.fusedAllReduce(t.gpu(), version, t.tensorParallel()));
        }
        if (g != null && !t.gpu().equals("custom") && (version != null || engine != EngineKind.VLLM)) {
            // the block-scaled FP8 GEMM this engine runs: vLLM's by version, SGLang's or TensorRT-LLM's own
            g = g.withBlockFp8Gemm(Specs.blockFp8Gemm(t.gpu(), engine, version));
        }
        if (t.mxfp4Mxfp8()) {
            /*
             * VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8 (vLLM's get_mxfp4_backend): MXFP4 experts on MXFP8 activations,
             * FlashInfer's TRT-LLM kernel, on Blackwell (SM100) only; the flag is read nowhere else. Priced with that
             * kernel's measured decode fit and FLOP rate (measured-kernels.yaml mxfp4_mxfp8_moe,
             * moe_mxfp4_mxfp8_tflops) in place of the MXFP4 x BF16 kernel's.
             */
            GpuSpec.MoeKernel kernel =
                    g == null || t.gpu().equals("custom") ? null : Specs.mxfp4Mxfp8Moe(t.gpu(), version);
            Double tflops = kernel == null ? null : Specs.moeMxfp4Mxfp8Tflops(t.gpu());
            if (kernel == null || tflops == null) {
                throw new ConfigException(
                        "timing.mxfp4_mxfp8",
                        "vLLM runs MXFP4 experts on MXFP8 activations on Blackwell GPUs only, and its kernel is"
                                + " measured for " + String.join(", ", Specs.mxfp4Mxfp8Gpus()) + " (timing.gpu is "
                                + t.gpu() + "): set it to false");
            }
            g = g.withMxfp4Moe(kernel).withMoeMxfp4Tflops(tflops);
        }
        return g == null ? null : interconnect(g, t);
    }

    /**
     * The GPU as this deployment links it. The measured collective tables (AIConfigurator's) were taken on machines
     * whose GPUs reach each other peer to peer; vLLM runs its custom all-reduce only then (it checks P2P access and
     * otherwise falls back to NCCL, which stages data through host memory). Without peer access, or with a stated
     * link bandwidth, the tables do not describe the deployment and the link model prices every collective.
     */
    private static GpuSpec interconnect(GpuSpec g, TimingConfig t) {
        if (t.gpuP2p() && t.linkGbytesPerS() == null) {
            return g;
        }
        if (!t.gpuP2p() && g.hasNvlink()) {
            throw new ConfigException(
                    "timing.gpu_p2p",
                    "is false, but " + g.name() + " links its GPUs by " + g.link()
                            + " (always peer to peer); false is for PCIe GPUs without peer access");
        }
        return g.withLinkModelAt(t.linkGbytesPerS() != null ? t.linkGbytesPerS() : g.linkGbytesPerS());
    }

    private static GpuSpec gpuSpec(TimingConfig t) {
        if (t.gpu() == null) {
            return null;
        }
        if (!t.gpu().equals("custom")) {
            return Specs.gpu(t.gpu(), "timing.gpu");
        }
        CustomGpuConfig c = t.customGpu();
        if (c.memoryGib() == null
                || c.bandwidthGbytesPerS() == null
                || c.bf16Tflops() == null
                || c.linkGbytesPerS() == null) {
            throw new ConfigException(
                    "timing.custom_gpu",
                    "gpu: custom needs memory_gib, bandwidth_gbytes_per_s, bf16_tflops and link_gbytes_per_s");
        }
        double fp8 = c.fp8Tflops() == null ? 0 : c.fp8Tflops();
        if (fp8 == 0 && c.achievedFp8Tflops() != null) {
            throw new ConfigException(
                    "timing.custom_gpu.achieved_fp8_tflops", "needs fp8_tflops (a GPU without FP8 tensor cores)");
        }
        return new GpuSpec(
                "custom",
                c.memoryGib(),
                c.bandwidthGbytesPerS(),
                c.bf16Tflops(),
                fp8,
                0,
                "custom",
                c.linkGbytesPerS(),
                "timing.custom_gpu",
                Specs.achievedFor(
                        c.bandwidthGbytesPerS(),
                        c.bf16Tflops(),
                        fp8,
                        c.achievedBf16Tflops(),
                        c.achievedFp8Tflops(),
                        c.achievedGbytesPerS(),
                        null,
                        null,
                        "timing.custom_gpu achieved_*",
                        null,
                        null,
                        null,
                        null),
                null,
                null,
                null,
                c.attentionKernel(),
                null,
                null,
                null,
                null,
                null);
    }

    /**
     * vLLM's memory budget on one GPU. The activation peak is estimated from the profiling forward vLLM runs
     * ({@code max_num_batched_tokens} tokens): the MLP's gate/up output plus a few hidden-size buffers per token, or
     * the sampler's fp32 logits and probabilities for {@code max_num_seqs} requests, whichever is larger.
     */
    static Capacity capacity(
            ModelSpec m, GpuSpec gpu, TimingConfig t, int tp, int expertShards, int maxNumSeqs, int budget) {
        double weights = weightBytes(m, gpu, t, tp, expertShards);
        double activation = activationBytes(m, tp, maxNumSeqs, budget);
        double memory = gpu.memoryBytes();
        double available = t.gpuMemoryUtilization() * memory - weights - activation - NON_TORCH_GIB * GIB;
        return inGib(memory, weights, activation, NON_TORCH_GIB, available, EngineKind.VLLM, t.gpuMemoryUtilization());
    }

    /**
     * SGLang's default {@code chunked_prefill_size} for a GPU, by its memory ({@code ServerArgs._handle_gpu_memory_settings},
     * SGLang's v0.5 line, sgl-project/sglang {@code python/sglang/srt/server_args.py}): 2,048 below 35 GB (T4, RTX
     * 4090), 4,096 below 60 GB (A100 40 GB, L40S), 8,192 below 160 GB (H100, H200, A100 80 GB, RTX PRO 6000), 16,384
     * from 160 GB (B200); without a GPU, the H100's. SGLang compares the device's MiB with these GB × 1,024; servesim
     * takes the memory the CUDA runtime reports ({@code memory_gib} × 1,024).
     */
    public static int sglangChunkDefault(GpuSpec gpu) {
        if (gpu == null) {
            return 8192;
        }
        double mib = gpu.memoryGib() * 1024;
        return mib < 35 * 1024 ? 2048 : mib < 60 * 1024 ? 4096 : mib < 160 * 1024 ? 8192 : 16384;
    }

    /**
     * SGLang's {@code cuda_graph_max_bs} default (the same function): 8 below 20 GB; below 35 GB 24, or 80 from TP 4;
     * below 60 GB 32, or 160 from TP 4; below 160 GB 256, or 512 from TP 4; from 160 GB 512. {@code tp} is SGLang's
     * {@code tp_size}, every GPU of the instance.
     */
    static int sglangCudaGraphMaxBs(GpuSpec gpu, int tp) {
        double mib = gpu.memoryGib() * 1024;
        if (mib < 20 * 1024) {
            return 8;
        }
        if (mib < 35 * 1024) {
            return tp < 4 ? 24 : 80;
        }
        if (mib < 60 * 1024) {
            return tp < 4 ? 32 : 160;
        }
        if (mib < 160 * 1024) {
            return tp < 4 ? 256 : 512;
        }
        return 512;
    }

    /**
     * SGLang's default {@code mem_fraction_static} (the same function): it holds back, in MiB, 512 for constant
     * metadata, {@code max(chunked_prefill_size, 2048) × 1.5} for a large prefill's activations ({@code
     * max_prefill_tokens} instead when chunking is off), {@code cuda_graph_max_bs × 2} for CUDA graphs, {@code tp_size
     * / 8 × 1024} for a large parallel group, and with attention DP {@code cuda_graph_max_bs × dp × 3} more (× 1.5 more
     * again above 300); on GPUs above 60 GB at least 10,240; {@code mem_fraction_static = round((memory −
     * reserved) / memory, 3)}. Not modelled: the speculative-decoding and multimodal terms (servesim runs neither).
     */
    static double sglangMemFractionStatic(GpuSpec gpu, int tpSize, int dp, SglangConfig g) {
        double mib = gpu.memoryGib() * 1024;
        int graphBs = sglangCudaGraphMaxBs(gpu, tpSize);
        int chunk = g.chunkTokens();
        double reserved = 512;
        reserved += Math.max(chunk > 0 ? chunk : g.maxPrefillTokens(), 2048) * 1.5;
        reserved += graphBs * 2;
        reserved += tpSize / 8.0 * 1024;
        if (dp > 1) {
            reserved += (double) graphBs * dp * 3;
            if (graphBs > 300) {
                reserved += graphBs * dp * 1.5;
            }
        }
        if (mib > 60 * 1024) {
            reserved = Math.max(reserved, 10 * 1024);
        }
        return Math.round((mib - reserved) / mib * 1000) / 1000.0;
    }

    /**
     * SGLang's KV pool on one GPU ({@code ModelRunner.profile_max_num_token}, sgl-project/sglang {@code
     * model_runner_kv_cache_mixin.py} @ 001ccef0): {@code rest = free after the weights − free before them × (1 −
     * mem_fraction_static)}, i.e. {@code mem_fraction_static × memory − weights} with the memory free at start-up taken
     * as the device's (a CUDA context's few hundred MiB not subtracted); tokens {@code = rest / cell_size}, the KV
     * bytes per token on this GPU. With attention DP SGLang's {@code tp_size} counts every GPU of the instance
     * ({@code tensor_parallel × attention_dp}). {@code engine.sglang.mem_fraction_static} overrides the heuristic.
     */
    static Capacity sglangCapacity(
            ModelSpec m, GpuSpec gpu, TimingConfig t, int tp, int dp, int expertShards, SglangConfig g) {
        double fraction =
                g.memFractionStatic() != null ? g.memFractionStatic() : sglangMemFractionStatic(gpu, tp * dp, dp, g);
        double weights = weightBytes(m, gpu, t, tp, expertShards);
        double memory = gpu.memoryBytes();
        double available = fraction * memory - weights;
        return inGib(memory, weights, (1 - fraction) * memory, 0, available, EngineKind.SGLANG, fraction);
    }

    /**
     * TensorRT-LLM's KV pool on one GPU (PyTorch backend, {@code KvCacheCreator}: {@code estimate_max_tokens} and
     * {@code _cal_max_tokens}, NVIDIA/TensorRT-LLM {@code tensorrt_llm/_torch/pyexecutor/_util.py} @ d8ae02ca): after
     * loading the weights it runs dummy context requests of {@code max_num_tokens} tokens, then takes {@code
     * free_gpu_memory_fraction × (memory − peak)} (the estimation's own KV added back), the peak being the weights, the
     * forward's activations and the memory used outside torch (NCCL, CUDA graphs). The activation and non-torch terms
     * are estimated as for vLLM ({@link #activationBytes}, {@link #NON_TORCH_GIB}): the dummy requests are prompts of
     * {@code max_seq_len − 1} tokens (the model's context) filling {@code max_num_tokens}, each sampling one token.
     */
    static Capacity trtllmCapacity(
            ModelSpec m, GpuSpec gpu, TimingConfig t, int tp, int expertShards, io.servesim.config.TrtllmConfig c) {
        double weights = weightBytes(m, gpu, t, tp, expertShards);
        int promptTokens = m.maxPositionEmbeddings() > 1 ? m.maxPositionEmbeddings() - 1 : c.maxNumTokens();
        int dummyRequests = (c.maxNumTokens() + promptTokens - 1) / promptTokens;
        double activation = activationBytes(m, tp, dummyRequests, c.maxNumTokens());
        double memory = gpu.memoryBytes();
        double fraction = c.freeGpuMemoryFraction();
        double available = fraction * (memory - weights - activation - NON_TORCH_GIB * GIB);
        return inGib(memory, weights, activation, NON_TORCH_GIB, available, EngineKind.TRTLLM, fraction);
    }

    /** A derivation's terms, from bytes (the non-torch term already in GiB); what is left for the KV cache at least 0. */
    private static Capacity inGib(
            double memory,
            double weights,
            double activation,
            double nonTorchGib,
            double available,
            EngineKind engine,
            double fraction) {
        return new Capacity(
                memory / GIB,
                weights / GIB,
                activation / GIB,
                nonTorchGib,
                Math.max(0, available) / GIB,
                engine,
                fraction);
    }

    /** The weights one GPU holds: the dense part over TP, the experts over their shards (MXFP4 padded as stored). */
    static double weightBytes(ModelSpec m, GpuSpec gpu, TimingConfig t, int tp, int expertShards) {
        // the linear layers in the served type (the checkpoint's FP8 when it states one); the input embedding and the
        // LM head stay BF16 under vLLM's FP8 methods (RooflineTiming.denseWeightSeconds), both split over TP
        double linearBytes = m.weightDtype(t.weightDtype()).bytes();
        double embeddings = (double) m.embeddingParams() / tp * TimingConfig.Dtype.BF16.bytes();
        // latent attention's down-projections are whole on every TP rank (RooflineTiming.latentModelWeightSeconds):
        // (TP - 1) / TP of them beyond the share the sharded layers' sum gives each rank (0 without them)
        double replicated = (double) m.numLayers() * m.replicatedParamsPerLayer();
        double whole = replicated * (tp - 1) / tp * linearBytes;
        if (!m.moe()) {
            return (double) (m.totalParams() - m.embeddingParams()) * linearBytes / tp + embeddings + whole;
        }
        double experts = (double) m.moeLayers() * m.numExperts() * m.paramsPerExpert();
        TimingConfig.Dtype expertDtype = m.expertDtype(t.expertDtype(), t.weightDtype());
        int shards = Math.max(tp, expertShards);
        double expertWeights = experts / shards * expertDtype.bytes();
        GpuSpec.MoeBackend backend =
                gpu.mxfp4Moe() == null ? null : gpu.mxfp4Moe().backend();
        if (expertDtype == TimingConfig.Dtype.MXFP4 && backend != null) {
            /*
             * vLLM's MXFP4 backends store each expert padded (GpuSpec.MoeBackend): the hidden size and each
             * GPU's intermediate slice rounded up. Experts are sliced along the intermediate size over the
             * shards, or split whole under expert parallelism.
             */
            long hidden = backend.paddedHidden(m.hiddenSize());
            double perGpuExperts = t.expertParallel() ? (double) m.numExperts() / shards : m.numExperts();
            long slice = backend.paddedIntermediate(
                    t.expertParallel() ? m.expertIntermediateSize() : m.expertIntermediateSize() / shards);
            expertWeights = m.moeLayers() * perGpuExperts * 3.0 * hidden * slice * expertDtype.bytes();
        }
        return (m.totalParams() - m.embeddingParams() - experts) / tp * linearBytes
                + embeddings
                + expertWeights
                + whole;
    }

    /**
     * The activation peak of a profiling forward of {@code tokens} tokens: the MLP's gate/up output plus a few
     * hidden-size buffers per token, or the sampler's fp32 logits and probabilities for {@code min(seqs, tokens)}
     * requests, whichever is larger.
     */
    static double activationBytes(ModelSpec m, int tp, int seqs, int tokens) {
        // the widest MLP a layer runs: the routed experts' (k per token), or a MoE model's dense layers' SwiGLU
        double mlpWidth = m.moe()
                ? Math.max(
                        (double) m.expertsPerToken() * m.expertIntermediateSize(),
                        m.denseLayers() > 0 ? m.intermediateSize() : 0)
                : m.intermediateSize();
        double forward = tokens * (2 * mlpWidth / tp + 4.0 * m.hiddenSize()) * 2;
        double sampler = (double) Math.min(seqs, tokens) * m.vocabSize() * 4 * 2;
        return Math.max(forward, sampler);
    }

    /** {@code e} with the settings this deployment resolved (SGLang's chunk size for the GPU); others unchanged. */
    public EngineConfig engine(EngineConfig e) {
        return sglang != null && e.sglang() != null ? e.withSglang(sglang) : e;
    }

    /** Reads a calibration profile ({@code servesim calibrate}) over the configured roofline parameters. */
    static RooflineConfig loadCalibration(String path, RooflineConfig base, Path baseDir) {
        Path p = SimConfig.resolve(baseDir, path);
        if (!Files.isRegularFile(p)) {
            throw new ConfigException("timing.calibration", "no such file: " + path);
        }
        JsonNode root;
        try {
            root = YAMLMapper.builder().build().readTree(Files.readString(p));
        } catch (JacksonException | IOException e) {
            throw new ConfigException("timing.calibration", path + " is not a calibration profile: " + e.getMessage());
        }
        JsonNode r = root.get("roofline");
        if (r == null || !r.isObject()) {
            throw new ConfigException("timing.calibration", path + ": missing the 'roofline' section");
        }
        for (String k : r.propertyNames()) {
            if (!RooflineConfig.KEYS.contains(k)) {
                throw new ConfigException(
                        "timing.calibration",
                        path + ": unknown key roofline." + k + " (allowed: " + String.join(", ", RooflineConfig.KEYS)
                                + ")");
            }
            if (!r.get(k).isNumber()) {
                throw new ConfigException("timing.calibration", path + ": roofline." + k + ": expected a number");
            }
        }
        try {
            RooflineConfig out = base;
            for (String k : r.propertyNames()) {
                out = out.with(k, r.get(k).asDouble());
            }
            return out;
        } catch (ConfigException ex) {
            throw ex.under("timing.calibration(" + path + ").roofline");
        }
    }
}
