package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.RooflineConfig;
import io.servesim.config.TimingConfig.Dtype;
import io.servesim.config.VllmVersion;
import org.junit.jupiter.api.Test;

/**
 * The roofline step time, one hand-computed step per term (vllm-semantics.md §7.6 sanity numbers). Rates are what
 * vLLM's GEMMs measurably reach (measured-kernels.yaml): H100 SXM 843.8 BF16 TFLOP/s and 3,022 GB/s, L40S 727 GB/s;
 * vLLM's prefill attention on the H100 SXM 627.6 TFLOP/s.
 */
class RooflineTimingTest {
    /**
     * mfu, mbu, step and per-sequence CPU, NVLink and PCIe latency, layer and per-sequence attention overhead,
     * kv_mbu, MoE efficiency, overhead per measured all-reduce.
     */
    private static final RooflineConfig PARAMS =
            new RooflineConfig(0.6, 0.8, 3000, 30, 10, 25, 0, 0, 0.8, 1, 0, 1, 1, 1000);

    private static final RooflineConfig BARE = new RooflineConfig(0.6, 0.8, 0, 0, 10, 25, 0, 0, 0.8, 1, 0, 1, 1, 1000);

    private static RooflineTiming timing(String model, String gpu, int tp, RooflineConfig p) {
        return new RooflineTiming(Specs.model(model, "t"), gpu(gpu), tp, 1, Dtype.BF16, null, 2, 2, p, true);
    }

    /**
     * A GPU preset whose weights all stream at its large-GEMM rate, and whose decode attention layer has no fixed or
     * per-pair time and reads KV at that rate too, so the other terms' tests stay hand-computable; the per-shape rates
     * and the measured attention layer have their own tests below.
     */
    private static GpuSpec gpu(String name) {
        return plain(Specs.gpu(name, "t")).withStreamingShapes(GpuSpec.StreamingShapes.uniform());
    }

    /** {@code g} with the decode attention layer reduced to its KV read at the weight-streaming rate. */
    static GpuSpec plain(GpuSpec g) {
        return g.withDecodeAttention(
                new GpuSpec.DecodeAttention(0, 0, g.achieved().gbytesPerS()));
    }

    private static StepBatch decodes(int n, int context) {
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        for (int i = 0; i < n; i++) {
            b.add(1, context, true);
        }
        return b;
    }

    @Test
    void decodeStep_isWeightReadPlusKvRead_whenMemoryBound_andTheOverheadsAreItsCpuPart() {
        RooflineTiming t = timing("llama-3.1-8b", "h100-sxm", 1, PARAMS);
        StepBatch b = decodes(64, 2048); // 64 decodes at 2,048 tokens of context
        double bw = 3022e9 * 0.8;
        // every weight but the input embedding: 32 x (attention 41,943,040 + MLP 176,160,768) + the LM head
        double weights = (8_029_995_008.0 - 128256.0 * 4096) * 2 / bw;
        double linearCompute = 2 * 7_504_658_432.0 * 64 / (843.8e12 * 0.6);
        double kv = 131072.0 * 64 * 2049 / bw; // each request's KV read once
        double attentionCompute = 4.0 * 32 * 4096 * 64 * 2049 / (843.8e12 * 0.6);
        assertThat(linearCompute).isLessThan(weights); // memory-bound: the weight read wins
        assertThat(attentionCompute).isLessThan(kv);
        assertThat(t.stepNanos(b)).isEqualTo(Math.round((weights + kv) * 1e9)); // 5.60 + 6.41 ms on the GPU
        assertThat(t.cpuNanos(b)).isEqualTo(4_920_000L); // the CPU part: 3 ms + 64 x 30 us
    }

    @Test
    void decodeAttention_paysTheLayersCall_andItsKvReadOverlappingItsWorkPerSequenceAndKvHead() {
        // Llama-3.1-8B at TP 2: 32 layers, 8 KV heads, 4 per GPU; a decode attention layer of 10 us per call, 20 ns
        // per (sequence, KV head) and 2,000 GB/s, at kv_mbu 0.8; BARE's knee exponent (1,000) makes the FLOPs' roof
        // the classic max, and the read and the pair work overlap as cbrt(read^3 + work^3)
        GpuSpec h100 = gpu("h100-sxm").withDecodeAttention(new GpuSpec.DecodeAttention(10, 20, 2000));
        RooflineTiming t =
                new RooflineTiming(Specs.model("llama-3.1-8b", "t"), h100, 2, 1, Dtype.BF16, null, 2, 2, BARE, true);
        double call = 32 * 10e-6; // once per layer per step
        double workPerSequence = 32 * 4 * 20e-9; // its 4 KV heads on this GPU, per layer: 2.56 us
        // long contexts: 64 decodes reading 2,048 tokens of KV each, 64 KiB per token on each GPU at TP 2
        double read = 65536.0 * 64 * 2048 / (2000e9 * 0.8); // 5.37 ms
        double work = 64 * workPerSequence; // 0.16 ms, nearly all of it hidden behind the read
        double flops = 4.0 * 32 * 4096 / 2 * 64 * 2048 / 627.6e12; // at the prefill-attention rate: memory-bound
        assertThat(flops).isLessThan(read / 10);
        assertThat(StepTerms.term(t, decodes(64, 2047), "attention"))
                .isCloseTo(
                        (Math.cbrt(read * read * read + work * work * work) + call) * 1e9,
                        org.assertj.core.data.Percentage.withPercentage(1e-6));
        // short contexts: 512 decodes at 8 tokens each, where the pair work (1.31 ms) outweighs the read (0.17 ms)
        double shortRead = 65536.0 * 512 * 8 / (2000e9 * 0.8);
        double shortWork = 512 * workPerSequence;
        assertThat(shortWork).isGreaterThan(5 * shortRead);
        assertThat(StepTerms.term(t, decodes(512, 7), "attention"))
                .isCloseTo(
                        (Math.cbrt(Math.pow(shortRead, 3) + Math.pow(shortWork, 3)) + call) * 1e9,
                        org.assertj.core.data.Percentage.withPercentage(1e-6));
    }

    @Test
    void decodeAttention_ofLatentAttention_countsItsSharedLatentAsOneKvHead() {
        ModelSpec v3 = Specs.model("deepseek-v3", "t");
        GpuSpec h200 = gpu("h200-sxm")
                .withDecodeAttention(new GpuSpec.DecodeAttention(
                        10, 20, gpu("h200-sxm").achieved().gbytesPerS()));
        RooflineTiming t = new RooflineTiming(v3, h200, 8, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true);
        // 1,024 decodes at 8 tokens: the latent's 70,272 bytes per token read at the streaming rate x kv_mbu 0.8,
        // against 61 layers x 1,024 sequences x one latent head x 20 ns of pair work; the absorbed form's FLOPs
        double read = 70_272.0 * 1024 * 8 / (h200.achieved().gbytesPerS() * 1e9 * 0.8);
        double work = 61 * 1024 * 20e-9;
        double flops = 1024 * 8.0 * 2 * 61 * 16 * (576 + 512) / h200.achievedAttentionFlopsPerSecond();
        double memory = Math.cbrt(read * read * read + work * work * work);
        assertThat(StepTerms.term(t, decodes(1024, 7), "attention"))
                .isCloseTo(
                        (Math.max(flops, memory) + 61 * 10e-6) * 1e9,
                        org.assertj.core.data.Percentage.withPercentage(1e-6));
    }

