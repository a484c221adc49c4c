package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.RooflineConfig;
import org.junit.jupiter.api.Test;

/** The roofline step time, by hand (vllm-semantics.md §7.6 sanity numbers). */
class RooflineTimingTest {
    private static final RooflineConfig PARAMS = new RooflineConfig(0.6, 0.8, 3000, 30, 10);

    @Test
    void decodeStep_isWeightReadPlusKvReadPlusOverheads_whenMemoryBound() {
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        GpuSpec h100 = Specs.gpu("h100-sxm", "t");
        RooflineTiming t = new RooflineTiming(m, h100, 1, 1, io.servesim.config.TimingConfig.Dtype.BF16, 2, 2, PARAMS);
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        for (int i = 0; i < 64; i++) {
            b.add(1, 2048, true); // 64 decodes at 2,048 tokens of context
        }
        double bw = 3350e9 * 0.8;
        // every weight but the input embedding: 32 x (attention 41,943,040 + MLP 176,160,768) + the LM head
        double weights = (8_029_995_008.0 - 128256.0 * 4096) * 2 / bw;
        double linearCompute = 2 * 7_504_658_432.0 * 64 / (989.4e12 * 0.6);
        double kv = 131072.0 * 64 * 2049 / bw; // each request's KV read once
        double attentionCompute = 4.0 * 32 * 4096 * 64 * 2049 / (989.4e12 * 0.6);
        double overhead = (3000 + 64 * 30) * 1e-6;
        assertThat(linearCompute).isLessThan(weights); // memory-bound: the weight read wins
        assertThat(attentionCompute).isLessThan(kv);
        long expected = Math.round((weights + kv + overhead) * 1e9); // 5.60 + 6.41 + 4.92 = 16.93 ms
        assertThat(t.stepNanos(b) + t.cpuNanos(b)).isEqualTo(expected); // the synchronous step: CPU then GPU
        assertThat(t.cpuNanos(b)).isEqualTo(4_920_000L); // the overheads are the CPU part: 3 ms + 64 x 30 us
        assertThat(expected).isBetween(16_000_000L, 18_000_000L);
    }

    @Test
    void prefillStep_isComputeBound_andCausalAttentionCountsHalfTheSquare() {
        ModelSpec m = Specs.model("llama-3.1-8b", "t");
        RooflineTiming t = new RooflineTiming(
                m, Specs.gpu("h100-sxm", "t"), 1, 1, io.servesim.config.TimingConfig.Dtype.BF16, 2, 2, PARAMS);
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(8192, 0, false);
        double flops = 989.4e12 * 0.6;
        double linear = 2 * 7_504_658_432.0 * 8192 / flops; // 0.207 s
        double attention = 4.0 * 32 * 4096 * 8192 * (8192 + 1) / 2.0 / flops;
        double overhead = (3000 + 30) * 1e-6;
        assertThat(t.stepNanos(b) + t.cpuNanos(b)).isEqualTo(Math.round((linear + attention + overhead) * 1e9));
        assertThat(t.cpuNanos(b)).isEqualTo(3_030_000L);
    }

    @Test
    void tensorParallel_splitsTheWork_andAddsTwoAllReducesPerLayer() {
        ModelSpec m = Specs.model("llama-3.1-70b", "t");
        GpuSpec h100 = Specs.gpu("h100-sxm", "t");
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(1, 1000, true);
        RooflineConfig noOverhead = new RooflineConfig(0.6, 0.8, 0, 0, 10);
        long tp4 = new RooflineTiming(m, h100, 4, 1, io.servesim.config.TimingConfig.Dtype.BF16, 2, 2, noOverhead)
                .stepNanos(b);
        double bw = 3350e9 * 0.8;
        double weights = (m.totalParams() - 128256.0 * 8192) * 2 / 4 / bw;
        double kv = m.kvBytesPerToken(2, 4) * 1001.0 / bw;
        double allReduce = 2 * 80 * (10e-6 + 2.0 * 3 / 4 * 8192 * 2 / 450e9);
        assertThat(tp4).isEqualTo(Math.round((weights + kv + allReduce) * 1e9)); // about 10.5 + 1.6 ms
    }
}
