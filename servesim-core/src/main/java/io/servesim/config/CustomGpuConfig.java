package io.servesim.config;

/**
 * A GPU not among the presets ({@code timing.gpu: custom}); values per GPU, dense tensor rates, decimal units.
 *
 * @param memoryGib device memory, GiB
 * @param bandwidthGbytesPerS memory bandwidth, GB/s
 * @param bf16Tflops dense BF16 TFLOP/s
 * @param fp8Tflops dense FP8 TFLOP/s (0: none)
 * @param linkGbytesPerS GPU-to-GPU bandwidth per direction, GB/s
 * @param achievedBf16Tflops BF16 TFLOP/s compute-bound GEMMs measurably reach (null: datasheet × the measured
 *     presets' mean ratio)
 * @param achievedFp8Tflops FP8 TFLOP/s compute-bound GEMMs measurably reach (null: as above)
 * @param achievedGbytesPerS GB/s small-batch GEMMs measurably stream weights at (null: as above)
 * @param attentionKernel the attention kernel vLLM runs on the GPU's architecture (fa3 on Hopper, flashinfer on
 *     Blackwell data-centre parts, fa2 on the others)
 */
public record CustomGpuConfig(
        Double memoryGib,
        Double bandwidthGbytesPerS,
        Double bf16Tflops,
        Double fp8Tflops,
        Double linkGbytesPerS,
        Double achievedBf16Tflops,
        Double achievedFp8Tflops,
        Double achievedGbytesPerS,
        AttentionKernel attentionKernel) {
    /** Validates the values that are set (all are required when the custom GPU is used). */
    public CustomGpuConfig {
        positiveIfSet("memory_gib", memoryGib);
        positiveIfSet("bandwidth_gbytes_per_s", bandwidthGbytesPerS);
        positiveIfSet("bf16_tflops", bf16Tflops);
        if (fp8Tflops != null) {
            Check.atLeast("fp8_tflops", fp8Tflops, 0.0);
        }
        positiveIfSet("link_gbytes_per_s", linkGbytesPerS);
        positiveIfSet("achieved_bf16_tflops", achievedBf16Tflops);
        positiveIfSet("achieved_fp8_tflops", achievedFp8Tflops);
        positiveIfSet("achieved_gbytes_per_s", achievedGbytesPerS);
        Check.present("attention_kernel", attentionKernel);
    }

    private static void positiveIfSet(String field, Double v) {
        if (v != null) {
            Check.positive(field, v);
        }
    }
}
