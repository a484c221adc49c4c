package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.TimingConfig.Dtype;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;

/**
 * Llama 4's architecture, by hand from its config.json: MoE layers with one routed and one shared expert, Maverick's
 * interleaved dense layers, and chunked local attention on the three of every four layers with rotary positions.
 */
class Llama4Test {
    private static final io.servesim.config.RooflineConfig BARE = StepTerms.BARE;

    private static final ModelSpec SCOUT = Specs.model("llama-4-scout", "t");
    private static final ModelSpec MAVERICK = Specs.model("llama-4-maverick", "t");

    private static double term(TimingModel t, StepBatch b, String name) {
        return StepTerms.term(t, b, name);
    }

    @Test
    void scout_isFortyEightMoeLayersOfSixteenExpertsAndOneSharedExpert_countedByHand() {
        assertThat(SCOUT.moeLayers()).isEqualTo(48);
        assertThat(SCOUT.denseLayers()).isZero();
        assertThat(SCOUT.sharedExperts()).isEqualTo(1);
        assertThat(SCOUT.expertIntermediateSize()).isEqualTo(8192);
        // q and o 5,120 x 5,120, k and v 5,120 x 1,024
        long attention = 2L * 5120 * 5120 + 2L * 5120 * 1024;
        long expert = 3L * 5120 * 8192;
        long moeLayer = 17 * expert + 5120L * 16; // 16 routed + 1 shared, and the router
        long embeddings = 2L * 202_048 * 5120; // untied
        assertThat(SCOUT.totalParams()).isEqualTo(48 * (attention + moeLayer) + embeddings); // 107.8 B
        assertThat(SCOUT.activeParams()).isEqualTo(48 * (attention + 2 * expert + 5120L * 16) + embeddings); // 17.2 B
    }

    @Test
    void maverick_alternatesDenseLayersOfIntermediateSizeMlp_withMoeLayersOf128Experts() {
        assertThat(MAVERICK.moeLayers()).isEqualTo(24);
        assertThat(MAVERICK.denseLayers()).isEqualTo(24);
        assertThat(MAVERICK.intermediateSize()).isEqualTo(16384);
        long attention = 2L * 5120 * 5120 + 2L * 5120 * 1024;
        long expert = 3L * 5120 * 8192;
        long dense = 3L * 5120 * 16384;
        long embeddings = 2L * 202_048 * 5120;
        assertThat(MAVERICK.totalParams())
                .isEqualTo(48 * attention + 24 * dense + 24 * (129 * expert + 5120L * 128) + embeddings); // 400.7 B
        assertThat(MAVERICK.routedExpertParams()).isEqualTo(24L * 128 * expert);
    }

    @Test
    void threeLayersOfEveryFour_attendWithinTheirChunk() {
        assertThat(SCOUT.attentionChunkSize()).isEqualTo(8192);
        assertThat(SCOUT.chunkedLayers()).isEqualTo(36); // layers 3, 7, ..., 47 (0-based) have no rotary: global
        assertThat(MAVERICK.chunkedLayers()).isEqualTo(36);
        // every layer's KV is cached whole: 48 layers x 2 KV heads per GPU at TP 4 x 128 x K and V x BF16
        assertThat(SCOUT.kvBytesPerToken(2, 4)).isEqualTo(48L * 2 * 128 * 2 * 2);
    }

    @Test
    void chunkPairs_sumEachPositionsKeysWithinItsChunk() {
        assertThat(RooflineTiming.chunkPairsBefore(0, 4)).isZero();
        assertThat(RooflineTiming.chunkPairsBefore(3, 4)).isEqualTo(1 + 2 + 3);
        assertThat(RooflineTiming.chunkPairsBefore(4, 4)).isEqualTo(1 + 2 + 3 + 4);
        assertThat(RooflineTiming.chunkPairsBefore(6, 4)).isEqualTo(1 + 2 + 3 + 4 + 1 + 2);
        assertThat(RooflineTiming.chunkPairsBefore(10_000, 8192)).isEqualTo(8192 * 8193 / 2.0 + 1808 * 1809 / 2.0);
    }