    @Test
    void weightRead_streamsEachMatrixAtItsShapesMeasuredRate() {
        // a grid where every matrix with 4,096 input columns streams at half the rate and every wider one at the
        // full rate: Llama-3.1-8B's fused QKV (4,096 x 6,144), output (4,096 x 4,096), gate/up (4,096 x 28,672) and
        // LM head (4,096 x 128,256) take twice their bytes' time, the down projection (14,336 x 4,096) its bytes' time
        GpuSpec h100 = plain(Specs.gpu("h100-sxm", "t"))
                .withStreamingShapes(new GpuSpec.StreamingShapes(
                        new double[] {4096, 8192}, new double[][] {{0.5, 0.5}, {1, 1}}));
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        RooflineTiming t = new RooflineTiming(m, h100, 1, 1, Dtype.BF16, null, 2, 2, BARE, true);
        double bw = 3022e9 * 0.8;
        double halfRate = 32 * 4096.0 * (6144 + 4096 + 28672) + 4096.0 * 128256;
        double fullRate = 32 * 14336.0 * 4096;
        double weights = (halfRate * 2 / 0.5 + fullRate * 2) / bw;
        double kv = 131072.0 / bw;
        assertThat(t.stepNanos(decodes(1, 0))).isEqualTo(Math.round((weights + kv) * 1e9));
        // the same step on the single-rate roofline reads the same bytes at the full rate
        double uniform = (halfRate + fullRate) * 2 / bw;
        assertThat(timing("llama-3.1-8b", "h100-sxm", 1, BARE).stepNanos(decodes(1, 0)))
                .isEqualTo(Math.round((uniform + kv) * 1e9));
    }

    @Test
    void kneeExponent_slowsAnOperationNearTheKnee_asVllmsMeasuredGemmsDo() {
        // 196 decodes at 512 tokens of context on an H100 SXM: the linear layers' compute (5.81 ms at mfu 0.6) is
        // 0.94 of their weight read (6.21 ms at mbu 0.8), right at the knee. With p = 3 the operation takes
        // (compute^3 + memory^3)^(1/3): 1.22 x the weight read, where the classic roofline (p -> infinity) says 1
        RooflineConfig soft = BARE.with("knee_exponent", 3);
        StepBatch b = decodes(196, 512);
        double bw = 3022e9 * 0.8;
        double flops = 843.8e12 * 0.6;
        double lmHead = 128256.0 * 4096;
        double weights = (8_029_995_008.0 - lmHead) * 2 / bw;
        double linearCompute = (2 * (7_504_658_432.0 - lmHead) * 196 + 2 * lmHead * 196) / flops;
        double kv = 131072.0 * 196 * 513 / bw;
        double attentionCompute = 4.0 * 32 * 4096 * 196 * 513 / 627.6e12; // the measured attention rate
        assertThat(linearCompute / weights).isBetween(0.9, 1.0);
        double linear = Math.cbrt(Math.pow(linearCompute, 3) + Math.pow(weights, 3));
        double attention = Math.cbrt(Math.pow(attentionCompute, 3) + Math.pow(kv, 3));
        long softNanos = timing("llama-3.1-8b", "h100-sxm", 1, soft).stepNanos(b);
        assertThat(softNanos)
                .isCloseTo(Math.round((linear + attention) * 1e9), org.assertj.core.data.Offset.offset(1L));
        assertThat(linear / weights).isBetween(1.22, 1.23);
        // p = 1000 is the classic max (to 0.07 % at the knee itself; exactly here, where compute is 0.94 of memory)
        assertThat(timing("llama-3.1-8b", "h100-sxm", 1, BARE).stepNanos(b))
                .isEqualTo(Math.round((Math.max(linearCompute, weights) + Math.max(attentionCompute, kv)) * 1e9));
    }

    @Test
    void prefillStep_isComputeBound_causalAttentionCountsHalfTheSquare_andTheLmHeadRunsOncePerSequence() {
        RooflineTiming t = timing("llama-3.1-8b", "h100-sxm", 1, PARAMS);
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(8192, 0, false);
        double flops = 843.8e12 * 0.6;
        // every linear layer for all 8,192 tokens, the LM head (128,256 x 4,096) only for the one sampled position
        double lmHead = 128256.0 * 4096;
        double linear = (2 * (7_504_658_432.0 - lmHead) * 8192 + 2 * lmHead) / flops; // 0.197 s
        double attention = 4.0 * 32 * 4096 * 8192 * (8192 + 1) / 2.0 / 627.6e12; // 0.0281 s
        assertThat(t.stepNanos(b)).isEqualTo(Math.round((linear + attention) * 1e9));
        assertThat(t.cpuNanos(b)).isEqualTo(3_030_000L);
    }

    @Test
    void efficiencies_areFractionsOfTheMeasuredGemmRates_notOfTheDatasheet() {
        // the same decode step on an H100 SXM and an H200 SXM (same datasheet BF16 peak, different memory): the
        // weight read runs at mbu x the measured streaming rate of each, 3,022 and 4,148 GB/s
        StepBatch b = decodes(1, 0);
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        double weightBytes = (m.totalParams() - 128256.0 * 4096) * 2;
        double kvBytes = 131072.0;
        for (String[] g : new String[][] {{"h100-sxm", "3022e9"}, {"h200-sxm", "4148e9"}}) {
            double bw = Double.parseDouble(g[1]) * 0.8;
            assertThat(timing("llama-3.1-8b", g[0], 1, BARE).stepNanos(b))
                    .as(g[0])
                    .isEqualTo(Math.round((weightBytes / bw + kvBytes / bw) * 1e9));
        }
        // FP8 weights run at the measured FP8 GEMM rate (1,155.2 TFLOP/s on the H100), not the 1,978.9 datasheet;
        // the LM head, which vLLM's FP8 methods leave in BF16, at the BF16 rate (843.8)
        StepBatch prefill = new StepBatch();
        prefill.reset(1 << 20);
        prefill.add(8192, 0, false);
        RooflineTiming fp8 = new RooflineTiming(m, gpu("h100-sxm"), 1, 1, Dtype.FP8, null, 1, 2, BARE, true);
        double lmHead = 128256.0 * 4096;
        double linear = 2 * (7_504_658_432.0 - lmHead) * 8192 / (1155.2e12 * 0.6) + 2 * lmHead / (843.8e12 * 0.6);
        // attention runs on BF16 activations whatever the weights: the same measured attention rate
        double attention = 4.0 * 32 * 4096 * 8192 * (8192 + 1) / 2.0 / 627.6e12;
        assertThat(fp8.stepNanos(prefill)).isEqualTo(Math.round((linear + attention) * 1e9));
    }

