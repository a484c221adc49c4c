package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.TimingConfig;
import io.servesim.config.TimingConfig.Dtype;
import java.util.List;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;

/**
 * DeepSeek-V3's architecture, by hand from its config.json: multi-head latent attention (one cached latent per token
 * and layer, two ways of attending), the dense leading layers, the shared expert.
 */
class LatentAttentionTest {
    private static final io.servesim.config.RooflineConfig BARE = StepTerms.BARE;

    private static final ModelSpec V3 = Specs.model("deepseek-v3", "t");

    private static double term(TimingModel t, StepBatch b, String name) {
        return StepTerms.term(t, b, name);
    }

    @Test
    void theConfig_givesSixtyOneLayers_threeDense_fiftyEightWithExperts_andOneSharedExpert() {
        assertThat(V3.mla()).isEqualTo(new ModelSpec.Mla(1536, 512, 128, 64, 128));
        assertThat(V3.denseLayers()).isEqualTo(3);
        assertThat(V3.moeLayers()).isEqualTo(58);
        assertThat(V3.sharedExperts()).isEqualTo(1);
        // q_a 7,168 x 1,536, q_b 1,536 x 128 x 192, kv_a 7,168 x 576, kv_b 512 x 128 x 256, o 128 x 128 x 7,168
        assertThat(V3.attentionParamsPerLayer())
                .isEqualTo(11_010_048L + 37_748_736L + 4_128_768L + 16_777_216L + 117_440_512L);
        assertThat(V3.replicatedParamsPerLayer()).isEqualTo(7168L * (1536 + 576)); // q_a and kv_a, whole on every rank
        // 256 routed experts of 3 x 7,168 x 2,048 in each of 58 layers
        assertThat(V3.routedExpertParams()).isEqualTo(58L * 256 * 3 * 7168 * 2048);
        assertThat(V3.totalParams() / 1e9).isCloseTo(671, Percentage.withPercentage(0.5));
        assertThat(V3.activeParams() / 1e9).isCloseTo(37.5, Percentage.withPercentage(0.5));
    }

    /** A DeepSeek-V2-Lite-shaped config.json: no query rank (one full-rank q_proj), one dense layer, two shared. */
    private static final String LITE = """
            {"architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 27,
             "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 10944,
             "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
             "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": null, "kv_lora_rank": 512,
             "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400}
            """;

    private static ModelSpec fromJson(String json) {
        return Specs.fromHfConfig(
                "lite", tools.jackson.databind.json.JsonMapper.builder().build().readTree(json), "t");
    }

    @Test
    void withoutAQueryRank_theQueryIsOneFullRankProjection_andOnlyTheKvDownProjectionIsReplicated() {
        ModelSpec lite = fromJson(LITE);
        assertThat(lite.mla().qLoraRank()).isZero();
        // q_proj 2,048 x 16 x 192, kv_a 2,048 x 576, kv_b 512 x 16 x 256, o 16 x 128 x 2,048
        assertThat(lite.attentionParamsPerLayer()).isEqualTo(6_291_456L + 1_179_648L + 2_097_152L + 4_194_304L);
        assertThat(lite.replicatedParamsPerLayer()).isEqualTo(2048L * 576);
        // one dense layer of 3 x 2,048 x 10,944; 26 MoE layers of 64 routed + 2 shared experts and a router
        assertThat(lite.moeLayers()).isEqualTo(26);
        long expert = 3L * 2048 * 1408;
        assertThat(lite.totalParams())
                .isEqualTo(27 * lite.attentionParamsPerLayer()
                        + 3L * 2048 * 10944
                        + 26 * ((64 + 2) * expert + 2048L * 64)
                        + 2L * 102400 * 2048); // 15.7 B, DeepSeek-V2-Lite's published total
    }

