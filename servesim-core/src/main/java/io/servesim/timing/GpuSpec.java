package io.servesim.timing;

import io.servesim.config.AttentionKernel;
import io.servesim.config.TimingConfig;

/**
 * One GPU's roofline: memory, bandwidth, dense tensor throughput (datasheet and as vLLM's GEMM kernels measurably
 * reach it) and its link to peer GPUs (values per GPU, dense, decimal GB/s and TFLOP/s).
 *
 * @param name preset name (or {@code custom})
 * @param memoryGib device memory the CUDA runtime reports, GiB
 * @param bandwidthGbytesPerS memory bandwidth, GB/s (datasheet)
 * @param bf16Tflops dense BF16 tensor throughput, TFLOP/s (datasheet)
 * @param fp8Tflops dense FP8 tensor throughput, TFLOP/s (datasheet; 0: none, FP8 weights then run at the BF16 rate)
 * @param fp4Tflops dense NVFP4 tensor throughput, TFLOP/s (datasheet; 0: none, NVFP4 weights then run weight-only at
 *     the BF16 rate)
 * @param link the GPU-to-GPU link's kind (nvlink4, pcie5, …)
 * @param linkGbytesPerS GPU-to-GPU bandwidth per direction, GB/s
 * @param source where the values come from
 * @param achieved the GEMM throughput vLLM reaches on this GPU: measured ({@code measured-kernels.yaml}) or, for a
 *     GPU nobody measured, the datasheet scaled by the measured GPUs' mean ratios ({@link Specs#achievedFor})
 * @param allReduce vLLM's all-reduce latency as measured on this GPU, or null (then the link model applies)
 * @param allGather NCCL's all-gather latency as measured on this GPU (expert-parallel dispatch), or null
 * @param reduceScatter NCCL's reduce-scatter latency as measured on this GPU (expert-parallel combine), or null
 * @param attentionKernel the attention kernel vLLM runs on this GPU's architecture by default
 * @param mxfp4Moe vLLM's fused MoE with MXFP4 experts as measured on this GPU, or null (then the roofline prices it)
 * @param fusedMoe vLLM's fused MoE with BF16 or FP8 experts as measured on this GPU, or null (then the roofline prices
 *     them)
 * @param blockFp8Gemm vLLM's GEMM with 128 × 128 block-scaled FP8 weights as measured on this GPU, or null (then such
 *     weights are priced as per-tensor FP8)
 * @param fusedAllReduce the fused all-reduce + RMSNorm vLLM runs on this GPU for a TP group ({@link
 *     Specs#fusedAllReduce}), or null when it runs none (then {@code allReduce} prices every all-reduce)
 * @param nvfp4 vLLM's NVFP4 kernels as measured on this GPU's FP4 tensor cores, or null where nobody measured them
 *     (then NVFP4 weights run weight-only at the BF16 rates, as vLLM's Marlin fallback runs them below Blackwell)
 */
