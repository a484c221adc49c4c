package io.servesim.config;

import java.util.List;

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
 * @param calibration path to a calibration profile written by {@code servesim calibrate}, or null
 * @param fixed fixed model parameters
 * @param polynomial polynomial model parameters
 * @param roofline roofline model parameters
 * @param profile profile model parameters
 */
public record TimingConfig(
        String type,
        String model,
        String gpu,
        CustomGpuConfig customGpu,
        int tensorParallel,
        boolean expertParallel,
        String weightDtype,
        String kvDtype,
        double gpuMemoryUtilization,
        String calibration,
        FixedTimingConfig fixed,
        PolynomialTimingConfig polynomial,
        RooflineConfig roofline,
        ProfileTimingConfig profile) {
    /** Data types. */
    public static final List<String> DTYPES = List.of("bf16", "fp8");

    /** Validates presence and ranges; the type name is checked against the timing registry. */
    public TimingConfig {
        Check.present("type", type);
        Check.atLeast("tensor_parallel", tensorParallel, 1);
        Check.oneOf("weight_dtype", weightDtype, DTYPES);
        Check.oneOf("kv_dtype", kvDtype, DTYPES);
        RooflineConfig.fraction("gpu_memory_utilization", gpuMemoryUtilization);
        Check.present("custom_gpu", customGpu);
        Check.present("fixed", fixed);
        Check.present("polynomial", polynomial);
        Check.present("roofline", roofline);
        Check.present("profile", profile);
        if (type.equals("roofline") && (model == null || gpu == null)) {
            throw new ConfigException("type", "roofline needs timing.model and timing.gpu");
        }
    }

    /** The type after resolving {@code auto}. */
    public String effectiveType() {
        if (!type.equals("auto")) {
            return type;
        }
        return model != null && gpu != null ? "roofline" : "fixed";
    }

    /** Bytes per weight element. */
    public int weightBytes() {
        return weightDtype.equals("fp8") ? 1 : 2;
    }

    /** Bytes per KV element. */
    public int kvBytes() {
        return kvDtype.equals("fp8") ? 1 : 2;
    }
}
