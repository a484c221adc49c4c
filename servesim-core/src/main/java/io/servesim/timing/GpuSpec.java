package io.servesim.timing;

import io.servesim.config.TimingConfig;

/**
 * One GPU's roofline: memory, bandwidth, dense tensor throughput and its link to peer GPUs (values per GPU, dense,
 * decimal GB/s and TFLOP/s).
 *
 * @param name preset name (or {@code custom})
 * @param memoryGib device memory the CUDA runtime reports, GiB
 * @param bandwidthGbytesPerS memory bandwidth, GB/s
 * @param bf16Tflops dense BF16 tensor throughput, TFLOP/s
 * @param fp8Tflops dense FP8 tensor throughput, TFLOP/s (0: none; FP8 weights then run at the BF16 rate)
 * @param link the GPU-to-GPU link's kind (nvlink4, pcie5, …)
 * @param linkGbytesPerS GPU-to-GPU bandwidth per direction, GB/s
 * @param source where the values come from
 */
public record GpuSpec(
        String name,
        double memoryGib,
        double bandwidthGbytesPerS,
        double bf16Tflops,
        double fp8Tflops,
        String link,
        double linkGbytesPerS,
        String source) {

    /** Whether GPUs talk over NVLink ({@code link} starts with {@code nvlink}) rather than PCIe. */
    public boolean hasNvlink() {
        return link.startsWith("nvlink");
    }

    /** Device memory in bytes. */
    public double memoryBytes() {
        return memoryGib * (1L << 30);
    }

    /** Dense tensor FLOP/s for a weight dtype (FP8 falls back to the BF16 rate on GPUs without one). */
    public double flopsPerSecond(TimingConfig.Dtype dtype) {
        double tflops = dtype == TimingConfig.Dtype.FP8 && fp8Tflops > 0 ? fp8Tflops : bf16Tflops;
        return tflops * 1e12;
    }
}