    private static double attentionNanos(GpuSpec gpu, int tp, double pairs, double kvTokens) {
        double flops = 4.0 * 48 * 40 / tp * 128 * pairs; // q.k and p.v, 2 FLOPs per multiply-add, per head per layer
        double bytes = SCOUT.kvBytesPerToken(2, tp) * kvTokens;
        return Math.max(flops / gpu.achievedAttentionFlopsPerSecond(), bytes / gpu.achievedBytesPerSecond()) * 1e9;
    }

    @Test
    void aDecodePastOneChunk_readsAllItsKeysInTheGlobalLayers_andOnlyItsChunksInTheOthers() {
        GpuSpec h100 = RooflineTimingTest.plain(Specs.gpu("h100-sxm", "t")); // attention's KV read alone
        RooflineTiming t = new RooflineTiming(SCOUT, h100, 4, 1, Dtype.BF16, null, 2, 2, BARE, false);
        StepBatch b = StepTerms.one(1, 10_000, true); // the token at position 10,000: its chunk began at 8,192
        double perLayer = 12 / 48.0 * 10_001 + 36 / 48.0 * (10_000 - 8192 + 1);
        assertThat(term(t, b, "attention"))
                .isCloseTo(attentionNanos(h100, 4, perLayer, perLayer), Percentage.withPercentage(1e-6));

        StepBatch inFirstChunk = StepTerms.one(1, 5000, true); // within the first chunk, full attention everywhere
        assertThat(term(t, inFirstChunk, "attention"))
                .isCloseTo(attentionNanos(h100, 4, 5001, 5001), Percentage.withPercentage(1e-6));
    }

    @Test
    void aPrefillAcrossAChunkBoundary_pairsEachQueryWithItsOwnChunksKeys() {
        GpuSpec h100 = RooflineTimingTest.plain(Specs.gpu("h100-sxm", "t")); // attention's KV read alone
        RooflineTiming t = new RooflineTiming(SCOUT, h100, 4, 1, Dtype.BF16, null, 2, 2, BARE, false);
        // positions 7,000-8,999: 1,192 queries in the first chunk, 808 in the second
        StepBatch b = StepTerms.one(2000, 7000, false);
        double global = 2000 * (7000 + 2001 / 2.0);
        double local = (8192 * 8193 / 2.0 + 808 * 809 / 2.0) - (7000 * 7001 / 2.0);
        double pairs = 12 / 48.0 * global + 36 / 48.0 * local;
        double kv = 12 / 48.0 * 9000 + 36 / 48.0 * 9000; // the first new token's chunk starts at 0
        assertThat(term(t, b, "attention"))
                .isCloseTo(attentionNanos(h100, 4, pairs, kv), Percentage.withPercentage(1e-6));
    }

    @Test
    void maverickWeights_areTheAttentionEverywhere_theDenseMlpOnHalf_theSharedExpertAndRouterOnTheOthers() {
        GpuSpec h200 = Specs.gpu("h200-sxm", "t");
        GpuSpec.StreamingShapes shapes = h200.achieved().shapes();
        double bytesPerS = h200.achievedBytesPerSecond();
        int tp = 8;
        // one matrix's BF16 bytes at the rate vLLM's GEMMs stream its shape
        java.util.function.BiFunction<Long, Long, Double> s =
                (k, n) -> (double) k * n / shapes.factor((double) k, (double) n) * 2 / bytesPerS;
        long heads = 40 / tp;
        double attention = s.apply(5120L, (heads + 2) * 128) + s.apply(heads * 128, 5120L); // qkv (1 KV head), o
        double dense = s.apply(5120L, 2L * 16384 / tp) + s.apply(16384L / tp, 5120L);
        double shared = s.apply(5120L, 2L * 8192 / tp) + s.apply(8192L / tp, 5120L);
        double router = s.apply(5120L, 128L);
        double lmHead = s.apply(5120L, 202_048L / tp);
        double expected = 48 * attention + 24 * dense + 24 * (shared + router) + lmHead;
        RooflineTiming t = new RooflineTiming(MAVERICK, h200, tp, 1, Dtype.BF16, null, 2, 2, BARE, true);
        StepBatch one = StepTerms.one(1, 100, true);
        assertThat(term(t, one, "dense")).isCloseTo(expected * 1e9, Percentage.withPercentage(1e-6));
    }

