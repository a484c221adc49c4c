package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.timing.Specs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@code servesim presets}: the presets timing.model and timing.gpu accept, as tables or JSON. */
class PresetsCommandTest {
    @Test
    void models_listEveryPreset_withItsCheckpointsOwnTypes_andTheIdsItAnswersTo() {
        CliRun r = CliRun.of("presets", "models");
        assertThat(r.exit()).isEqualTo(Main.OK);
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).startsWith("model ").contains("checkpoint").endsWith("hugging face ids");
        assertThat(lines).hasSize(1 + Specs.modelPresets().size());
        assertThat(r.out())
                // Moonshot's release: W4A16 experts; latent attention; the ids a run folder or timing.model may name
                .containsPattern("(?m)^kimi-k2\\.5 +1026\\.41 B +32\\.86 B +61 +7168 +MLA, 64 heads +384, top 8"
                        + " +experts int4 +262144 +moonshotai/Kimi-K2\\.5, nvidia/Kimi-K2\\.5-NVFP4, nvidia/Kimi-K2\\.6-NVFP4,"
                        + " nvidia/Kimi-K2\\.7-Code-NVFP4$")
                .containsPattern("(?m)^gpt-oss-120b .*GQA, 64/8 heads, window 128 +128, top 4 +experts mxfp4 ")
                .containsPattern("(?m)^llama-3\\.1-8b +8\\.03 B +8\\.03 B +32 +4096 +GQA, 32/8 heads +- +- +131072 ");
        assertThat(r.out()).doesNotContain("a100-sxm-80gb"); // models only
    }

    @Test
    void gpus_listTheirDatasheetRates_andWhichKernelsWereMeasuredOnThem() {
        CliRun r = CliRun.of("presets", "gpus");
        assertThat(r.exit()).isEqualTo(Main.OK);
        assertThat(r.out().lines()).hasSize(1 + Specs.gpuPresets().size());
        assertThat(r.out())
                .containsPattern("(?m)^b200 +178\\.40 +8000 +2250 +4500 +9000 +nvlink5 +900 +flashinfer +gemm,"
                        + " allreduce, fused_moe, mxfp4_moe, fp8_block_gemm, nvfp4$")
                .containsPattern("(?m)^a10 +.* none \\(datasheet x the measured GPUs' ratios\\)$");
    }

    @Test
    void json_holdsBothLists_withTheSameFacts() {
        CliRun r = CliRun.of("presets", "--json");
        assertThat(r.exit()).isEqualTo(Main.OK);
        JsonNode root = JsonMapper.builder().build().readTree(r.out());
        List<String> models = new ArrayList<>();
        root.get("models").forEach(m -> models.add(m.get("name").asString()));
        assertThat(models).containsExactlyElementsOf(Specs.modelPresets());
        assertThat(root.get("gpus").size()).isEqualTo(Specs.gpuPresets().size());
        JsonNode kimi = root.get("models").get(models.indexOf("kimi-k2.5"));
        assertThat(kimi.get("expert_dtype").asString()).isEqualTo("int4");
        assertThat(kimi.get("weight_dtype").isNull()).isTrue();
        assertThat(kimi.get("latent_attention").asBoolean()).isTrue();
        assertThat(kimi.get("hf_ids").get(0).asString()).isEqualTo("moonshotai/Kimi-K2.5");
        JsonNode deepseek = root.get("models").get(models.indexOf("deepseek-v3"));
        assertThat(deepseek.get("weight_dtype").asString()).isEqualTo("fp8_block");
        JsonNode h100 = root.get("gpus").get(Specs.gpuPresets().indexOf("h100-sxm"));
        assertThat(h100.get("memory_gib").asDouble()).isEqualTo(79.19);
        assertThat(h100.get("measured_kernels").toString())
                .contains("\"fused_moe\"")
                .doesNotContain("nvfp4");
    }

    @Test
    void anUnknownKind_isAUsageError() {
        CliRun r = CliRun.of("presets", "engines");
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("expected one of [models, gpus, all]").contains("but was 'engines'");
    }
}