public record GpuSpec(
        String name,
        double memoryGib,
        double bandwidthGbytesPerS,
        double bf16Tflops,
        double fp8Tflops,
        double fp4Tflops,
        String link,
        double linkGbytesPerS,
        String source,
        Achieved achieved,
        CollectiveTable allReduce,
        CollectiveTable allGather,
        CollectiveTable reduceScatter,
        AttentionKernel attentionKernel,
        MoeKernel mxfp4Moe,
        FusedMoe fusedMoe,
        QuantizedGemm blockFp8Gemm,
        FusedAllReduce fusedAllReduce,
        Nvfp4Kernels nvfp4) {

    /**
     * vLLM's NVFP4 kernels on a GPU with FP4 tensor cores ({@code measured-kernels.yaml} {@code nvfp4_streaming},
     * {@code nvfp4_tflops}, {@code nvfp4_moe}, {@code moe_nvfp4_tflops}; AIConfigurator's vLLM tables, gemm_dtype and
     * moe_dtype {@code nvfp4}).
     *
     * @param shapes how fast the linear layer with NVFP4 weights and activations streams a weight of each shape (9/16
     *     byte per element) at decode sizes, relative to the GPU's BF16 {@link Achieved#gbytesPerS}: priced as BF16
     *     weights are, by their shape's measured rate, and so under the same calibration ({@code mbu})
     * @param tflops that GEMM's compute-bound rate, TFLOP/s
     * @param moe the fused MoE with NVFP4 experts, or null when not measured (then the roofline prices them)
     * @param moeTflops that fused MoE's compute-bound rate, TFLOP/s, or 0 when not measured (then the BF16 fused-MoE
     *     rate)
     */
    public record Nvfp4Kernels(StreamingShapes shapes, double tflops, MoeKernel moe, double moeTflops) {
        /** Validates the pieces. */
        public Nvfp4Kernels {
            if (shapes == null) {
                throw new IllegalArgumentException("NVFP4 kernels need the measured streaming grid");
            }
            if (!(tflops > 0 && Double.isFinite(tflops))) {
                throw new IllegalArgumentException("nvfp4_tflops must be > 0, got " + tflops);
            }
            if (!(moeTflops >= 0 && Double.isFinite(moeTflops))) {
                throw new IllegalArgumentException("moe_nvfp4_tflops must be >= 0, got " + moeTflops);
            }
        }
    }

    /**
     * vLLM's fused all-reduce + RMSNorm for one tensor-parallel group: FlashInfer's {@code trtllm_allreduce_fusion},
     * which replaces the all-reduce of a step's hidden states (and the RMSNorm after it) for steps whose input tensor
     * is at most {@code maxBytes} ({@link Specs#fusedAllReduce} says when vLLM runs it).
     *
     * @param table the kernel's measured latency per group and message size (TensorRT-LLM's all-reduce, whose kernels
     *     FlashInfer's fusion ports)
     * @param maxBytes vLLM's size limit for the group, bytes of BF16 hidden states (tokens × hidden × 2)
     * @param withAttentionDp whether that vLLM version keeps the fusion when attention DP is above 1
     */
    public record FusedAllReduce(CollectiveTable table, long maxBytes, boolean withAttentionDp) {}

    /**
     * The fused-MoE kernel families vLLM picks among ({@code measured-kernels.yaml} {@code backend}), with how each
     * pads MXFP4 experts' weights when it loads them (vLLM's {@code mxfp4_round_up_hidden_size_and_intermediate_size},
     * {@code fused_moe/oracle/mxfp4.py} at the pinned commit 28be48fa9): the hidden size and each GPU's slice of the
     * intermediate size are rounded up to these multiples. Only MXFP4 experts are padded; a BF16 or FP8 {@code
     * fused_moe} fit names its kernel only so that {@link Specs#fusedMoe} can choose it.
     */
    public enum MoeBackend {
        /** Triton kernels (MXFP4: OpenAI's, on Hopper): the intermediate slice to 64. */
        TRITON(1, 64),
        /** Marlin (Ampere, Ada, RTX PRO 6000): the hidden size to 256, the intermediate slice to 128. */
        MARLIN(256, 128),
        /** FlashInfer's TRT-LLM kernels (Blackwell data centre): both to 256. */
        FLASHINFER_TRTLLM(256, 256),
        /** FlashInfer's CUTLASS kernels: both to 128. */
        FLASHINFER_CUTLASS(128, 128);

        private final int hiddenMultiple;
        private final int intermediateMultiple;

        MoeBackend(int hiddenMultiple, int intermediateMultiple) {
            this.hiddenMultiple = hiddenMultiple;
            this.intermediateMultiple = intermediateMultiple;
        }

        /** The hidden size as this backend stores it. */
        public long paddedHidden(long hidden) {
            return roundUp(hidden, hiddenMultiple);
        }

        /** One GPU's slice of an expert's intermediate size as this backend stores it. */
        public long paddedIntermediate(long intermediate) {
            return roundUp(intermediate, intermediateMultiple);
        }

        private static long roundUp(long n, int multiple) {
            return (n + multiple - 1) / multiple * multiple;
        }
    }

    /**
     * A fused-MoE kernel as measured on a GPU: a fixed time per layer call (launch, routing, gather and scatter)
     * plus the bytes of the experts a step touches at a streaming rate ({@code measured-kernels.yaml} {@code
     * mxfp4_moe} and {@code fused_moe}, fitted to AIConfigurator's tables for one vLLM version).
     *
     * @param callUs fixed microseconds per MoE layer call
     * @param gbytesPerS the touched experts' weights streamed per second, GB/s
     * @param backend the kernel family vLLM picked on this GPU, or null when the tables do not name it
     */
    public record MoeKernel(double callUs, double gbytesPerS, MoeBackend backend) {
        /** Validates the fit. */
        public MoeKernel {
            if (!(callUs >= 0 && gbytesPerS > 0 && Double.isFinite(callUs) && Double.isFinite(gbytesPerS))) {
                throw new IllegalArgumentException(
                        "a MoE kernel needs call_us >= 0 and gbytes_per_s > 0, got " + callUs + " and " + gbytesPerS);
            }
        }
    }

    /**
     * vLLM's fused MoE with BF16 experts, with FP8 experts scaled per 128 x 128 block and with 4-bit integer experts
     * (Marlin) as measured on a GPU for one vLLM version ({@code measured-kernels.yaml} {@code fused_moe}).
     *
     * @param bf16 BF16 experts, or null when not measured
     * @param fp8 FP8 experts with block scales, or null when not measured
     * @param int4 4-bit integer experts on BF16 activations (vLLM's Marlin MoE), or null when not measured
     * @param int4Tflops the Marlin MoE's FLOP rate, TFLOP/s ({@code moe_int4_tflops}; 0: not measured, then the BF16
     *     fused MoE's)
     */
    public record FusedMoe(MoeKernel bf16, MoeKernel fp8, MoeKernel int4, double int4Tflops) {
        /** Validates the rate. */
        public FusedMoe {
            if (!(int4Tflops >= 0 && Double.isFinite(int4Tflops))) {
                throw new IllegalArgumentException("moe_int4_tflops must be >= 0, got " + int4Tflops);
            }
        }

        /** BF16 and block-FP8 experts only. */
        public FusedMoe(MoeKernel bf16, MoeKernel fp8) {
            this(bf16, fp8, null, 0);
        }

        /** The kernel for experts of this element type, or null (MXFP4 has its own, {@link GpuSpec#mxfp4Moe}). */
        public MoeKernel forDtype(TimingConfig.Dtype dtype) {
            return switch (dtype) {
                case BF16 -> bf16;
                case FP8, FP8_BLOCK -> fp8; // the tables' FP8 experts are block-scaled
                case INT4 -> int4;
                case MXFP4, NVFP4 -> null; // each has its own measured kernel
            };
        }
    }

    /**
     * vLLM's linear layer with quantized weights as measured on a GPU for one vLLM version: FP8 weights scaled per 128
     * × 128 block (its block-scaled GEMM plus the per-token-group quantization of its input; {@link #blockFp8Gemm}), as
     * measured ({@code measured-kernels.yaml} {@code
     * fp8_block_gemm} and {@code fp8_block_tflops}). At decode sizes its time is a fixed cost per call plus the
     * weight's bytes at a streaming rate: on the Hopper GPUs 12–66 µs per call depending on the version, against 6–9 µs
     * for the BF16 GEMM of the same small matrix, so a block-FP8 checkpoint's small attention projections cost more
     * than BF16 ones, not half.
     *
     * @param callUs fixed microseconds per linear layer call
     * @param gbytesPerS the weight's bytes (one per element) streamed per second, GB/s
     * @param tflops compute-bound throughput, TFLOP/s (the newest version measured)
     */
    public record QuantizedGemm(double callUs, double gbytesPerS, double tflops) {
        /** Validates the fit. */
        public QuantizedGemm {
            if (!(callUs >= 0
                    && gbytesPerS > 0
                    && tflops > 0
                    && Double.isFinite(callUs)
                    && Double.isFinite(gbytesPerS)
                    && Double.isFinite(tflops))) {
                throw new IllegalArgumentException("a measured GEMM needs call_us >= 0, gbytes_per_s > 0 and tflops"
                        + " > 0, got " + callUs + ", " + gbytesPerS + " and " + tflops);
            }
        }

        /** Seconds for one call over a weight of {@code bytes} bytes, its streaming rate scaled by {@code mbu}. */
        public double seconds(double bytes, double mbu) {
            return callUs * 1e-6 + bytes / (gbytesPerS * 1e9 * mbu);
        }
    }

    /**
     * The throughput vLLM's own GEMM kernels reach on a GPU (roofline ceilings the efficiencies are fractions of).
     *
     * @param bf16Tflops compute-bound BF16 GEMMs, TFLOP/s
     * @param fp8Tflops compute-bound FP8 GEMMs, TFLOP/s (the BF16 value on GPUs without FP8 tensor cores)
     * @param gbytesPerS weight streaming of small-batch GEMMs, GB/s
     * @param moeTflops vLLM's fused-MoE layer with BF16 weights at large token counts, TFLOP/s (grouped expert GEMMs
     *     reach less of the tensor cores than one dense GEMM: 0.60–0.85 of {@code bf16Tflops} on the measured GPUs)
     * @param attentionTflops vLLM's prefill (context) attention kernel on long prompts, causal FLOP/s in TFLOP/s
     *     (0.62–0.75 of {@code bf16Tflops} on the measured GPUs)
     * @param moeFp8Tflops the same fused-MoE layer with 128 × 128 block-scaled FP8 experts, TFLOP/s: measured, about
     *     the BF16 rate on Hopper (0.96–0.99 ×) and below it on the B200 (0.82 ×), not the FP8 GEMMs' gain; unmeasured,
     *     {@code moeTflops} × {@code fp8Tflops / bf16Tflops}
     * @param moeMxfp4Tflops the same with MXFP4 experts on BF16 activations (W4A16, gpt-oss), TFLOP/s: measured, 0.85–0.90
     *     of the BF16 rate on Hopper and half of it on the B200; unmeasured, {@code moeTflops}
     * @param source where the values come from (measurement and its version, or the fallback rule)
     * @param shapes each weight shape's streaming rate relative to {@code gbytesPerS} (measured on this GPU, else
     *     that of the measured GPU nearest to it in streaming rate)
     * @param decodeAttention vLLM's decode attention layer on this GPU (measured, else the measured GPUs' means)
     */
    public record Achieved(
            double bf16Tflops,
            double fp8Tflops,
            double gbytesPerS,
            double moeTflops,
            double attentionTflops,
            String source,
            StreamingShapes shapes,
            double moeFp8Tflops,
            double moeMxfp4Tflops,
            DecodeAttention decodeAttention) {
        /** Validates the decode attention's presence. */
        public Achieved {
            if (decodeAttention == null) {
                throw new IllegalArgumentException("achieved rates need the decode attention layer's fit");
            }
        }

        /** These rates with the streaming grid and the MXFP4 fused-MoE rate replaced. */
        Achieved with(StreamingShapes newShapes, double newMoeMxfp4Tflops) {
            return new Achieved(
                    bf16Tflops,
                    fp8Tflops,
                    gbytesPerS,
                    moeTflops,
                    attentionTflops,
                    source,
                    newShapes,
                    moeFp8Tflops,
                    newMoeMxfp4Tflops,
                    decodeAttention);
        }
    }

    /**
     * vLLM's attention layer at decode ({@code measured-kernels.yaml} {@code decode_attention}: AIConfigurator's
     * generation_attention tables, which time the backend's KV-cache write and attention forward in a CUDA graph):
     * a fixed time per layer call, a time per (sequence, KV head) pair — the kernel's work units: H100 FlashAttention 3
     * 19.6 ns, B200 FlashInfer's TensorRT-LLM decode kernel 6.6 ns — and the KV read at a measured rate (H100 3,173
     * GB/s, B200 7,392 GB/s, above the GEMMs' small-batch weight streaming on Blackwell).
     *
     * @param callUs the layer's fixed time per call, µs (9–14 µs on the GPUs measured)
     * @param seqKvHeadNs time per sequence and KV head on this GPU, ns
     * @param gbytesPerS the KV read's rate, GB/s
     */
    public record DecodeAttention(double callUs, double seqKvHeadNs, double gbytesPerS) {
        /** Validates the fit. */
        public DecodeAttention {
            if (!(callUs >= 0
                    && seqKvHeadNs >= 0
                    && gbytesPerS > 0
                    && Double.isFinite(callUs)
                    && Double.isFinite(seqKvHeadNs)
                    && Double.isFinite(gbytesPerS))) {
                throw new IllegalArgumentException("a decode attention fit needs call_us >= 0, seq_kv_head_ns >= 0"
                        + " and gbytes_per_s > 0, got " + callUs + ", " + seqKvHeadNs + " and " + gbytesPerS);
            }
        }
    }

    /**
     * How fast vLLM's GEMMs stream a weight matrix of each shape, relative to the GPU's {@link Achieved#gbytesPerS}
     * (AIConfigurator's tables at 16 tokens, {@code measured-kernels.yaml} {@code streaming}): a 1,024 × 1,024 weight
     * streams at a fifth of the large-GEMM rate on an H100, 4,096 × 4,096 at about two thirds, 8,192 × 8,192 near
     * all of it, because a small GEMM's fixed costs (launch, tile setup, the split-K reduction) are not hidden behind
     * its bytes. Between measured widths the time per byte is interpolated bilinearly over log(k) and log(n); outside
     * the grid the nearest edge holds.
     */
    public static final class StreamingShapes {
        private final double[] logDims;
        private final double[][] secondsPerByte;

        /**
         * Validates the grid.
         *
         * @param dims measured weight widths, increasing (both the input width k and the output width n)
         * @param factors per k (rows) and n (columns), the streaming rate over the GPU's large-GEMM rate, positive
         */
        public StreamingShapes(double[] dims, double[][] factors) {
            if (dims.length < 2 || factors.length != dims.length) {
                throw new IllegalArgumentException(
                        "streaming grid: " + factors.length + " rows for " + dims.length + " widths (at least 2)");
            }
            this.logDims = new double[dims.length];
            this.secondsPerByte = new double[dims.length][];
            for (int i = 0; i < dims.length; i++) {
                if (!(dims[i] > 0) || (i > 0 && !(dims[i] > dims[i - 1]))) {
                    throw new IllegalArgumentException("streaming grid: widths must be positive and increasing");
                }
                logDims[i] = Math.log(dims[i]);
                if (factors[i].length != dims.length) {
                    throw new IllegalArgumentException("streaming grid: row " + i + " has " + factors[i].length
                            + " values for " + dims.length + " widths");
                }
                secondsPerByte[i] = new double[dims.length];
                for (int j = 0; j < dims.length; j++) {
                    if (!(factors[i][j] > 0) || !Double.isFinite(factors[i][j])) {
                        throw new IllegalArgumentException("streaming grid: factors must be positive");
                    }
                    secondsPerByte[i][j] = 1 / factors[i][j];
                }
            }
        }

        /** Every shape streams at the large-GEMM rate (factor 1): the classic single-rate roofline. */
        public static StreamingShapes uniform() {
            return new StreamingShapes(new double[] {1, 2}, new double[][] {{1, 1}, {1, 1}});
        }

        /** This grid with every factor multiplied by {@code scale} (positive). */
        public StreamingShapes scaled(double scale) {
            double[][] factors = new double[secondsPerByte.length][];
            for (int i = 0; i < factors.length; i++) {
                factors[i] = new double[secondsPerByte[i].length];
                for (int j = 0; j < factors[i].length; j++) {
                    factors[i][j] = scale / secondsPerByte[i][j];
                }
            }
            return new StreamingShapes(dims(), factors);
        }

        /** The measured widths, increasing. */
        public double[] dims() {
            double[] out = new double[logDims.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = Math.exp(logDims[i]);
            }
            return out;
        }

        /** The factor measured at grid cell (i, j). */
        public double factorAt(int i, int j) {
            return 1 / secondsPerByte[i][j];
        }

        /**
         * The streaming rate of a {@code k} × {@code n} weight relative to the large-GEMM rate: the reciprocal of the
         * time per byte interpolated bilinearly in (log k, log n) between the four surrounding measured shapes.
         */
        public double factor(double k, double n) {
            int i = cell(Math.log(k));
            int j = cell(Math.log(n));
            double x = weight(Math.log(k), i);
            double y = weight(Math.log(n), j);
            double t = (1 - x) * (1 - y) * secondsPerByte[i][j]
                    + x * (1 - y) * secondsPerByte[i + 1][j]
                    + (1 - x) * y * secondsPerByte[i][j + 1]
                    + x * y * secondsPerByte[i + 1][j + 1];
            return 1 / t;
        }

        /** The lower index of the grid interval holding {@code log} (the first or last interval outside the grid). */
        private int cell(double log) {
            int i = 0;
            while (i < logDims.length - 2 && log >= logDims[i + 1]) {
                i++;
            }
            return i;
        }

        /** The position of {@code log} within interval {@code i}, clamped to [0, 1]. */
        private double weight(double log, int i) {
            double w = (log - logDims[i]) / (logDims[i + 1] - logDims[i]);
            return Math.min(1, Math.max(0, w));
        }
    }

    /**
     * A collective's latency measured per group size and message size (AIConfigurator's tables, {@code
     * measured-kernels.yaml}: vLLM's all-reduce, NCCL's all-gather and reduce-scatter). Between measured sizes the latency is interpolated linearly in log(latency) over
     * log(size); below the smallest it is the smallest size's; above the largest it grows in proportion to the size
     * (the bandwidth regime). Each group's latencies are made non-decreasing in size (running maximum), so
     * measurement noise never makes a larger message faster.
     */
    public static final class CollectiveTable {
        private final double[] elements;
        private final int[] groups;
        private final double[][] micros;

        /**
         * Validates the shape and enforces non-decreasing latencies.
         *
         * @param elements measured message sizes, BF16 elements, increasing
         * @param groups measured group sizes (GPUs)
         * @param micros per group, the latency at each size, µs
         */
        public CollectiveTable(double[] elements, int[] groups, double[][] micros) {
            if (micros.length != groups.length) {
                throw new IllegalArgumentException(
                        "collective table: " + micros.length + " latency rows for " + groups.length + " groups");
            }
            for (int i = 1; i < elements.length; i++) {
                if (!(elements[i] > elements[i - 1]) || !(elements[0] > 0)) {
                    throw new IllegalArgumentException("collective table: sizes must be positive and increasing");
                }
            }
            this.elements = elements.clone();
            this.groups = groups.clone();
            this.micros = new double[micros.length][];
            for (int g = 0; g < micros.length; g++) {
                if (micros[g].length != elements.length) {
                    throw new IllegalArgumentException("collective table: group " + groups[g] + " has "
                            + micros[g].length + " latencies for " + elements.length + " sizes");
                }
                this.micros[g] = micros[g].clone();
                for (int i = 0; i < this.micros[g].length; i++) {
                    if (!(this.micros[g][i] > 0)) {
                        throw new IllegalArgumentException("collective table: latencies must be positive");
                    }
                    if (i > 0) {
                        this.micros[g][i] = Math.max(this.micros[g][i], this.micros[g][i - 1]);
                    }
                }
            }
        }

        /** Whether a group of this many GPUs was measured. */
        public boolean covers(int group) {
            return index(group) >= 0;
        }

        private int index(int group) {
            for (int g = 0; g < groups.length; g++) {
                if (groups[g] == group) {
                    return g;
                }
            }
            return -1;
        }

        /** Seconds one all-reduce of {@code size} BF16 elements takes in a group ({@link #covers} must hold). */
        public double seconds(int group, double size) {
            double[] us = micros[index(group)];
            int last = elements.length - 1;
            if (size <= elements[0]) {
                return us[0] / 1e6;
            }
            if (size >= elements[last]) {
                return us[last] * (size / elements[last]) / 1e6;
            }
            int hi = 1;
            while (elements[hi] < size) {
                hi++;
            }
            if (elements[hi] == size) {
                return us[hi] / 1e6;
            }
            int lo = hi - 1;
            double f = Math.log(size / elements[lo]) / Math.log(elements[hi] / elements[lo]);
            return Math.exp(Math.log(us[lo]) + f * Math.log(us[hi] / us[lo])) / 1e6;
        }
    }

    /** This GPU with other measured collective tables (null: the link model prices that collective). */
    public GpuSpec withCollectives(
            CollectiveTable allReduce, CollectiveTable allGather, CollectiveTable reduceScatter) {
        return copy(linkGbytesPerS, allReduce, allGather, reduceScatter, attentionKernel);
    }

    /** This GPU with its link at another bandwidth per direction (GB/s), its collectives priced by the link model. */
    public GpuSpec withLinkModelAt(double gbytesPerS) {
        return copy(gbytesPerS, null, null, null, attentionKernel);
    }

    /** This GPU as if vLLM ran another attention kernel on it. */
    public GpuSpec withAttentionKernel(AttentionKernel kernel) {
        return copy(linkGbytesPerS, allReduce, allGather, reduceScatter, kernel);
    }

    private GpuSpec copy(
            double link,
            CollectiveTable allReduce,
            CollectiveTable allGather,
            CollectiveTable reduceScatter,
            AttentionKernel kernel) {
        // without measured all-reduce tables (the link model) there is no measured fused one either
        return copy(
                achieved,
                link,
                allReduce,
                allGather,
                reduceScatter,
                kernel,
                mxfp4Moe,
                fusedMoe,
                blockFp8Gemm,
                allReduce == null ? null : fusedAllReduce,
                nvfp4);
    }

    private GpuSpec copy(
            Achieved achieved,
            double link,
            CollectiveTable allReduce,
            CollectiveTable allGather,
            CollectiveTable reduceScatter,
            AttentionKernel kernel,
            MoeKernel mxfp4,
            FusedMoe fused,
            QuantizedGemm block,
            FusedAllReduce fusedAr,
            Nvfp4Kernels fp4) {
        return new GpuSpec(
                name,
                memoryGib,
                bandwidthGbytesPerS,
                bf16Tflops,
                fp8Tflops,
                fp4Tflops,
                this.link,
                link,
                source,
                achieved,
                allReduce,
                allGather,
                reduceScatter,
                kernel,
                mxfp4,
                fused,
                block,
                fusedAr,
                fp4);
    }

    /** This GPU with its streaming rates by weight shape replaced (e.g. by {@link StreamingShapes#uniform()}). */
    public GpuSpec withStreamingShapes(StreamingShapes shapes) {
        return withAchieved(achieved.with(shapes, achieved.moeMxfp4Tflops()));
    }

    /** This GPU with another decode attention layer ({@link DecodeAttention}). */
    public GpuSpec withDecodeAttention(DecodeAttention decode) {
        Achieved a = achieved;
        return withAchieved(new Achieved(
                a.bf16Tflops(),
                a.fp8Tflops(),
                a.gbytesPerS(),
                a.moeTflops(),
                a.attentionTflops(),
                a.source(),
                a.shapes(),
                a.moeFp8Tflops(),
                a.moeMxfp4Tflops(),
                decode));
    }

    /** This GPU with another fused-MoE FLOP rate for MXFP4 experts, TFLOP/s (another kernel's). */
    public GpuSpec withMoeMxfp4Tflops(double tflops) {
        return withAchieved(achieved.with(achieved.shapes(), tflops));
    }

    /** This GPU with another measured MXFP4 fused-MoE kernel (null: the roofline prices MXFP4 experts). */
    public GpuSpec withMxfp4Moe(MoeKernel kernel) {
        return withKernels(kernel, fusedMoe, blockFp8Gemm);
    }

    /** This GPU with other measured BF16 / FP8 fused-MoE kernels (null: the roofline prices those experts). */
    public GpuSpec withFusedMoe(FusedMoe kernels) {
        return withKernels(mxfp4Moe, kernels, blockFp8Gemm);
    }

    /** This GPU with another measured block-FP8 GEMM (null: block-scaled FP8 weights priced as per-tensor FP8). */
    public GpuSpec withBlockFp8Gemm(QuantizedGemm gemm) {
        return withKernels(mxfp4Moe, fusedMoe, gemm);
    }

    /** This GPU with vLLM's fused all-reduce + RMSNorm as the deployment runs it (null: none). */
    public GpuSpec withFusedAllReduce(FusedAllReduce fused) {
        return withKernels(mxfp4Moe, fusedMoe, blockFp8Gemm, fused);
    }

    private GpuSpec withAchieved(Achieved a) {
        return copy(
                a,
                linkGbytesPerS,
                allReduce,
                allGather,
                reduceScatter,
                attentionKernel,
                mxfp4Moe,
                fusedMoe,
                blockFp8Gemm,
                fusedAllReduce,
                nvfp4);
    }

    private GpuSpec withKernels(MoeKernel mxfp4, FusedMoe fused, QuantizedGemm block) {
        return withKernels(mxfp4, fused, block, fusedAllReduce);
    }

    private GpuSpec withKernels(MoeKernel mxfp4, FusedMoe fused, QuantizedGemm block, FusedAllReduce ar) {
        return withKernels(mxfp4, fused, block, ar, nvfp4);
    }

    private GpuSpec withKernels(
            MoeKernel mxfp4, FusedMoe fused, QuantizedGemm block, FusedAllReduce ar, Nvfp4Kernels fp4) {
        return copy(
                achieved,
                linkGbytesPerS,
                allReduce,
                allGather,
                reduceScatter,
                attentionKernel,
                mxfp4,
                fused,
                block,
                ar,
                fp4);
    }

    /** This GPU with other measured NVFP4 kernels (null: NVFP4 weights run weight-only at the BF16 rates). */
    public GpuSpec withNvfp4(Nvfp4Kernels kernels) {
        return withKernels(mxfp4Moe, fusedMoe, blockFp8Gemm, fusedAllReduce, kernels);
    }

    /**
     * The measured GEMM that prices linear layers of a weight type instead of the streaming roofline: the block-FP8
     * one for {@code fp8_block}; null for the others or where not measured (NVFP4 weights stream at their own measured
     * rate per shape, {@link Nvfp4Kernels#shapes}).
     */
    public QuantizedGemm measuredGemm(TimingConfig.Dtype weights) {
        return weights == TimingConfig.Dtype.FP8_BLOCK ? blockFp8Gemm : null;
    }

    /**
     * vLLM's fused MoE as measured on this GPU for experts of this element type ({@link #mxfp4Moe} for MXFP4, {@link
     * #nvfp4} for NVFP4, {@link #fusedMoe} for BF16, FP8 and 4-bit integers), or null when not measured (then the
     * roofline prices them).
     */
    public MoeKernel moeKernel(TimingConfig.Dtype experts) {
        if (experts == TimingConfig.Dtype.MXFP4) {
            return mxfp4Moe;
        }
        if (experts == TimingConfig.Dtype.NVFP4) {
            return nvfp4 == null ? null : nvfp4.moe();
        }
        return fusedMoe == null ? null : fusedMoe.forDtype(experts);
    }

    /** Whether GPUs talk over NVLink ({@code link} starts with {@code nvlink}) rather than PCIe. */
    public boolean hasNvlink() {
        return link.startsWith("nvlink");
    }

    /** Device memory in bytes. */
    public double memoryBytes() {
        return memoryGib * (1L << 30);
    }

    /**
     * Datasheet dense tensor FLOP/s for a weight dtype (FP8 and NVFP4 fall back to the BF16 rate on GPUs without
     * their tensor cores).
     */
    public double flopsPerSecond(TimingConfig.Dtype dtype) {
        boolean fp8 = dtype == TimingConfig.Dtype.FP8 || dtype == TimingConfig.Dtype.FP8_BLOCK;
        double tflops = fp8 && fp8Tflops > 0
                ? fp8Tflops
                : dtype == TimingConfig.Dtype.NVFP4 && fp4Tflops > 0 ? fp4Tflops : bf16Tflops;
        return tflops * 1e12;
    }

    /**
     * FLOP/s compute-bound GEMMs of a weight dtype reach ({@link #achieved}; block-scaled FP8 at its own measured rate
     * where measured, else the per-tensor FP8 rate; NVFP4 at its measured rate, else the BF16 rate of the Marlin
     * weight-only path).
     */
    public double achievedFlopsPerSecond(TimingConfig.Dtype dtype) {
        return switch (dtype) {
                    case FP8 -> achieved.fp8Tflops();
                    case FP8_BLOCK -> blockFp8Gemm != null ? blockFp8Gemm.tflops() : achieved.fp8Tflops();
                    case NVFP4 -> nvfp4 != null ? nvfp4.tflops() : achieved.bf16Tflops(); // else Marlin W4A16
                    case BF16, MXFP4, INT4 -> achieved.bf16Tflops();
                }
                * 1e12;
    }

    /**
     * FLOP/s vLLM's fused-MoE layer reaches with experts of {@code dtype} ({@link #achieved}): BF16, block-scaled FP8
     * and MXFP4 each at the rate measured for that expert type where AIConfigurator measured it, else derived
     * ({@link Achieved#moeFp8Tflops}, {@link Achieved#moeMxfp4Tflops}); NVFP4 and 4-bit integer experts at their
     * measured kernel's rate ({@link Nvfp4Kernels#moeTflops}, {@link FusedMoe#int4Tflops}), else the BF16 one.
     */
    public double achievedMoeFlopsPerSecond(TimingConfig.Dtype dtype) {
        return switch (dtype) {
                    case FP8, FP8_BLOCK -> achieved.moeFp8Tflops();
                    case MXFP4 -> achieved.moeMxfp4Tflops();
                    case NVFP4 -> nvfp4 != null && nvfp4.moeTflops() > 0 ? nvfp4.moeTflops() : achieved.moeTflops();
                    case INT4 ->
                        fusedMoe != null && fusedMoe.int4Tflops() > 0 ? fusedMoe.int4Tflops() : achieved.moeTflops();
                    case BF16 -> achieved.moeTflops();
                }
                * 1e12;
    }

    /**
     * Causal attention FLOP/s vLLM's prefill attention kernel reaches ({@link #achieved}), whatever the weight
     * dtype: attention runs on BF16 activations and KV.
     */
    public double achievedAttentionFlopsPerSecond() {
        return achieved.attentionTflops() * 1e12;
    }

    /** Bytes per second weight streaming reaches ({@link #achieved}). */
    public double achievedBytesPerSecond() {
        return achieved.gbytesPerS() * 1e9;
    }
}