    @Test
    void prefillAttention_runsAtTheMeasuredFlashAttentionRate_notAtMfuOfTheGemmRate() {
        // one 16,384-token prompt of Llama-3.1-8B on an H100 SXM: 4 x 32 layers x 4,096 q width x 16,384 x 16,385 / 2
        // pairs = 70.4 TFLOP of attention at vLLM's measured flash-attention rate, 627.6 TFLOP/s (0.112 s), however
        // low mfu is: halving mfu doubles only the linear layers
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(16384, 0, false);
        double lmHead = 128256.0 * 4096;
        double attention = 4.0 * 32 * 4096 * 16384 * 16385 / 2.0 / 627.6e12;
        for (double mfu : new double[] {0.6, 0.3}) {
            double linear = (2 * (7_504_658_432.0 - lmHead) * 16384 + 2 * lmHead) / (843.8e12 * mfu);
            assertThat(timing("llama-3.1-8b", "h100-sxm", 1, BARE.with("mfu", mfu))
                            .stepNanos(b))
                    .as("mfu %s", mfu)
                    .isEqualTo(Math.round((linear + attention) * 1e9));
        }
        // an unmeasured GPU gets its BF16 GEMM rate times the measured GPUs' mean attention / GEMM ratio
        GpuSpec l4 = gpu("l4");
        assertThat(l4.achievedAttentionFlopsPerSecond() / l4.achievedFlopsPerSecond(Dtype.BF16))
                .isCloseTo(
                        (177.4 / 288.1
                                        + 627.6 / 843.8
                                        + 623.6 / 828.2
                                        + 1248.3 / 1679.6
                                        + 1537.8 / 1843.6
                                        + 1372.3 / 1843.9
                                        + 1723.8 / 2017.0
                                        + 195.8 / 260.1
                                        + 299.6 / 415.2)
                                / 9,
                        org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void kvMbu_slowsOnlyTheAttentionKvRead() {
        RooflineConfig slowKv = BARE.with("kv_mbu", 0.4);
        StepBatch b = decodes(64, 2048);
        long base = timing("llama-3.1-8b", "h100-sxm", 1, BARE).stepNanos(b);
        long slow = timing("llama-3.1-8b", "h100-sxm", 1, slowKv).stepNanos(b);
        double kvAt08 = 131072.0 * 64 * 2049 / (3022e9 * 0.8);
        // half the efficiency doubles the KV read (6.41 ms -> 12.82 ms); the weight read is unchanged
        assertThat((double) (slow - base)).isCloseTo(kvAt08 * 1e9, org.assertj.core.data.Offset.offset(2.0));
    }

    @Test
    void layerOverhead_addsItsTimeOncePerDecoderLayerPerStep() {
        StepBatch one = decodes(1, 100);
        StepBatch many = decodes(100, 100);
        RooflineConfig withLayers = BARE.with("layer_overhead_us", 20);
        for (StepBatch b : new StepBatch[] {one, many}) {
            long base = timing("llama-3.1-8b", "h100-sxm", 1, BARE).stepNanos(b);
            long more = timing("llama-3.1-8b", "h100-sxm", 1, withLayers).stepNanos(b);
            assertThat(more - base).isBetween(640_000L - 1, 640_000L + 1); // 32 layers x 20 us, whatever the batch
        }
    }

    @Test
    void attentionOverhead_addsItsTimeOncePerSequencePerLayer() {
        RooflineConfig withSeq = BARE.with("attention_overhead_us", 0.5);
        for (int n : new int[] {1, 10, 100}) {
            StepBatch b = decodes(n, 100);
            long base = timing("llama-3.1-8b", "h100-sxm", 1, BARE).stepNanos(b);
            long more = timing("llama-3.1-8b", "h100-sxm", 1, withSeq).stepNanos(b);
            assertThat(more - base).isBetween(n * 16_000L - 1, n * 16_000L + 1); // n x 32 layers x 0.5 us
        }
    }

    @Test
    void tensorParallel_onAMeasuredGpu_paysVllmsMeasuredAllReduceTwicePerLayer_plusTheOverhead() {
        ModelSpec m = Specs.model("llama-3.1-70b", "t");
        StepBatch b = decodes(1, 1000);
        long tp4 = timing("llama-3.1-70b", "h100-sxm", 4, BARE.with("collective_overhead_us", 3))
                .stepNanos(b);
        double bw = 3022e9 * 0.8;
        double weights = (m.totalParams() - 128256.0 * 8192) * 2 / 4 / bw;
        double kv = m.kvBytesPerToken(2, 4) * 1001.0 / bw;
        // one token x 8,192 hidden = 8,192 elements: vLLM's all-reduce over 4 H100s takes 4.83 us there (measured)
        double allReduce = 2 * 80 * (4.83e-6 + 3e-6);
        assertThat(tp4).isEqualTo(Math.round((weights + kv + allReduce) * 1e9)); // about 12.0 + 1.3 ms
    }

    @Test
    void collectiveEfficiency_dividesTheMeasuredAllReduce_andLeavesTheOverheadAsIs() {
        ModelSpec m = Specs.model("llama-3.1-70b", "t");
        StepBatch b = decodes(1, 1000);
        long tp4 = timing(
                        "llama-3.1-70b",
                        "h100-sxm",
                        4,
                        BARE.with("collective_overhead_us", 3).with("collective_efficiency", 0.5))
                .stepNanos(b);
        double bw = 3022e9 * 0.8;
        double weights = (m.totalParams() - 128256.0 * 8192) * 2 / 4 / bw;
        double kv = m.kvBytesPerToken(2, 4) * 1001.0 / bw;
        // the measured 4.83 us at 8,192 elements over 4 H100s, at half that rate: 9.66 us, plus the 3 us overhead
        double allReduce = 2 * 80 * (9.66e-6 + 3e-6);
        assertThat(tp4).isEqualTo(Math.round((weights + kv + allReduce) * 1e9));
        // one GPU has no collectives: the efficiency changes nothing
        StepBatch many = decodes(64, 1000);
        assertThat(timing("llama-3.1-8b", "h100-sxm", 1, BARE.with("collective_efficiency", 0.5))
                        .stepNanos(many))
                .isEqualTo(timing("llama-3.1-8b", "h100-sxm", 1, BARE).stepNanos(many));
    }

    @Test
    void pcieCollectiveEfficiency_dividesThePcieAllReduce_collectiveEfficiencyTheNvlinkOne() {
        StepBatch b = decodes(1, 1000);
        RooflineConfig nvlinkHalf = BARE.with("collective_efficiency", 0.5);
        RooflineConfig pcieHalf = BARE.with("pcie_collective_efficiency", 0.5);
        // RTX PRO 6000 (PCIe): 2 all-reduces per layer x 32 layers of 4,096 elements, each the measured 4.55 us
        long pcie = timing("llama-3.1-8b", "rtx-pro-6000", 2, BARE).stepNanos(b);
        assertThat(timing("llama-3.1-8b", "rtx-pro-6000", 2, nvlinkHalf).stepNanos(b))
                .isEqualTo(pcie);
        assertThat(timing("llama-3.1-8b", "rtx-pro-6000", 2, pcieHalf).stepNanos(b) - pcie)
                .isCloseTo(Math.round(2 * 32 * 4.55e-6 * 1e9), org.assertj.core.data.Offset.offset(1L));
        // H100 (NVLink): the other way round, 4.38 us at 4,096 elements over 2 GPUs
        long nvlink = timing("llama-3.1-8b", "h100-sxm", 2, BARE).stepNanos(b);
        assertThat(timing("llama-3.1-8b", "h100-sxm", 2, pcieHalf).stepNanos(b)).isEqualTo(nvlink);
        assertThat(timing("llama-3.1-8b", "h100-sxm", 2, nvlinkHalf).stepNanos(b) - nvlink)
                .isCloseTo(Math.round(2 * 32 * 4.38e-6 * 1e9), org.assertj.core.data.Offset.offset(1L));
    }

    @Test
    void measuredAllReduce_interpolatesLogLog_holdsBelow_andScalesWithSizeAbove() {
        GpuSpec.CollectiveTable table =
                new GpuSpec.CollectiveTable(new double[] {100, 400}, new int[] {2}, new double[][] {{2, 8}});
        assertThat(table.seconds(2, 50)).isEqualTo(2e-6); // below the smallest size: its latency
        assertThat(table.seconds(2, 200)).isCloseTo(4e-6, org.assertj.core.data.Offset.offset(1e-15)); // 2 x 4^0.5
        assertThat(table.seconds(2, 800)).isEqualTo(16e-6); // twice the largest size: twice its latency
        assertThat(table.covers(2)).isTrue();
        assertThat(table.covers(4)).isFalse();
        // noise never makes a larger message faster: latencies are a running maximum
        GpuSpec.CollectiveTable noisy =
                new GpuSpec.CollectiveTable(new double[] {100, 400}, new int[] {2}, new double[][] {{5, 3}});
        assertThat(noisy.seconds(2, 400)).isEqualTo(5e-6);
        // on the L40S (PCIe), a group of 4 is an order of magnitude slower than a ring over 32 GB/s predicts
        GpuSpec l40s = gpu("l40s");
        double elements = 64 * 4096; // a 64-token step of an 8B model
        double ring = 25e-6 * 2 + 2.0 * 3 / 4 * elements * 2 / 32e9;
        assertThat(l40s.allReduce().seconds(4, elements))
                .isCloseTo(218.98e-6, org.assertj.core.data.Offset.offset(1e-15))
                .isGreaterThan(2 * ring);
    }

    @Test
    void groupsWithoutAMeasuredAllReduce_useTheLinkModel_pcieLatencyWithoutNvlink() {
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        StepBatch b = decodes(1, 1000);
        GpuSpec rtx4090 = gpu("rtx-4090"); // nobody measured it: link model
        assertThat(rtx4090.allReduce()).isNull();
        long tp2 = new RooflineTiming(m, rtx4090, 2, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(b);
        double bw = rtx4090.achievedBytesPerSecond() * 0.8;
        double weights = (m.totalParams() - 128256.0 * 4096) * 2 / 2 / bw;
        double kv = m.kvBytesPerToken(2, 2) * 1001.0 / bw;
        // no NVLink: log2(2) = 1 PCIe latency of 25 us per all-reduce, ring over 32 GB/s
        double allReduce = 2 * 32 * (25e-6 + 2.0 * 1 / 2 * 4096 * 2 / 32e9);
        assertThat(tp2).isEqualTo(Math.round((weights + kv + allReduce) * 1e9));
        // a group size nobody measured (16 GPUs) on an NVLink GPU: log2(16) = 4 NVLink latencies plus the ring
        StepBatch one = decodes(1, 0);
        long tp16 = timing("llama-3.1-8b", "h100-sxm", 16, BARE).stepNanos(one);
        double bw16 = 3022e9 * 0.8;
        // each GPU holds 32 / 16 = 2 query heads and, the 8 KV heads replicated beyond 8 ranks, one K and one V head
        // in the fused QKV (4,096 x 512), 4,096 x 256 of the output projection, 4,096 x 1,792 gate/up, 896 x 4,096
        // down, and 128,256 / 16 vocabulary rows of the LM head
        double w16 = (32 * 4096.0 * (512 + 256 + 1792 + 896) + 4096.0 * 8016) * 2 / bw16;
        double kv16 = m.kvBytesPerToken(2, 16) / bw16;
        double ar16 = 2 * 32 * (4 * 10e-6 + 2.0 * 15 / 16 * 4096 * 2 / 450e9);
        assertThat(tp16).isEqualTo(Math.round((w16 + kv16 + ar16) * 1e9));
        assertThat(gpu("l40s").hasNvlink()).isFalse();
        assertThat(gpu("h100-sxm").hasNvlink()).isTrue();
    }

    @Test
    void gpusWithoutPeerAccess_dropTheMeasuredAllReduce_forTheLinkModelAtTheStatedBandwidth() {
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        StepBatch b = decodes(1, 1000);
        // the RTX PRO 6000 preset has AIConfigurator's all-reduce table, measured with peer-to-peer access
        GpuSpec measured = gpu("rtx-pro-6000");
        assertThat(measured.allReduce()).isNotNull();
        io.servesim.config.SimConfig noP2p = io.servesim.config.ConfigLoader.fromYaml(
                "",
                "t",
                java.util.List.of(
                        "timing.model=llama-3.1-8b",
                        "timing.gpu=rtx-pro-6000",
                        "timing.tensor_parallel=2",
                        "timing.gpu_p2p=false",
                        "timing.link_gbytes_per_s=16"));
        GpuSpec staged = plain(Deployment.resolve(noP2p).gpu()).withStreamingShapes(GpuSpec.StreamingShapes.uniform());
        assertThat(staged.allReduce()).isNull();
        assertThat(staged.allGather()).isNull();
        assertThat(staged.linkGbytesPerS()).isEqualTo(16);
        long tp2 = new RooflineTiming(m, staged, 2, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(b);
        double bw = 1506e9 * 0.8;
        double weights = (m.totalParams() - 128256.0 * 4096) * 2 / 2 / bw;
        double kv = m.kvBytesPerToken(2, 2) * 1001.0 / bw;
        // 2 all-reduces per layer, each one PCIe latency (25 us) plus the ring's 2 x (2 - 1) / 2 x 4,096 BF16 values
        // at 16 GB/s
        double allReduce = 2 * 32 * (25e-6 + 2.0 * 1 / 2 * 4096 * 2 / 16e9);
        assertThat(tp2).isEqualTo(Math.round((weights + kv + allReduce) * 1e9));
        // with peer access the measured table prices the same all-reduce at about 4 us
        long p2p = new RooflineTiming(m, measured, 2, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(b);
        assertThat(tp2 - p2p).isGreaterThan(Math.round(2 * 32 * 20e-6 * 1e9));
    }

    @Test
    void peerAccess_cannotBeTurnedOffForNvlinkGpus_andTheLinkMustBePositive() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Deployment.resolve(io.servesim.config.ConfigLoader.fromYaml(
                                "",
                                "t",
                                java.util.List.of(
                                        "timing.model=llama-3.1-8b", "timing.gpu=h100-sxm", "timing.gpu_p2p=false"))))
                .isInstanceOf(io.servesim.config.ConfigException.class)
                .hasMessageContaining("timing.gpu_p2p")
                .hasMessageContaining("nvlink");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> io.servesim.config.ConfigLoader.fromYaml(
                        "", "t", java.util.List.of("timing.link_gbytes_per_s=0")))
                .isInstanceOf(io.servesim.config.ConfigException.class)
                .hasMessageContaining("timing.link_gbytes_per_s");
    }

    @Test
    void flashAttention2_mixedSteps_readTheDecodesKvOncePerQueryHead_decodeOnlyStepsOncePerKvHead() {
        ModelSpec m = Specs.model("llama-3.1-8b", "t"); // 32 query heads, 8 KV heads: 4 reads in a mixed FA2 step
        GpuSpec fa2 = gpu("rtx-pro-6000");
        assertThat(fa2.attentionKernel()).isEqualTo(io.servesim.config.AttentionKernel.FA2);
        GpuSpec fa3 = fa2.withAttentionKernel(io.servesim.config.AttentionKernel.FA3);
        StepBatch mixed = new StepBatch();
        mixed.reset(1 << 20);
        mixed.add(64, 0, false); // a 64-token prefill chunk
        for (int i = 0; i < 16; i++) {
            mixed.add(1, 1000, true); // 16 decodes reading 1,001 tokens of KV each
        }
        long withFa2 = new RooflineTiming(m, fa2, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(mixed);
        long withFa3 = new RooflineTiming(m, fa3, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(mixed);
        // memory-bound attention (knee 1000: the larger bound): 3 more reads of the decodes' 16 x 1,001 tokens of KV
        // (131,072 bytes per token over all layers) at the measured 1,506 GB/s x kv_mbu 0.8
        double extra = 3 * 131072.0 * 16 * 1001 / (1506e9 * 0.8);
        assertThat((double) (withFa2 - withFa3)).isCloseTo(extra * 1e9, org.assertj.core.data.Offset.offset(2.0));
        // a decode-only step packs the query heads under FA2 too
        StepBatch decodes = decodes(16, 1000);
        assertThat(new RooflineTiming(m, fa2, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes))
                .isEqualTo(new RooflineTiming(m, fa3, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes));
        // SGLang and TensorRT-LLM fold the query heads in every launch: no repeated reads on the same GPU
        assertThat(new RooflineTiming(m, fa2, 1, 1, Dtype.BF16, null, 2, 2, BARE, false).stepNanos(mixed))
                .isEqualTo(withFa3);
        // one query head per KV head (Llama-2-7B, multi-head attention): nothing to repeat
        ModelSpec mha = Specs.model("llama-2-7b", "t");
        assertThat(new RooflineTiming(mha, fa2, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(mixed))
                .isEqualTo(new RooflineTiming(mha, fa3, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(mixed));
    }

    @Test
    void moeEfficiency_stretchesOnlyTheExpertGemms() {
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        StepBatch b = decodes(64, 100); // 64 tokens x top-2 of 8 experts: every expert is hit
        long full = timing("mixtral-8x7b", "h100-sxm", 2, BARE).stepNanos(b);
        long half = timing("mixtral-8x7b", "h100-sxm", 2, BARE.with("moe_efficiency", 0.5))
                .stepNanos(b);
        double hit = 8 * (1 - Math.pow(1 - 2.0 / 8, 64));
        // sharded by TP 2, at the H100's measured BF16 fused-MoE rate (its fixed call time is not stretched)
        double expertRead = 32
                * hit
                * m.paramsPerExpert()
                * 2.0
                / 2
                / (Specs.gpu("h100-sxm", "t").fusedMoe().bf16().gbytesPerS() * 1e9);
        // at half the efficiency the expert read takes twice as long; nothing else changes
        assertThat((double) (half - full)).isCloseTo(expertRead * 1e9, org.assertj.core.data.Offset.offset(2.0));
    }

    @Test
    void moeExperts_computeAtTheMeasuredFusedMoeRate_notAtMfuOfTheDenseGemmRate() {
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        StepBatch prefill = new StepBatch();
        prefill.reset(1 << 20);
        prefill.add(8192, 0, false); // every expert hit, far past the knee: the experts are compute-bound
        long full = timing("mixtral-8x7b", "h100-sxm", 2, BARE).stepNanos(prefill);
        long half = timing("mixtral-8x7b", "h100-sxm", 2, BARE.with("moe_efficiency", 0.5))
                .stepNanos(prefill);
        // 32 layers x top-2 experts x 2 FLOPs per parameter, each expert sharded over TP 2, at the H100's measured
        // fused-MoE rate (621.3 TFLOP/s); BARE's mfu (0.6) does not apply to it
        double experts = 32 * 2 * 2.0 * m.paramsPerExpert() / 2 * 8192 / 621.3e12;
        assertThat((double) (half - full)).isCloseTo(experts * 1e9, org.assertj.core.data.Offset.offset(2.0));
        // and mfu moves only the dense part: halving it leaves the experts' share unchanged
        long lowMfu =
                timing("mixtral-8x7b", "h100-sxm", 2, BARE.with("mfu", 0.3)).stepNanos(prefill);
        long lowMfuHalf = timing(
                        "mixtral-8x7b", "h100-sxm", 2, BARE.with("mfu", 0.3).with("moe_efficiency", 0.5))
                .stepNanos(prefill);
        assertThat((double) (lowMfuHalf - lowMfu)).isCloseTo(experts * 1e9, org.assertj.core.data.Offset.offset(2.0));
    }

    private static GpuSpec h100With(GpuSpec.CollectiveTable allGather, GpuSpec.CollectiveTable reduceScatter) {
        GpuSpec h = gpu("h100-sxm");
        return h.withCollectives(h.allReduce(), allGather, reduceScatter);
    }

    private static GpuSpec.CollectiveTable table(int group, double micros) {
        return new GpuSpec.CollectiveTable(
                new double[] {1_048_576, 2_097_152}, new int[] {group}, new double[][] {{micros, 2 * micros}});
    }

    @Test
    void expertParallelOverDpRanks_allGathersAndReduceScattersEveryRanksTokens_oncePerMoeLayer() {
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        StepBatch b = decodes(64, 100); // 64 tokens on this rank x DP 4 x hidden 4,096 = 1,048,576 gathered elements
        // TP 1, experts over 4 DP ranks: vLLM's dispatch all-gathers and its combine reduce-scatters that tensor
        GpuSpec fast = h100With(table(4, 20), table(4, 10));
        GpuSpec slow = h100With(table(4, 50), table(4, 30));
        long t1 = new RooflineTiming(m, fast, 1, 4, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(b);
        long t2 = new RooflineTiming(m, slow, 1, 4, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(b);
        assertThat(t2 - t1).isEqualTo(Math.round(32 * ((50 + 30) - (20 + 10)) * 1e-6 * 1e9)); // 32 MoE layers
        // without measured tables for the group: the link model, each rank receiving and sending 3/4 of the tensor
        long link = new RooflineTiming(m, h100With(null, null), 1, 4, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(b);
        double perLayer = 2 * (10e-6 * 2 + 1_048_576 * 2.0 * 3 / 4 / 450e9); // log2(4) NVLink latencies + bytes
        assertThat((double) (link - t1))
                .isCloseTo(32 * (perLayer - 30e-6) * 1e9, org.assertj.core.data.Offset.offset(2.0));
    }

    @Test
    void moeWithoutDp_addsNoCollective_theTpAllReduceCombinesTheExperts() {
        StepBatch b = decodes(64, 100);
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        // TP 2, DP 1 (experts split whole or sliced over the TP group): no dispatch or combine beyond the TP
        // all-reduces, whatever the all-gather tables say
        long fast = new RooflineTiming(
                        m, h100With(table(2, 20), table(2, 10)), 2, 1, Dtype.BF16, null, 2, 2, BARE, true)
                .stepNanos(b);
        long slow = new RooflineTiming(
                        m, h100With(table(2, 500), table(2, 300)), 2, 1, Dtype.BF16, null, 2, 2, BARE, true)
                .stepNanos(b);
        assertThat(slow).isEqualTo(fast);
    }

    @Test
    void moeWithDp_eachGpuHoldsOneTpTimesDpthOfTheExperts_andRunsThemOnEveryDpRanksTokens() {
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        StepBatch one = decodes(1, 100); // one token on this rank, four gathered over DP 4
        GpuSpec h100 = gpu("h100-sxm").withFusedMoe(null); // the roofline's pricing, not the measured kernel
        long full = new RooflineTiming(m, h100, 1, 4, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(one);
        long half = new RooflineTiming(m, h100, 1, 4, Dtype.BF16, null, 2, 2, BARE.with("moe_efficiency", 0.5), true)
                .stepNanos(one);
        // the 4 gathered tokens hit 8 x (1 - (6/8)^4) = 5.47 of 8 experts per layer; each GPU streams a quarter of
        // each (32 layers, BF16, at mbu 0.8 of 3,022 GB/s): at half the efficiency that read takes twice as long
        double hit = 8 * (1 - Math.pow(1 - 2.0 / 8, 4));
        double read = 32 * hit * m.paramsPerExpert() * 2.0 / 4 / (3022e9 * 0.8);
        assertThat((double) (half - full)).isCloseTo(read * 1e9, org.assertj.core.data.Offset.offset(2.0));
    }

    private static RooflineTiming gptOss(GpuSpec gpu, Dtype experts, RooflineConfig p) {
        return new RooflineTiming(Specs.model("gpt-oss-120b", "t"), gpu, 1, 1, Dtype.BF16, experts, 2, 2, p, true);
    }

    @Test
    void mxfp4Experts_onAMeasuredGpu_costTheKernelsCallTimePerLayer_plusTheTouchedExpertsAtItsMeasuredRate() {
        ModelSpec m = Specs.model("gpt-oss-120b", "t");
        StepBatch one = decodes(1, 100); // one token, top-4 of 128 experts: 4 experts per layer
        GpuSpec h100 = gpu("h100-sxm");
        long base = gptOss(h100.withMxfp4Moe(new GpuSpec.MoeKernel(40, 2500, null)), Dtype.MXFP4, BARE)
                .stepNanos(one);
        // 60 us more per call: 36 MoE layers x 60 us
        long slowCall = gptOss(h100.withMxfp4Moe(new GpuSpec.MoeKernel(100, 2500, null)), Dtype.MXFP4, BARE)
                .stepNanos(one);
        assertThat(slowCall - base).isEqualTo(36 * 60_000L);
        // half the rate: the 4 experts' weights (3 x 2,880 x 2,880 each, 4.25 bits per weight) take twice as long
        long slowRate = gptOss(h100.withMxfp4Moe(new GpuSpec.MoeKernel(40, 1250, null)), Dtype.MXFP4, BARE)
                .stepNanos(one);
        double read = 36 * 4 * m.paramsPerExpert() * (4.25 / 8) / 2500e9; // 761 us at 2,500 GB/s
        assertThat((double) (slowRate - base)).isCloseTo(read * 1e9, org.assertj.core.data.Offset.offset(2.0));
        // inside a forward pass the kernel keeps moe_efficiency of its measured rate; its call time stays as measured
        long halfEfficiency = gptOss(
                        h100.withMxfp4Moe(new GpuSpec.MoeKernel(40, 2500, null)),
                        Dtype.MXFP4,
                        BARE.with("moe_efficiency", 0.5))
                .stepNanos(one);
        assertThat(halfEfficiency).isEqualTo(slowRate);
    }

    private static GpuSpec.FusedMoe fused(double callUs, double gbytesPerS) {
        GpuSpec.MoeKernel k = new GpuSpec.MoeKernel(callUs, gbytesPerS, null);
        return new GpuSpec.FusedMoe(k, new GpuSpec.MoeKernel(callUs + 10, gbytesPerS, null));
    }

    @Test
    void bf16AndFp8Experts_onAMeasuredGpu_costTheirKernelsCallTimePerLayer_plusTheTouchedExpertsAtItsRate() {
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        StepBatch one = decodes(1, 100); // one token, top-2 of 8 experts: 2 experts per layer
        GpuSpec h100 = gpu("h100-sxm");
        RooflineConfig p = BARE.with("moe_efficiency", 0.8);
        long base = new RooflineTiming(m, h100.withFusedMoe(fused(30, 3000)), 2, 1, Dtype.BF16, null, 2, 2, p, true)
                .stepNanos(one);
        // 20 us more per call: 32 MoE layers x 20 us
        long slowCall = new RooflineTiming(m, h100.withFusedMoe(fused(50, 3000)), 2, 1, Dtype.BF16, null, 2, 2, p, true)
                .stepNanos(one);
        assertThat(slowCall - base).isEqualTo(32 * 20_000L);
        // half the rate: 2 experts x 3 x 4,096 x 14,336 BF16 weights per layer, half on each of the 2 GPUs, at 0.8 of
        // 3,000 GB/s: 32 x 176.2 MB / 2,400 GB/s = 2.35 ms, twice as long
        long slowRate = new RooflineTiming(m, h100.withFusedMoe(fused(30, 1500)), 2, 1, Dtype.BF16, null, 2, 2, p, true)
                .stepNanos(one);
        double read = 32 * 2 * 3.0 * 4096 * 14336 * 2 / 2 / (3000e9 * 0.8);
        assertThat((double) (slowRate - base)).isCloseTo(read * 1e9, org.assertj.core.data.Offset.offset(2.0));
        // FP8 experts take the FP8 kernel's fit (here 10 us more per call) and read half the bytes
        long fp8 = new RooflineTiming(m, h100.withFusedMoe(fused(30, 3000)), 2, 1, Dtype.BF16, Dtype.FP8, 2, 2, p, true)
                .stepNanos(one);
        assertThat((double) (base - fp8))
                .isCloseTo(read / 2 * 1e9 - 32 * 10_000.0, org.assertj.core.data.Offset.offset(2.0));
        // without a measured kernel the roofline prices the experts (no call time)
        long roofline =
                new RooflineTiming(m, h100.withFusedMoe(null), 2, 1, Dtype.BF16, null, 2, 2, p, true).stepNanos(one);
        assertThat(roofline).isNotEqualTo(base);
    }

    /**
     * A Mixtral decode step (TP 2, {@code moe_efficiency} 0.8) on an H100 whose measured fused MoE is 30 us + 3,000 GB/s
     * for BF16 experts and the given Marlin fit for 4-bit integer ones (no Marlin FLOP rate), with {@code experts}.
     */
    private static long mixtralWithMarlin(double int4CallUs, double int4GbytesPerS, Dtype experts, double tflops) {
        GpuSpec.FusedMoe fused = new GpuSpec.FusedMoe(
                new GpuSpec.MoeKernel(30, 3000, null),
                null,
                new GpuSpec.MoeKernel(int4CallUs, int4GbytesPerS, null),
                tflops);
        RooflineConfig p = BARE.with("moe_efficiency", 0.8);
        return new RooflineTiming(
                        Specs.model("mixtral-8x7b", "t"),
                        gpu("h100-sxm").withFusedMoe(fused),
                        2,
                        1,
                        Dtype.BF16,
                        experts,
                        2,
                        2,
                        p,
                        true)
                .stepNanos(decodes(1, 100));
    }

    @Test
    void int4Experts_costTheMarlinKernelsCallTimePerLayer_plusTheTouchedExpertsAtFourAndAHalfBitsPerWeight() {
        // Mixtral with W4A16 experts (4-bit integers, a BF16 scale per 32): one token hits 2 experts per layer, whose
        // 3 x 4,096 x 14,336 weights take 4.5 bits each, half on each of the 2 GPUs
        long base = mixtralWithMarlin(40, 3000, Dtype.INT4, 0);
        // 25 us more per call: 32 MoE layers x 25 us
        assertThat(mixtralWithMarlin(65, 3000, Dtype.INT4, 0) - base).isEqualTo(32 * 25_000L);
        // half the rate: 32 layers x 2 experts x 176.2 M weights x 0.5625 byte / 2 GPUs at 0.8 of 3,000 GB/s =
        // 661 us, twice as long
        double read = 32 * 2 * 3.0 * 4096 * 14336 * 0.5625 / 2 / (3000e9 * 0.8);
        assertThat((double) (mixtralWithMarlin(40, 1500, Dtype.INT4, 0) - base))
                .isCloseTo(read * 1e9, org.assertj.core.data.Offset.offset(2.0));
        // the same experts in BF16 on the BF16 kernel (10 us less per call) read 2 / 0.5625 times the bytes
        assertThat((double) (mixtralWithMarlin(40, 3000, Dtype.BF16, 0) - base))
                .isCloseTo(read * (2 / 0.5625 - 1) * 1e9 - 32 * 10_000.0, org.assertj.core.data.Offset.offset(2.0));
        // a decode step is memory-bound: the Marlin FLOP rate does not enter it
        assertThat(mixtralWithMarlin(40, 3000, Dtype.INT4, 277.9)).isEqualTo(base);
    }

    @Test
    void int4Experts_computeAtTheMarlinMoesMeasuredRate_elseAtTheBf16FusedMoes() {
        // a compute-bound Mixtral prefill (4,096 tokens, TP 2, hard roof): the experts' FLOPs at the H100's measured
        // Marlin rate (moe_int4_tflops 277.9) against its BF16 fused MoE's (621.3); without a measured rate, the BF16
        StepBatch prefill = prompt(4096);
        GpuSpec h100 = gpu("h100-sxm");
        assertThat(h100.fusedMoe().int4Tflops()).isEqualTo(277.9);
        RooflineConfig p = BARE.with("moe_efficiency", 0.8);
        long bf16 = mixtralTp2(h100, Dtype.BF16, p).stepNanos(prefill);
        long int4 = mixtralTp2(h100, Dtype.INT4, p).stepNanos(prefill);
        double flops = 2.0 * 32 * 2 * (3.0 * 4096 * 14336) / 2 * 4096; // 2 x layers x top-2 x expert params / TP
        double expected = flops / 0.8 * (1 / 277.9e12 - 1 / 621.3e12);
        assertThat((double) (int4 - bf16)).isCloseTo(expected * 1e9, org.assertj.core.data.Offset.offset(2.0));
        GpuSpec.FusedMoe f = h100.fusedMoe();
        long unmeasured = mixtralTp2(
                        h100.withFusedMoe(new GpuSpec.FusedMoe(f.bf16(), f.fp8(), f.int4(), 0)), Dtype.INT4, p)
                .stepNanos(prefill);
        assertThat(unmeasured).isEqualTo(bf16);
    }

    /** Mixtral-8x7B at TP 2 with BF16 weights and experts of {@code experts}. */
    private static RooflineTiming mixtralTp2(GpuSpec gpu, Dtype experts, RooflineConfig p) {
        return new RooflineTiming(Specs.model("mixtral-8x7b", "t"), gpu, 2, 1, Dtype.BF16, experts, 2, 2, p, true);
    }

    /** A step computing one fresh prompt of {@code tokens} tokens. */
    private static StepBatch prompt(int tokens) {
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(tokens, 0, false);
        return b;
    }

    @Test
    void fp8Experts_computeAtTheMeasuredFp8FusedMoeRate_notAtTheFp8GemmsGain() {
        // a compute-bound Mixtral prefill (4,096 tokens, TP 2, hard roof) with BF16 and with block-scaled FP8 experts:
        // the dense layers, attention and the experts' FLOPs are the same, so the steps differ by the experts' FLOPs
        // at H100's measured FP8 fused-MoE rate (615.9 TFLOP/s) against its BF16 one (621.3), at moe_efficiency;
        // the FP8 GEMMs' 1.37 x gain over BF16 GEMMs does not carry to vLLM's fused MoE
        StepBatch prefill = prompt(4096);
        GpuSpec h100 = gpu("h100-sxm");
        RooflineConfig p = BARE.with("moe_efficiency", 0.8);
        long bf16 = mixtralTp2(h100, Dtype.BF16, p).stepNanos(prefill);
        long fp8 = mixtralTp2(h100, Dtype.FP8, p).stepNanos(prefill);
        double flops = 2.0 * 32 * 2 * (3.0 * 4096 * 14336) / 2 * 4096; // 2 x layers x top-2 x expert params / TP
        double expected = flops / 0.8 * (1 / 615.9e12 - 1 / 621.3e12);
        assertThat((double) (fp8 - bf16)).isCloseTo(expected * 1e9, org.assertj.core.data.Offset.offset(2.0));
        assertThat(fp8).isGreaterThan(bf16);
    }

    @Test
    void aMeasuredFusedMoesCallTime_isOnTheMemorySide_soAComputeBoundPrefillHidesIt() {
        // the fused-MoE FLOP rate was measured on whole layers of >= 4,096 tokens, call time included: a 4,096-token
        // Mixtral prefill is compute-bound (about 74 ms of expert FLOPs against 16 ms of call and weight read), so
        // 20 us more per call is hidden under a hard roof, and the default soft one (knee 3) lets well under a tenth
        // of its 32 x 20 us through
        ModelSpec m = Specs.model("mixtral-8x7b", "t");
        StepBatch prefill = prompt(4096);
        GpuSpec fast = gpu("h100-sxm").withFusedMoe(fused(30, 3000));
        GpuSpec slow = gpu("h100-sxm").withFusedMoe(fused(50, 3000));
        long hard = new RooflineTiming(m, slow, 2, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(prefill)
                - new RooflineTiming(m, fast, 2, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(prefill);
        assertThat(hard).isZero();
        RooflineConfig soft = BARE.with("knee_exponent", 3);
        long knee = new RooflineTiming(m, slow, 2, 1, Dtype.BF16, null, 2, 2, soft, true).stepNanos(prefill)
                - new RooflineTiming(m, fast, 2, 1, Dtype.BF16, null, 2, 2, soft, true).stepNanos(prefill);
        assertThat(knee).isPositive().isLessThan(32 * 20_000L / 10);
    }

    @Test
    void mxfp4Experts_withoutAMeasuredKernel_streamFourAndAQuarterBitsPerWeight_throughTheRoofline() {
        ModelSpec m = Specs.model("gpt-oss-120b", "t");
        GpuSpec a100 = gpu("a100-sxm-80gb"); // no MXFP4 table: vLLM runs them with Marlin there, not measured
        assertThat(a100.mxfp4Moe()).isNull();
        StepBatch one = decodes(1, 100);
        long bf16 = gptOss(a100, Dtype.BF16, BARE).stepNanos(one);
        long mxfp4 = gptOss(a100, Dtype.MXFP4, BARE).stepNanos(one);
        // 36 layers x 4 experts, 2 against 0.53125 bytes per weight, at mbu 0.8 of the A100's measured rate
        double saved =
                36 * 4 * m.paramsPerExpert() * (2 - 0.53125) / (a100.achieved().gbytesPerS() * 1e9 * 0.8);
        assertThat((double) (bf16 - mxfp4)).isCloseTo(saved * 1e9, org.assertj.core.data.Offset.offset(2.0));
        // gpt-oss's checkpoint states MXFP4 experts: left unset, the preset's are used
        assertThat(gptOss(a100, null, BARE).stepNanos(one)).isEqualTo(mxfp4);
    }

    @Test
    void slidingWindowLayers_readTheWindowsKv_fullAttentionLayersAllOfIt() {
        // gpt-oss alternates full-attention and 128-token sliding-window layers (18 of each in gpt-oss-120b)
        ModelSpec m = Specs.model("gpt-oss-120b", "t");
        RooflineTiming t = gptOss(gpu("h100-sxm"), Dtype.MXFP4, BARE);
        long shortContext = t.stepNanos(decodes(8, 10_000));
        long longContext = t.stepNanos(decodes(8, 20_000));
        // 8 decodes with 10,000 more tokens of context each: only the full layers' half of the KV read grows (the
        // sliding layers read their window, 128 tokens, either way); attention's FLOPs are 3 % of the read's time
        // here, so the soft knee moves the difference by far less than 0.1 %
        double perToken = m.kvBytesPerToken(2, 1); // all 36 layers
        double extra = 8 * 10_000 * perToken / 2 / (3022e9 * 0.8);
        assertThat((double) (longContext - shortContext))
                .isCloseTo(extra * 1e9, org.assertj.core.data.Percentage.withPercentage(0.1));
        // within the window every layer reads the whole context: 8 decodes at 50 against 100 tokens
        long a = t.stepNanos(decodes(8, 50));
        long b = t.stepNanos(decodes(8, 100));
        assertThat((double) (b - a))
                .isCloseTo(
                        8 * 50 * perToken / (3022e9 * 0.8) * 1e9, org.assertj.core.data.Percentage.withPercentage(1));
    }

    @Test
    void blockFp8Weights_payTheMeasuredBlockGemmsCallPerMatrixPlusTheirBytes_andTheLmHeadStaysBf16() {
        // a measured block-FP8 GEMM of 20 us per call plus 1,000 GB/s (x mbu 0.8): Llama-3.1-8B's four matrices per
        // layer (QKV 4,096 x 6,144, output 4,096 x 4,096, gate/up 4,096 x 28,672, down 14,336 x 4,096) each pay the
        // call and their bytes at that rate; the LM head (4,096 x 128,256) streams as BF16 at the GPU's rate
        GpuSpec h100 = gpu("h100-sxm").withBlockFp8Gemm(new GpuSpec.QuantizedGemm(20, 1000, 800));
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        double bw = 3022e9 * 0.8;
        double perLayer = 4096.0 * (6144 + 4096 + 28672) + 14336.0 * 4096;
        double lmHead = 4096.0 * 128256 * 2 / bw;
        double kv = 131072.0 / bw;
        double block = 32 * (4 * 20e-6 + perLayer / (1000e9 * 0.8)) + lmHead;
        assertThat(new RooflineTiming(m, h100, 1, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true).stepNanos(decodes(1, 0)))
                .isEqualTo(Math.round((block + kv) * 1e9)); // 2.56 ms of calls: more than the bytes (4.1 ms at BF16)
        // per-tensor FP8: one byte per weight at the GPU's rate; the LM head still two
        double perTensor = 32 * perLayer / bw + lmHead;
        assertThat(new RooflineTiming(m, h100, 1, 1, Dtype.FP8, null, 1, 2, BARE, true).stepNanos(decodes(1, 0)))
                .isEqualTo(Math.round((perTensor + kv) * 1e9));
        // without a measured block-FP8 GEMM, block-scaled weights are priced as per-tensor FP8
        assertThat(new RooflineTiming(m, h100.withBlockFp8Gemm(null), 1, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true)
                        .stepNanos(decodes(1, 0)))
                .isEqualTo(Math.round((perTensor + kv) * 1e9));
    }

    @Test
    void nvfp4Weights_streamNineSixteenthsOfAByteEachAtTheirMeasuredRate_andTheLmHeadStaysBf16() {
        // an NVFP4 GEMM measured at 1.6 x the GPU's BF16 large-GEMM streaming rate for every shape (x mbu 0.8):
        // Llama-3.1-8B's four matrices per layer stream 9/16 byte per weight (4 bits and an FP8 scale per 16) at it;
        // the LM head (4,096 x 128,256) streams as BF16 at the GPU's rate
        GpuSpec h100 = gpu("h100-sxm");
        GpuSpec fp4 = h100.withNvfp4(
                new GpuSpec.Nvfp4Kernels(GpuSpec.StreamingShapes.uniform().scaled(1.6), 800, null, 0));
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        double bw = 3022e9 * 0.8;
        double perLayer = 4096.0 * (6144 + 4096 + 28672) + 14336.0 * 4096;
        double lmHead = 4096.0 * 128256 * 2 / bw;
        double kv = 131072.0 / bw;
        double measured = 32 * perLayer * 9 / 16 / (bw * 1.6) + lmHead;
        assertThat(new RooflineTiming(m, fp4, 1, 1, Dtype.NVFP4, null, 9.0 / 16, 2, BARE, true)
                        .stepNanos(decodes(1, 0)))
                .isEqualTo(Math.round((measured + kv) * 1e9));
        // where nobody measured FP4 kernels (vLLM's Marlin weight-only path below Blackwell): the 9/16 byte per
        // weight at the GPU's BF16 streaming rate
        double marlin = 32 * perLayer * 9 / 16 / bw + lmHead;
        assertThat(new RooflineTiming(m, h100, 1, 1, Dtype.NVFP4, null, 9.0 / 16, 2, BARE, true)
                        .stepNanos(decodes(1, 0)))
                .isEqualTo(Math.round((marlin + kv) * 1e9));
        // BF16 weights on the same GPU ignore the NVFP4 grid
        assertThat(new RooflineTiming(m, fp4, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(1, 0)))
                .isEqualTo(
                        new RooflineTiming(m, h100, 1, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(1, 0)));
    }

    @Test
    void nvfp4Weights_computeAtTheNvfp4GemmsMeasuredRate_elseAtTheBf16One() {
        // a compute-bound prefill of 4,096 tokens: the dense FLOPs at the NVFP4 GEMM's 2,000 TFLOP/s x mfu 0.6 (the
        // LM head at the BF16 rate, 843.8 TFLOP/s x 0.6); without measured FP4 kernels all at the BF16 rate
        GpuSpec h100 = gpu("h100-sxm");
        GpuSpec fp4 = h100.withNvfp4(new GpuSpec.Nvfp4Kernels(GpuSpec.StreamingShapes.uniform(), 2000, null, 0));
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(4096, 0, false);
        double lmHead = 2.0 * 4096 * 128256 / (843.8e12 * 0.6);
        double denseFlops = 2.0 * (m.linearParamsPerToken() - 4096.0 * 128256) * 4096;
        double attention = 4.0 * 32 * 4096 * (4096 * 2048.5) / 627.6e12;
        assertThat(new RooflineTiming(m, fp4, 1, 1, Dtype.NVFP4, null, 9.0 / 16, 2, BARE, true).stepNanos(b) / 1e9)
                .isCloseTo(
                        denseFlops / (2000e12 * 0.6) + lmHead + attention, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(new RooflineTiming(m, h100, 1, 1, Dtype.NVFP4, null, 9.0 / 16, 2, BARE, true).stepNanos(b) / 1e9)
                .isCloseTo(
                        denseFlops / (843.8e12 * 0.6) + lmHead + attention, org.assertj.core.data.Offset.offset(1e-6));
    }

    @Test
    void blockFp8Weights_computeAtTheBlockGemmsMeasuredRate_theLmHeadAtTheBf16One() {
        // a compute-bound prefill of 4,096 tokens (one sequence): the dense FLOPs at the block GEMM's 800 TFLOP/s
        // x mfu 0.6, the LM head's (one position) at the BF16 rate, 843.8 TFLOP/s x 0.6
        GpuSpec h100 = gpu("h100-sxm").withBlockFp8Gemm(new GpuSpec.QuantizedGemm(0, 1e9, 800));
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(4096, 0, false);
        RooflineTiming block = new RooflineTiming(m, h100, 1, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true);
        double lmHead = 2.0 * 4096 * 128256 / (843.8e12 * 0.6);
        double dense = 2.0 * (m.linearParamsPerToken() - 4096.0 * 128256) * 4096 / (800e12 * 0.6);
        double attention = 4.0 * 32 * 4096 * (4096 * 2048.5) / 627.6e12; // causal pairs at the measured rate
        assertThat(block.stepNanos(b) / 1e9)
                .isCloseTo(dense + lmHead + attention, org.assertj.core.data.Offset.offset(1e-6));
    }

    @Test
    void minimaxM2_allReducesItsQkNormsVariancesOncePerLayer_onTopOfTheTwoHiddenStateAllReduces() {
        // MiniMax-M2 normalizes q and k over all heads: with TP 4 each of its 62 layers all-reduces two FP32
        // values per token (4 BF16 elements' worth), below the smallest measured size: 4.59 us on 4 H100s
        ModelSpec m = Specs.model("minimax-m2.5", "t");
        ModelSpec perHeadNorms = new ModelSpec(
                m.name(),
                "MixtralForCausalLM",
                m.hiddenSize(),
                m.numLayers(),
                m.numHeads(),
                m.numKvHeads(),
                m.headDim(),
                m.intermediateSize(),
                m.vocabSize(),
                m.numExperts(),
                m.expertsPerToken(),
                m.expertIntermediateSize(),
                m.tiedEmbeddings(),
                m.slidingWindow(),
                m.maxPositionEmbeddings(),
                m.checkpointExpertDtype(),
                m.checkpointDtype(),
                0,
                0,
                null,
                0,
                0,
                null);
        GpuSpec h100 = gpu("h100-sxm");
        long minimax =
                new RooflineTiming(m, h100, 4, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true).stepNanos(decodes(1, 100));
        long without = new RooflineTiming(perHeadNorms, h100, 4, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true)
                .stepNanos(decodes(1, 100));
        assertThat(minimax - without)
                .isCloseTo(Math.round(62 * 4.59e-6 * 1e9), org.assertj.core.data.Offset.offset(1L));
        // one GPU: no all-reduce at all
        assertThat(new RooflineTiming(m, h100, 1, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true)
                        .stepNanos(decodes(1, 100)))
                .isEqualTo(new RooflineTiming(perHeadNorms, h100, 1, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true)
                        .stepNanos(decodes(1, 100)));
    }

    @Test
    void fusedAllReduce_pricesTheHiddenStatesAllReduces_upToVllmsTokenBound_thenTheUnfusedOne() {
        // Llama-3.1-70B (hidden 8,192) on eight B200s: vLLM fuses each all-reduce with its RMSNorm for steps of at
        // most 1 MiB / (8,192 x 2 bytes) = 64 tokens. At 16 tokens (131,072 elements) the fused kernel takes
        // 7.93 us (TensorRT-LLM's measured all-reduce), vLLM's custom all-reduce 25.80 (its two-stage kernel)
        ModelSpec m = Specs.model("llama-3.1-70b", "t");
        GpuSpec b200 = gpu("b200");
        GpuSpec fused = b200.withFusedAllReduce(Specs.fusedAllReduce("b200", null, 8));
        long unfused16 =
                new RooflineTiming(m, b200, 8, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(16, 100));
        long fused16 =
                new RooflineTiming(m, fused, 8, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(16, 100));
        assertThat(unfused16 - fused16)
                .isCloseTo(Math.round(2 * 80 * (25.80e-6 - 7.93e-6) * 1e9), org.assertj.core.data.Offset.offset(1L));
        // 64 tokens still fuse, 65 do not: the unfused all-reduce prices them
        long unfused64 =
                new RooflineTiming(m, b200, 8, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(64, 100));
        long fused64 =
                new RooflineTiming(m, fused, 8, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(64, 100));
        assertThat(fused64).isLessThan(unfused64);
        assertThat(new RooflineTiming(m, fused, 8, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(65, 100)))
                .isEqualTo(new RooflineTiming(m, b200, 8, 1, Dtype.BF16, null, 2, 2, BARE, true)
                        .stepNanos(decodes(65, 100)));
        // a vLLM version that turns the fusion off under attention DP (0.16-0.21) runs the unfused all-reduce there
        GpuSpec noDp = b200.withFusedAllReduce(Specs.fusedAllReduce("b200", new VllmVersion(0, 19), 8));
        assertThat(new RooflineTiming(m, noDp, 8, 2, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(16, 100)))
                .isEqualTo(unfused16);
        assertThat(new RooflineTiming(m, noDp, 8, 1, Dtype.BF16, null, 2, 2, BARE, true).stepNanos(decodes(16, 100)))
                .isEqualTo(fused16);
    }

    @Test
    void stepTerms_splitTheGpuPartIntoItsTerms_whichSumToIt() {
        // Mixtral at TP 2 with a layer overhead: every term is present in a decode step
        RooflineTiming t = timing("mixtral-8x7b", "h100-sxm", 2, BARE.with("layer_overhead_us", 5));
        StepBatch b = decodes(16, 1024);
        java.util.List<TimingModel.StepTerm> terms = t.stepTerms(b);
        assertThat(terms)
                .extracting(TimingModel.StepTerm::name)
                .containsExactly("dense", "experts", "attention", "collectives", "fixed");
        assertThat(terms).allSatisfy(x -> assertThat(x.nanos()).isPositive());
        double sum = terms.stream().mapToDouble(TimingModel.StepTerm::nanos).sum();
        assertThat(Math.round(sum)).isEqualTo(t.stepNanos(b));
        assertThat(terms.get(4).nanos()).isCloseTo(32 * 5e3, org.assertj.core.data.Offset.offset(1e-6)); // 32 layers
        // a model without parts gives one term, the GPU part itself
        FixedTiming fixed = new FixedTiming(4, 6, 0, 0.5);
        assertThat(fixed.stepTerms(b)).containsExactly(new TimingModel.StepTerm("step", 14e6));
    }
}
