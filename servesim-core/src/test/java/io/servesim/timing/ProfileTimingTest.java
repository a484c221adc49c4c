package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ProfileTimingConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The profile step-time model: measured steps interpolated or fitted, coefficients by hand. */
class ProfileTimingTest {
    @TempDir
    Path dir;

    private static StepBatch batch(int prefill, int decodes, int contextEach) {
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        if (prefill > 0) {
            b.add(prefill, 0, false);
        }
        for (int i = 0; i < decodes; i++) {
            b.add(1, contextEach, true);
        }
        return b;
    }

    @Test
    void coefficients_giveTheLinearModelByHand() {
        ProfileTiming t = ProfileTiming.create(new ProfileTimingConfig(
                null, ProfileTimingConfig.Method.INTERPOLATE, List.of(5.0, 0.01, 1e-6, 0.1, 1e-4)));
        // prefill 1000 tokens (attention term 1000 x 500 = 5e5) + 10 decodes at 2,000 context, each reading 2,001
        // tokens of KV with its new one (context_tokens = 20,010)
        double ms = 5 + 0.01 * 1000 + 1e-6 * 500_000 + 0.1 * 10 + 1e-4 * 20_010;
        assertThat(t.stepNanos(batch(1000, 10, 2000))).isEqualTo(Math.round(ms * 1e6)); // 18.5 ms
    }

    @Test
    void csvSteps_areReturnedExactly_andInterpolatedBetween() throws IOException {
        Path csv = dir.resolve("steps.csv");
        Files.writeString(csv, """
                prefill_tokens,decode_seqs,context_tokens,latency_ms
                1000,0,0,30
                2000,0,0,50
                0,10,10000,12
                0,20,20000,16
                """);
        ProfileTiming t = ProfileTiming.create(
                new ProfileTimingConfig(csv.toString(), ProfileTimingConfig.Method.INTERPOLATE, null));
        assertThat(t.stepNanos(batch(1000, 0, 0))).isEqualTo(30_000_000L);
        assertThat(t.stepNanos(batch(0, 20, 999))).isEqualTo(16_000_000L); // 20 x (999 + 1) = 20,000 context tokens
        long between = t.stepNanos(batch(1500, 0, 0));
        assertThat(between).isBetween(30_000_000L, 50_000_000L);
    }

    @Test
    void linearFit_recoversAModelItsStepsFollow() throws IOException {
        StringBuilder sb = new StringBuilder("prefill_tokens,decode_seqs,context_tokens,latency_ms\n");
        // latency = 4 + 0.02 p + 2e-6 p^2/2 + 0.05 d + 2e-4 c, at varied points
        int[][] pts = {{0, 8, 4000}, {0, 64, 90000}, {512, 0, 0}, {2048, 0, 0}, {1024, 16, 30000}, {4096, 32, 8000}};
        for (int[] p : pts) {
            double lat = 4 + 0.02 * p[0] + 2e-6 * p[0] * p[0] / 2.0 + 0.05 * p[1] + 2e-4 * p[2];
            sb.append(p[0])
                    .append(',')
                    .append(p[1])
                    .append(',')
                    .append(p[2])
                    .append(',')
                    .append(lat)
                    .append('\n');
        }
        Path csv = dir.resolve("fit.csv");
        Files.writeString(csv, sb.toString());
        double[] k = ProfileTiming.create(
                        new ProfileTimingConfig(csv.toString(), ProfileTimingConfig.Method.LINEAR_FIT, null))
                .coefficients();
        assertThat(k[0]).isCloseTo(4, Offset.offset(1e-3));
        assertThat(k[1]).isCloseTo(0.02, Offset.offset(1e-6));
        assertThat(k[2]).isCloseTo(2e-6, Offset.offset(1e-9));
        assertThat(k[3]).isCloseTo(0.05, Offset.offset(1e-4));
        assertThat(k[4]).isCloseTo(2e-4, Offset.offset(1e-7));
    }

    @Test
    void malformedProfileRows_failWithFileAndLine() throws IOException {
        Path csv = dir.resolve("bad.csv");
        Files.writeString(csv, "prefill_tokens,decode_seqs,context_tokens,latency_ms\n10,2,300,fast\n");
        assertThatThrownBy(() -> ProfileTiming.create(
                        new ProfileTimingConfig(csv.toString(), ProfileTimingConfig.Method.INTERPOLATE, null)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("bad.csv:2: field 4 is not a number");
    }

    @Test
    void moeStep_readsOnlyTheExpertsTheBatchHits() {
        ModelSpec m = Specs.model("qwen3-30b-a3b", "t");
        // every weight at the large-GEMM rate, so the hand computation below holds (the per-shape rates: SpecsTest),
        // and the experts through the roofline, not the measured fused-MoE kernel (RooflineTimingTest)
        GpuSpec h100 = RooflineTimingTest.plain(Specs.gpu("h100-sxm", "t"))
                .withStreamingShapes(GpuSpec.StreamingShapes.uniform())
                .withFusedMoe(null);
        io.servesim.config.RooflineConfig p =
                new io.servesim.config.RooflineConfig(0.6, 0.8, 0, 0, 10, 25, 0, 0, 0.8, 1, 0, 1, 1, 1000);
        RooflineTiming t =
                new RooflineTiming(m, h100, 1, 1, io.servesim.config.TimingConfig.Dtype.BF16, null, 2, 2, p, true);
        StepBatch one = batch(0, 1, 0);
        double bw = 3022e9 * 0.8;
        double nonExpert = (m.nonExpertParams() - (double) m.vocabSize() * m.hiddenSize()) * 2;
        double hit = 128 * (1 - Math.pow(1 - 8.0 / 128, 1)); // one token hits its 8 experts
        double experts = 48 * hit * m.paramsPerExpert() * 2.0;
        double kv = m.kvBytesPerToken(2, 1) * 1.0; // kv_mbu 0.8 = mbu here
        assertThat(t.stepNanos(one)).isEqualTo(Math.round((nonExpert / bw + experts / bw + kv / bw) * 1e9));
        // a big batch touches (nearly) every expert: the read approaches the whole model
        assertThat(t.stepNanos(batch(0, 256, 0))).isGreaterThan(t.stepNanos(one) * 8);
    }
}