    @Test
    void unsupportedLayouts_failNamingTheField() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> fromJson(LITE.replace("\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2")))
                .hasMessageContaining("moe_layer_freq");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> fromJson(LITE.replace("\"first_k_dense_replace\": 1", "\"first_k_dense_replace\": 27")))
                .hasMessageContaining("first_k_dense_replace");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> fromJson(LITE.replace("\"kv_lora_rank\": 512,", "")))
                .hasMessageContaining("missing 'kv_lora_rank'");
    }

    @Test
    void theKvCache_holdsOneLatentAndRotaryKeyPerTokenAndLayer_wholeOnEveryTpRank() {
        long bf16 = 61L * (512 + 64) * 2; // 70,272 bytes: a seventh of what 128 heads of 128 + 128 would take at TP 8
        assertThat(V3.kvBytesPerToken(2, 1)).isEqualTo(bf16);
        assertThat(V3.kvBytesPerToken(2, 8)).isEqualTo(bf16);
        assertThat(V3.kvBytesPerToken(1, 8)).isEqualTo(bf16 / 2);
    }

    @Test
    void decodes_attendOverTheLatentInTheAbsorbedForm_prefills_asMultiHeadAttention() {
        GpuSpec h200 = RooflineTimingTest.plain(Specs.gpu("h200-sxm", "t")); // attention's KV read alone
        RooflineTiming t = new RooflineTiming(V3, h200, 8, 1, Dtype.FP8_BLOCK, null, 1, 2, BARE, true);
        double flopsPerS = h200.achievedAttentionFlopsPerSecond();
        double bytesPerS = h200.achievedBytesPerSecond();

        StepBatch decodes = new StepBatch();
        decodes.reset(1 << 20);
        for (int i = 0; i < 16; i++) {
            decodes.add(1, 4000, true); // 16 decodes over 4,001 tokens each
        }
        // per pair and layer, 16 heads per rank: q.k over latent + rope (576) and p.v over the latent (512)
        double decodeFlops = 16 * 4001.0 * 2 * 61 * 16 * (576 + 512);
        double decodeBytes = 16 * 4001.0 * 70_272;
        assertThat(term(t, decodes, "attention"))
                .isCloseTo(
                        Math.max(decodeFlops / flopsPerS, decodeBytes / bytesPerS) * 1e9,
                        Percentage.withPercentage(0.1));

        StepBatch prefill = new StepBatch();
        prefill.reset(1 << 20);
        prefill.add(2048, 0, false); // one 2,048-token prompt
        double pairs = 2048 * (2049 / 2.0); // causal: each token sees itself and those before it
        // q.k over the no-rope and rope widths (192), p.v over the value width (128), up-projected per head
        double prefillFlops = pairs * 2 * 61 * 16 * (128 + 64 + 128);
        double prefillBytes = 2048.0 * 70_272;
        assertThat(prefillFlops / flopsPerS).isGreaterThan(prefillBytes / bytesPerS); // compute-bound
        assertThat(term(t, prefill, "attention"))
                .isCloseTo(prefillFlops / flopsPerS * 1e9, Percentage.withPercentage(0.1));
    }

    @Test
    void eachEngine_replaysDeepSeekV3_onEightH200s_withTheLatentKvPool() {
        for (String engine : List.of("vllm", "sglang", "trtllm")) {
            io.servesim.config.SimConfig c = StepTerms.replay(
                    24,
                    3000,
                    40,
                    "engine.kind=" + engine,
                    "engine.kv_cache.block_size=" + (engine.equals("trtllm") ? 32 : 16),
                    "timing.model=deepseek-v3",
                    "timing.gpu=h200-sxm",
                    "timing.tensor_parallel=8");
            Deployment d = Deployment.resolve(c);
            assertThat(d.bytesPerToken()).as(engine).isEqualTo(61L * 576 * 2);
            // 141 GB less about 84 GB of weights per GPU leaves room for several hundred thousand latent tokens
            assertThat((long) d.numGpuBlocks() * c.engine().kvCache().blockSize())
                    .as(engine)
                    .isBetween(200_000L, 1_000_000L);
            io.servesim.run.RunResult r = io.servesim.run.Simulation.run(c);
            assertThat(r.metrics().completed).as(engine).isEqualTo(24);
        }
    }

    @Test
    void everyTpRank_holdsTheLatentDownProjectionsWhole() {
        TimingConfig c = ConfigLoader.fromYaml(
                        "", "t", List.of("timing.type=roofline", "timing.model=deepseek-v3", "timing.gpu=h200-sxm"))
                .timing();
        GpuSpec h200 = Specs.gpu("h200-sxm", "t");
        double replicated = 61.0 * V3.replicatedParamsPerLayer();
        double experts = V3.routedExpertParams();
        double sharded = V3.totalParams() - V3.embeddingParams() - experts - replicated;
        // FP8 linear layers (the checkpoint's), BF16 embeddings and LM head over TP, FP8 experts over their shards
        double expected = sharded / 8 + replicated + V3.embeddingParams() / 8.0 * 2 + experts / 8;
        assertThat(Deployment.weightBytes(V3, h200, c, 8, 8)).isCloseTo(expected, Percentage.withPercentage(1e-9));
    }
}