    private static ModelSpec fromJson(String json) {
        return Specs.fromHfConfig(
                "l4", tools.jackson.databind.json.JsonMapper.builder().build().readTree(json), "t");
    }

    /** A multimodal config.json as Meta publishes it: the language model's fields under text_config. */
    private static final String NESTED = """
            {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
             "text_config": {"hidden_size": 5120, "num_hidden_layers": 8, "num_attention_heads": 40,
               "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
               "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
               "no_rope_layers": [1, 1, 0, 1, 1, 1, 0, 1, 9], "vocab_size": 202048},
             "vision_config": {"hidden_size": 1408}}
            """;

    @Test
    void aNestedTextConfig_isRead_withItsNoRopeList_andHuggingFacesDefaultChunk() {
        ModelSpec m = fromJson(NESTED);
        assertThat(m.architecture()).isEqualTo("Llama4ForConditionalGeneration");
        assertThat(m.numLayers()).isEqualTo(8);
        assertThat(m.moeLayers()).isEqualTo(4);
        assertThat(m.denseLayers()).isEqualTo(4);
        assertThat(m.attentionChunkSize()).isEqualTo(8192); // absent: Llama4TextConfig's default
        assertThat(m.chunkedLayers()).isEqualTo(6); // the list's first 8 entries, 1 = rotary (chunked)
        ModelSpec global = fromJson(NESTED.replace("\"vocab_size\"", "\"attention_chunk_size\": null, \"vocab_size\""));
        assertThat(global.attentionChunkSize()).isZero();
        assertThat(global.chunkedLayers()).isZero();
        ModelSpec byInterval = fromJson(NESTED.replace("\"no_rope_layers\": [1, 1, 0, 1, 1, 1, 0, 1, 9], ", ""));
        assertThat(byInterval.chunkedLayers()).isEqualTo(6); // every 4th layer global by default
    }

    @Test
    void badLlama4Configs_failNamingTheField() {
        assertThatThrownBy(() -> fromJson(NESTED.replace("\"intermediate_size_mlp\": 16384,", "")))
                .hasMessageContaining("missing 'intermediate_size_mlp'");
        assertThatThrownBy(() -> fromJson(
                        NESTED.replace("\"interleave_moe_layer_step\": 2", "\"interleave_moe_layer_step\": 0")))
                .hasMessageContaining("interleave_moe_layer_step");
        assertThatThrownBy(() -> fromJson(NESTED.replace("[1, 1, 0, 1, 1, 1, 0, 1, 9]", "[1, 1, 0]")))
                .hasMessageContaining("'no_rope_layers' has 3 entries for 8 layers");
    }

    @Test
    void scout_replaysOnFourH100s_inVllm() {
        io.servesim.config.SimConfig c = StepTerms.replay(
                24, 9000, 40, "timing.model=llama-4-scout", "timing.gpu=h100-sxm", "timing.tensor_parallel=4");
        Deployment d = Deployment.resolve(c);
        assertThat(d.bytesPerToken()).isEqualTo(48L * 2 * 128 * 2 * 2);
        // 0.9 x 80 GiB per GPU less a quarter of 215.5 GB of BF16 weights leaves about 20 GB: some 400,000 tokens
        assertThat((long) d.numGpuBlocks() * c.engine().kvCache().blockSize()).isBetween(300_000L, 450_000L);
        io.servesim.run.RunResult r = io.servesim.run.Simulation.run(c);
        assertThat(r.metrics().completed).isEqualTo(24);
    }
}
