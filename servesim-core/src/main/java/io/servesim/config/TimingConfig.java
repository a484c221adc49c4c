package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

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
 * @param weightDtype bf16 or fp8
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
        Dtype kvDtype,
        double gpuMemoryUtilization,
        boolean gpuP2p,
        Double linkGbytesPerS,
        String vllmVersion,
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
        FP8("fp8", "1 byte per element; FP8 tensor rate where the GPU has one (else BF16's)", 1);

        private final String configName;
        private final String description;
        private final int bytes;

        Dtype(String configName, String description, int bytes) {
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

        /** Bytes per element. */
        public int bytes() {
            return bytes;
        }
    }

    /** Validates presence and ranges. */
    public TimingConfig {
        Check.present("type", type);
        Check.atLeast("tensor_parallel", tensorParallel, 1);
        Check.present("weight_dtype", weightDtype);
        Check.present("kv_dtype", kvDtype);
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

    /** Bytes per weight element. */
    public int weightBytes() {
        return weightDtype.bytes();
    }

    /** Bytes per KV element. */
    public int kvBytes() {
        return kvDtype.bytes();
    }
}
