package io.servesim.config;

/**
 * Efficiencies and overheads of the roofline step-time model (docs/timing.md gives each default's source and the
 * corpus fit behind it).
 *
 * @param mfu fraction of the FLOP/s vLLM's compute-bound GEMMs reach on the GPU (measured, {@code
 *     GpuSpec.Achieved}) that a forward pass's matrix multiplies and attention reach, (0, 1]
 * @param mbu fraction of the rate vLLM's small-batch GEMMs stream a weight matrix of each shape at on the GPU
 *     (measured, {@code GpuSpec.StreamingShapes}) that a step's weight reads reach, (0, 1]
 * @param stepOverheadUs CPU cost of every engine step (scheduling, input preparation, sampling launch), µs
 * @param perSequenceOverheadUs CPU cost per request in the batch (sampling, detokenisation, output handling), µs
 * @param collectiveLatencyUs latency of one all-reduce (or all-to-all) between two GPUs over NVLink, µs; a group of
 *     TP GPUs pays {@code log2(TP)} times it (the link model, for GPUs and group sizes without a measured all-reduce
 *     table, and for expert-parallel all-to-alls)
 * @param pcieCollectiveLatencyUs the same over PCIe (GPUs without NVLink), µs
 * @param layerOverheadUs GPU time per decoder layer per step that no GEMM or attention term explains (norms, rotary,
 *     activation, attention metadata, kernel launch gaps), µs
 * @param attentionOverheadUs GPU time per sequence in the batch per decoder layer that attention pays beyond its KV
 *     read and FLOPs (the paged kernel's per-sequence work: block-table walk, split-KV reduction), µs
 * @param kvMbu fraction of the GPU's measured large-GEMM streaming rate ({@code GpuSpec.Achieved#gbytesPerS}) that
 *     attention's paged KV reads reach, (0, 1]
 * @param moeEfficiency fraction of its rate that a MoE layer's fused expert kernel reaches inside a forward pass:
 *     of the kernel's measured streaming and compute rates where the GPU has a measured fused MoE for the experts'
 *     element type, else of {@code mbu} of the weight-streaming rate and of the measured fused-MoE compute rate
 *     (its fixed time per call is not stretched), (0, 1]
 * @param collectiveOverheadUs time each all-reduce costs a forward pass beyond vLLM's all-reduce kernel as measured
 *     in isolation (GPUs with a measured all-reduce table: stream synchronisation and the ranks' skew), µs
 * @param collectiveEfficiency fraction of the rate vLLM's TP all-reduce reaches in isolation (its measured table,
 *     {@code GpuSpec.CollectiveTable}) that it reaches inside a forward pass: each all-reduce takes the table's
 *     latency at its message size divided by this, on GPUs linked by NVLink (the corpus it is fitted on; the DP
 *     dispatch and combine keep their measured rate), (0, 1]
 * @param pcieCollectiveEfficiency the same for GPUs linked by PCIe, which no corpus run measures: by default the
 *     measured rate (1.0), as for the DP collectives, (0, 1]
 * @param kneeExponent sharpness p of the roofline's knee: an operation takes {@code (compute^p + memory^p)^(1/p)}
 *     rather than the larger of the two (real kernels slow down before the knee), in [1, 1000]; large values
 *     approach the classic {@code max}
 */
public record RooflineConfig(
        double mfu,
        double mbu,
        double stepOverheadUs,
        double perSequenceOverheadUs,
        double collectiveLatencyUs,
        double pcieCollectiveLatencyUs,
        double layerOverheadUs,
        double attentionOverheadUs,
        double kvMbu,
        double moeEfficiency,
        double collectiveOverheadUs,
        double collectiveEfficiency,
        double pcieCollectiveEfficiency,
        double kneeExponent) {
    /** Keys of the roofline section, in declaration order (config files and calibration profiles). */
    public static final java.util.List<String> KEYS = java.util.List.of(
            "mfu",
            "mbu",
            "step_overhead_us",
            "per_sequence_overhead_us",
            "collective_latency_us",
            "pcie_collective_latency_us",
            "layer_overhead_us",
            "attention_overhead_us",
            "kv_mbu",
            "moe_efficiency",
            "collective_overhead_us",
            "collective_efficiency",
            "pcie_collective_efficiency",
            "knee_exponent");

    /** Validates ranges. */
    public RooflineConfig {
        fraction("mfu", mfu);
        fraction("mbu", mbu);
        Check.atLeast("step_overhead_us", stepOverheadUs, 0.0);
        Check.atLeast("per_sequence_overhead_us", perSequenceOverheadUs, 0.0);
        Check.atLeast("collective_latency_us", collectiveLatencyUs, 0.0);
        Check.atLeast("pcie_collective_latency_us", pcieCollectiveLatencyUs, 0.0);
        Check.atLeast("layer_overhead_us", layerOverheadUs, 0.0);
        Check.atLeast("attention_overhead_us", attentionOverheadUs, 0.0);
        fraction("kv_mbu", kvMbu);
        fraction("moe_efficiency", moeEfficiency);
        Check.atLeast("collective_overhead_us", collectiveOverheadUs, 0.0);
        fraction("collective_efficiency", collectiveEfficiency);
        fraction("pcie_collective_efficiency", pcieCollectiveEfficiency);
        Check.atLeast("knee_exponent", kneeExponent, 1.0);
        if (kneeExponent > 1000) {
            throw new ConfigException(
                    "knee_exponent",
                    "must be at most 1000 (already the classic max within 0.07 %), got " + kneeExponent);
        }
    }

    /** The value of a key of {@link #KEYS}. */
    public double get(String key) {
        return switch (key) {
            case "mfu" -> mfu;
            case "mbu" -> mbu;
            case "step_overhead_us" -> stepOverheadUs;
            case "per_sequence_overhead_us" -> perSequenceOverheadUs;
            case "collective_latency_us" -> collectiveLatencyUs;
            case "pcie_collective_latency_us" -> pcieCollectiveLatencyUs;
            case "layer_overhead_us" -> layerOverheadUs;
            case "attention_overhead_us" -> attentionOverheadUs;
            case "kv_mbu" -> kvMbu;
            case "moe_efficiency" -> moeEfficiency;
            case "collective_overhead_us" -> collectiveOverheadUs;
            case "collective_efficiency" -> collectiveEfficiency;
            case "pcie_collective_efficiency" -> pcieCollectiveEfficiency;
            case "knee_exponent" -> kneeExponent;
            default -> throw new IllegalArgumentException("unknown roofline key " + key);
        };
    }

    /** A copy with one key of {@link #KEYS} replaced. */
    public RooflineConfig with(String key, double value) {
        double[] v = new double[KEYS.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = get(KEYS.get(i));
        }
        int at = KEYS.indexOf(key);
        if (at < 0) {
            throw new IllegalArgumentException("unknown roofline key " + key);
        }
        v[at] = value;
        return new RooflineConfig(
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]);
    }

    static void fraction(String field, double v) {
        if (!(v > 0 && v <= 1)) {
            throw new ConfigException(field, "must be in (0, 1], got " + v);
        }
    }
}
