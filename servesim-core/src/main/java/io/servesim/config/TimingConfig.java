package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The step-time model and the deployment it predicts: {@code type} ({@code auto} = {@code roofline} when a model
 * and a GPU are named, else {@code fixed}), the model (preset or config.json path), GPU, parallelism, dtypes, and
 * each model's parameters.
 *
 * @param type auto, fixed, polynomial, roofline or profile
 * @param model preset name or path to a Hugging Face config.json, or null
 * @param gpu GPU preset name, {@code custom} (then {@code custom_gpu}), or null
 * @param customGpu the custom GPU's values
 * @param tensorParallel GPUs per rank sharing each layer
 * @param expertParallel whether MoE experts are split over the worker's GPUs instead of sharded by TP
 * @param weightDtype bf16, fp8 (per-tensor scales), fp8_block (128 × 128 block scales) or nvfp4: the non-expert
 *     weights' type when the checkpoint does not state one; a checkpoint whose config.json states FP8 quantization is served
 *     in it whatever this says ({@link io.servesim.timing.ModelSpec#checkpointDtype})
 * @param expertDtype a MoE model's routed experts: bf16, fp8, mxfp4, nvfp4 or int4 (null: the checkpoint's, as the model preset or
 *     config.json's {@code quantization_config} states it, else {@code weightDtype})
 * @param kvDtype bf16 or fp8
 * @param gpuMemoryUtilization vLLM's gpu_memory_utilization, (0, 1]
 * @param gpuP2p whether a worker's GPUs reach each other peer to peer (NVLink, or PCIe with P2P); false: vLLM turns
 *     its custom all-reduce off and NCCL stages collectives through host memory, so the measured (peer-to-peer)
 *     collective tables do not apply and the link model prices them
 * @param linkGbytesPerS the GPU-to-GPU bandwidth per direction collectives reach on this deployment, GB/s, replacing
 *     the GPU preset's link and its measured collective tables (null: the preset's)
 * @param vllmVersion the vLLM version the deployment runs (e.g. {@code 0.19.0}): where a GPU's kernels were measured
 *     on several vLLM versions and differ, the newest measured version not newer than it prices them (the oldest
 *     measured when it predates them all); null: the newest measured
 * @param mxfp4Mxfp8 vLLM's {@code VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8}: MXFP4 experts computed on MXFP8 activations
 *     (FlashInfer's TRT-LLM kernel, Blackwell only) instead of BF16 ones, priced with that kernel's measured fit and
 *     FLOP rate; left out of written configs while false, so configs written before the key existed are unchanged
 * @param calibration path to a calibration profile written by {@code servesim calibrate}, or null
 * @param fixed fixed model parameters
 * @param polynomial polynomial model parameters
 * @param roofline roofline model parameters
 * @param profile profile model parameters
 */
public record TimingConfig(
        TimingType type,
        String model,
        String gpu,
        CustomGpuConfig customGpu,
        int tensorParallel,
        boolean expertParallel,
        Dtype weightDtype,
        Dtype expertDtype,
        Dtype kvDtype,
        double gpuMemoryUtilization,
        boolean gpuP2p,
        Double linkGbytesPerS,
        String vllmVersion,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean mxfp4Mxfp8,
        String calibration,
        FixedTimingConfig fixed,
        PolynomialTimingConfig polynomial,
        RooflineConfig roofline,
        ProfileTimingConfig profile) {
    /** Element types of weights and KV ({@code timing.weight_dtype}, {@code timing.kv_dtype}). */
    public enum Dtype implements Named {
        /** 2 bytes, the BF16 tensor rate. */
        BF16("bf16", "2 bytes per element; BF16 tensor rate", 2),
        /** 1 byte, the FP8 tensor rate where the GPU has one. */
        FP8("fp8", "1 byte per element; FP8 tensor rate where the GPU has one (else BF16's)", 1),
        /**
         * 1 byte, with one scale per 128 × 128 block of each weight matrix and the activations quantized per group of
         * 128 on the fly: the FP8 checkpoints of Qwen3, DeepSeek and MiniMax ({@code quantization_config} with a
         * {@code weight_block_size}). vLLM runs these through its own block-scaled GEMMs, whose fixed time per call
         * is measured separately ({@code measured-kernels.yaml} {@code fp8_block_gemm}); a MoE model's FP8 experts
         * are block-scaled either way.
         */
        FP8_BLOCK(
                "fp8_block",
                "1 byte per element, scaled per 128 x 128 block (Qwen3, DeepSeek, MiniMax FP8 checkpoints); vLLM's"
                        + " block-scaled GEMMs",
                1),
        /**
         * OCP MX FP4: 4-bit elements with one 8-bit power-of-two scale per 32 (4.25 bits), for a MoE model's experts
         * only, as vLLM's MXFP4 method quantizes them (gpt-oss checkpoints); computed with BF16 activations.
         */
        MXFP4(
                "mxfp4",
                "4.25 bits per element (4-bit values, an 8-bit scale per 32); a MoE model's experts only; BF16 rate",
                (4 + 8 / 32.0) / 8),
        /**
         * NVIDIA's NVFP4: 4-bit E2M1 elements with one FP8 scale per 16 (4.5 bits; the per-tensor FP32 scale is
         * negligible), weights and activations, as ModelOpt's and compressed-tensors' NVFP4 checkpoints store them.
         * On GPUs with FP4 tensor cores (Blackwell) at the measured NVFP4 GEMM and fused-MoE rates; elsewhere vLLM
         * runs them weight-only through Marlin (its {@code ModelOptNvFp4LinearMethod} falls back on GPUs below compute
         * capability 10), at the BF16 rates with the 4.5-bit bytes.
         */
        NVFP4(
                "nvfp4",
                "4.5 bits per element (4-bit values, an FP8 scale per 16); FP4 tensor rate where measured (Blackwell),"
                        + " else BF16's (Marlin, weight-only)",
                (4 + 8 / 16.0) / 8),
        /**
         * 4-bit integers with one BF16 scale per group of 32 (4.5 bits), for a MoE model's experts only, as
         * compressed-tensors W4A16 checkpoints store them (Moonshot's Kimi-K2.5: {@code
         * pack-quantized}, symmetric, group size 32, attention and shared experts left in BF16). vLLM runs them weight-only
         * on BF16 activations through its Marlin fused MoE ({@code CompressedTensorsWNA16MarlinMoEMethod}), priced with
         * that kernel's measured fit and FLOP rate.
         */
        INT4(
                "int4",
                "4.5 bits per element (4-bit integers, a BF16 scale per 32); a MoE model's experts only; Marlin,"
                        + " BF16 activations",
                (4 + 16 / 32.0) / 8);

        private final String configName;
        private final String description;
        private final double bytes;

        Dtype(String configName, String description, double bytes) {
            this.configName = configName;
            this.description = description;
            this.bytes = bytes;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Dtype of(String name) {
            return Named.parse(Dtype.class, name);
        }

        @Override
        public String configName() {
            return configName;
        }

        @Override
        public String description() {
            return description;
        }

        /** Bytes per element (fractional for the 4-bit types). */
        public double bytes() {
            return bytes;
        }

        /** Whether elements are whole bytes (every type but the 4-bit ones), as the KV cache needs. */
        public boolean wholeBytes() {
            return bytes == Math.rint(bytes);
        }
    }

    /** Validates presence and ranges. */
    public TimingConfig {
        Check.present("type", type);
        Check.atLeast("tensor_parallel", tensorParallel, 1);
        Check.present("weight_dtype", weightDtype);
        Check.present("kv_dtype", kvDtype);
        if (weightDtype == Dtype.MXFP4 || weightDtype == Dtype.INT4) {
            throw new ConfigException(
                    "weight_dtype",
                    "expected bf16, fp8, fp8_block or nvfp4, got " + weightDtype.configName()
                            + (weightDtype == Dtype.MXFP4
                                    ? " (vLLM's MXFP4 method quantizes only a MoE model's experts and leaves the other"
                                            + " layers in BF16: set timing.expert_dtype)"
                                    : " (4-bit integer weights are priced for a MoE model's experts only, as"
                                            + " W4A16 MoE checkpoints store them: set timing.expert_dtype)"));
        }
        if (!kvDtype.wholeBytes() || kvDtype == Dtype.FP8_BLOCK) {
            throw new ConfigException("kv_dtype", "expected bf16 or fp8, got " + kvDtype.configName());
        }
        RooflineConfig.fraction("gpu_memory_utilization", gpuMemoryUtilization);
        if (linkGbytesPerS != null && !(linkGbytesPerS > 0 && Double.isFinite(linkGbytesPerS))) {
            throw new ConfigException("link_gbytes_per_s", "must be a positive number of GB/s, got " + linkGbytesPerS);
        }
        VllmVersion.parse(vllmVersion, "vllm_version");
        Check.present("custom_gpu", customGpu);
        Check.present("fixed", fixed);
        Check.present("polynomial", polynomial);
        Check.present("roofline", roofline);
        Check.present("profile", profile);
        if (type.needsModelAndGpu() && (model == null || gpu == null)) {
            throw new ConfigException("type", type.configName() + " needs timing.model and timing.gpu");
        }
    }

    /** The type after resolving {@code auto}: never {@link TimingType#AUTO}. */
    public TimingType effectiveType() {
        if (type != TimingType.AUTO) {
            return type;
        }
        return model != null && gpu != null ? TimingType.ROOFLINE : TimingType.FIXED;
    }

    /** {@link #vllmVersion} parsed, or null when not stated. */
    public VllmVersion version() {
        return VllmVersion.parse(vllmVersion, "vllm_version");
    }

    /** Bytes per weight element (fractional for NVFP4). */
    public double weightBytes() {
        return weightDtype.bytes();
    }
}
