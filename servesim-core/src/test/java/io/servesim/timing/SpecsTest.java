package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.EngineKind;
import io.servesim.config.SimConfig;
import io.servesim.config.TimingConfig;
import io.servesim.config.TimingConfig.Dtype;
import io.servesim.config.VllmVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.data.Offset;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** Model and GPU specs: derived parameter counts, config.json loading, vLLM's KV capacity by hand. */
class SpecsTest {
    @Test
    void everyPresetsDerivedParameterCount_isWithin2PercentOfThePublishedTotal() {
        assertThat(Specs.modelPresets())
                .containsExactlyInAnyOrder(
                        "llama-3.1-8b",
                        "llama-3.1-70b",
                        "llama-3.3-70b",
                        "qwen3-8b",
                        "qwen3-14b",
                        "qwen3-32b",
                        "qwen3-30b-a3b",
                        "qwen3-235b-a22b",
                        "mixtral-8x7b",
                        "gpt-oss-120b",
                        "llama-4-scout",
                        "llama-4-maverick",
                        "llama-2-7b",
                        "llama-2-70b",
                        "codellama-34b",
                        "llama-3.1-405b",
                        "qwen3-0.6b",
                        "qwen3-1.7b",
                        "qwen3-30b-a3b-2507",
                        "mixtral-8x22b",
                        "gpt-oss-20b",
                        "llama-3-8b",
                        "llama-3-70b",
                        "llama-3.2-1b",
                        "llama-3.2-3b",
                        "qwen2.5-7b",
                        "qwen2.5-14b",
                        "qwen2.5-32b",
                        "qwen2.5-72b",
                        "granite-3.1-8b",
                        "phi-4",
                        "mistral-small-24b",
                        "mistral-7b",
                        "llama-2-13b",
                        "codellama-7b",
                        "codellama-13b",
                        "minimax-m2.5",
                        "deepseek-v3",
                        "yi-34b",
                        "mistral-nemo-12b",
                        "deepseek-r1-distill-qwen-7b",
                        "deepseek-r1-distill-qwen-14b",
                        "deepseek-r1-distill-qwen-32b",
                        "qwq-32b",
                        "kimi-k2",
                        "kimi-k2.5");
        for (String name : Specs.modelPresets()) {
            ModelSpec m = Specs.model(name, "timing.model");
            assertThat(m.totalParams() / 1e9)
                    .as(name)
                    .isCloseTo(Specs.publishedParamsB(name), Percentage.withPercentage(2));
            double active = Specs.publishedActiveParamsB(name);
            if (!Double.isNaN(active)) {
                assertThat(m.activeParams() / 1e9).as(name + " active").isCloseTo(active, Percentage.withPercentage(2));
            }
        }
    }

    @Test
    void llama2AndCodeLlama_matchTheirPublishedTotals() {
        // Llama-2-7B: MHA (32 KV heads), 4,096-token context, 32,000-token vocabulary, untied
        ModelSpec small = Specs.model("llama-2-7b", "timing.model");
        assertThat(small.totalParams() / 1e9).isCloseTo(6.74, Percentage.withPercentage(2));
        assertThat(small.kvBytesPerToken(2, 1)).isEqualTo(524_288); // 2 x 32 layers x 32 heads x 128 x 2 B
        assertThat(small.maxPositionEmbeddings()).isEqualTo(4096);
        ModelSpec large = Specs.model("llama-2-70b", "timing.model");
        assertThat(large.totalParams() / 1e9).isCloseTo(68.98, Percentage.withPercentage(2));
        assertThat(large.numKvHeads()).isEqualTo(8);
        ModelSpec code = Specs.model("codellama-34b", "timing.model");
        assertThat(code.totalParams() / 1e9).isCloseTo(33.7, Percentage.withPercentage(2));
        assertThat(code.maxPositionEmbeddings()).isEqualTo(16384);
    }

    @Test
    void yiAndMistralNemo_resolveFromTheirReleases_withTheirOwnHeadWidthAndContext() {
        ModelSpec yi = Specs.modelByHfId("01-ai/Yi-34B-Chat", "model");
        assertThat(yi.name()).isEqualTo("yi-34b");
        // 2 (K and V) x 60 layers x 8 KV heads x 128 (7,168 / 56) x 2 B
        assertThat(yi.kvBytesPerToken(2, 1)).isEqualTo(245_760);
        assertThat(yi.maxPositionEmbeddings()).isEqualTo(4096);
        ModelSpec nemo = Specs.modelByHfId("mistralai/Mistral-Nemo-Instruct-2407", "model");
        assertThat(nemo.name()).isEqualTo("mistral-nemo-12b");
        // head_dim 128 as stated, not 5,120 / 32 = 160: 2 x 40 layers x 8 x 128 x 2 B
        assertThat(nemo.kvBytesPerToken(2, 1)).isEqualTo(163_840);
        assertThat(Specs.modelByHfId("/models/Mistral-Nemo-Base-2407", "model").name())
                .isEqualTo("mistral-nemo-12b");
        // reasoning releases on Qwen2.5's shapes keep their own context; the coder releases are Qwen2.5's
        ModelSpec distill = Specs.modelByHfId("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "model");
        assertThat(distill.maxPositionEmbeddings()).isEqualTo(131072);
        assertThat(distill.totalParams())
                .isEqualTo(Specs.model("qwen2.5-32b", "m").totalParams());
        assertThat(Specs.modelByHfId("Qwen/QwQ-32B", "model").maxPositionEmbeddings())
                .isEqualTo(40960);
        assertThat(Specs.modelByHfId("Qwen/Qwen2.5-Coder-7B-Instruct", "model").name())
                .isEqualTo("qwen2.5-7b");
    }

    @Test
    void huggingFaceIds_resolveToPresets_ignoringCase() {
        assertThat(Specs.modelByHfId("meta-llama/Llama-3.1-8B", "model").name()).isEqualTo("llama-3.1-8b");
        assertThat(Specs.modelByHfId("meta-llama/llama-3.1-8b-instruct", "model")
                        .name())
                .isEqualTo("llama-3.1-8b");
        assertThat(Specs.modelByHfId("mistralai/Mixtral-8x7B-Instruct-v0.1", "model")
                        .name())
                .isEqualTo("mixtral-8x7b");
        assertThat(Specs.modelByHfId("meta-llama/Llama-2-7b-chat-hf", "model").name())
                .isEqualTo("llama-2-7b");
        assertThat(Specs.modelByHfId("codellama/CodeLlama-34b-Instruct-hf", "model")
                        .name())
                .isEqualTo("codellama-34b");
        assertThat(Specs.modelByHfId("Qwen/Qwen3-8B", "model").name()).isEqualTo("qwen3-8b");
        assertThat(Specs.modelByHfId("qwen3-32b", "model").name()).isEqualTo("qwen3-32b"); // a preset name too
        assertThatThrownBy(() -> Specs.modelByHfId("acme/NotAModel-13b-hf", "meta.json: model"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(
                        "meta.json: model: unknown model 'acme/NotAModel-13b-hf' (known Hugging" + " Face ids: ")
                .hasMessageContaining("meta-llama/Llama-2-70b-hf");
        // a model served from disk is logged by its path; a mirror under another organisation keeps the name
        assertThat(Specs.modelByHfId("/models/Llama-3.1-8B-Instruct/", "model").name())
                .isEqualTo("llama-3.1-8b");
        assertThat(Specs.modelByHfId("my-org/qwen3-30b-a3b-instruct-2507", "model")
                        .name())
                .isEqualTo("qwen3-30b-a3b-2507");
        assertThatThrownBy(() -> Specs.modelByHfId("/models/Llama-2-13b-hf-custom", "model"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("unknown model");
        java.util.Map<String, String> presetByRepositoryName = new java.util.HashMap<>();
        for (String preset : Specs.modelPresets()) {
            for (String id : Specs.hfIds(preset)) {
                String name = id.substring(id.lastIndexOf('/') + 1).toLowerCase(java.util.Locale.ROOT);
                String other = presetByRepositoryName.putIfAbsent(name, preset);
                assertThat(other == null || other.equals(preset))
                        .as("repository name %s names one preset (%s, %s)", name, other, preset)
                        .isTrue();
            }
        }
        for (String preset : Specs.modelPresets()) {
            assertThat(Specs.hfIds(preset)).as(preset).isNotEmpty();
            for (String id : Specs.hfIds(preset)) {
                assertThat(Specs.modelByHfId(id, "model").name()).as(id).isEqualTo(preset);
            }
        }
    }

    @Test
    void fp8Releases_resolveToTheirBaseModel_andNameTheTypeVllmServesThemIn() {
        for (Release r : List.of(
                new Release("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b", Dtype.FP8),
                new Release("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "llama-3.1-8b", Dtype.FP8),
                new Release("nvidia/Llama-3.3-70B-Instruct-FP8", "llama-3.3-70b", Dtype.FP8),
                new Release("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8-KV", "llama-3.1-70b", Dtype.FP8),
                new Release("RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "llama-4-scout", Dtype.FP8),
                new Release("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick", Dtype.FP8),
                new Release("Qwen/Qwen3-32B-FP8", "qwen3-32b", Dtype.FP8_BLOCK),
                new Release("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b", Dtype.FP8_BLOCK),
                new Release("RedHatAI/Qwen3-14B-FP8-block", "qwen3-14b", Dtype.FP8_BLOCK))) {
            r.assertResolves();
        }
        assertThat(Specs.checkpointDtypeOfId("meta-llama/Llama-2-7b-hf")).isNull();
        assertThatThrownBy(() -> Specs.modelByHfId("RedHatAI/Acme-13B-FP8", "model"))
                .hasMessageStartingWith("model: model 'RedHatAI/Acme-13B-FP8' is a quantized release of 'Acme-13B',"
                        + " which is not a known model");
        for (String id : List.of(
                "TheBloke/Llama-2-7B-AWQ",
                "Qwen/Qwen3-32B-AWQ",
                "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
                "Acme/Mixtral-8x7B-MXFP4",
                "Qwen/Qwen3-14B-GPTQ-Int4")) {
            assertThatThrownBy(() -> Specs.modelByHfId(id, "model"))
                    .as(id)
                    .hasMessageContaining("quantized as")
                    .hasMessageContaining("servesim times BF16, FP8 and NVFP4 weights and MXFP4 experts (and W4A16"
                            + " experts as a checkpoint's config.json states them)");
        }
    }

    @Test
    void anNvfp4Release_isItsBaseModel_servedInNvfp4() {
        // NVIDIA's ModelOpt releases end in -FP4 (and -FP4-v2), the community's in -NVFP4
        for (Release r : List.of(
                new Release("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.3-70b", Dtype.NVFP4),
                new Release("nvidia/DeepSeek-R1-FP4-v2", "deepseek-v3", Dtype.NVFP4),
                new Release("RedHatAI/Qwen3-32B-NVFP4", "qwen3-32b", Dtype.NVFP4),
                new Release("mconcat/MiniMax-M2.5-NVFP4", "minimax-m2.5", Dtype.NVFP4))) {
            r.assertResolves();
        }
        assertThat(Specs.checkpointDtypeOfId("openai/gpt-oss-120b")).isNull(); // MXFP4 experts, by its config
    }

    @Test
    void anNvfp4Checkpoint_isReadFromItsQuantizationConfig_aMoeOnesAttentionAsItsExclusionsSay() {
        assertThat(quantization("{\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\"}"))
                .isEqualTo(Dtype.NVFP4);
        assertThat(quantization("{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\":"
                        + " {\"weights\": {\"type\": \"float\", \"num_bits\": 4, \"group_size\": 16}}}}"))
                .isEqualTo(Dtype.NVFP4);
        // a dense model: every linear layer NVFP4
        String shapes = "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
                + " \"intermediate_size\": 128, \"vocab_size\": 1000";
        String nvfp4 = "\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\"";
        ModelSpec d = config("{\"architectures\": [\"LlamaForCausalLM\"], " + shapes + ", \"quantization_config\": {"
                + nvfp4 + "}}");
        assertThat(d.weightDtype(Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        // a MoE model whose exclude_modules keep attention in BF16 (NVIDIA's first DeepSeek-R1 FP4): the experts only
        String moe = "{\"architectures\": [\"MixtralForCausalLM\"], " + shapes
                + ", \"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"quantization_config\": {" + nvfp4
                + ", \"exclude_modules\": [%s]}}";
        ModelSpec m = config(moe.formatted("\"lm_head\", \"model.layers.*.self_attn*\", \"*.gate\""));
        assertThat(m.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        assertThat(m.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        // without such an exclusion, attention is NVFP4 too
        ModelSpec all = config(moe.formatted("\"lm_head\""));
        assertThat(all.weightDtype(Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        assertThat(all.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.NVFP4);
    }

    @Test
    void aW4a16MoeCheckpoint_hasInt4Experts_andTheLayersItsIgnoreListNamesInBf16() {
        // compressed-tensors pack-quantized 4-bit integers in groups of 32, as Moonshot's Kimi-K2.5 release states
        String shapes = "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
                + " \"intermediate_size\": 128, \"vocab_size\": 1000, \"num_local_experts\": 8,"
                + " \"num_experts_per_tok\": 2";
        String moe = "{\"architectures\": [\"MixtralForCausalLM\"], " + shapes
                + ", \"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\":"
                + " \"pack-quantized\", \"config_groups\": {\"group_0\": {\"input_activations\": null, \"weights\":"
                + " {\"type\": \"int\", \"num_bits\": 4, \"strategy\": \"group\", \"group_size\": %d}}},"
                + " \"ignore\": [%s]}}";
        ModelSpec m = config(moe.formatted(32, "\"lm_head\", \"re:.*self_attn.*\""));
        assertThat(m.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.INT4);
        assertThat(m.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        assertThat(m.expertDtype(Dtype.NVFP4, Dtype.BF16)).isEqualTo(Dtype.NVFP4); // a stated type wins
        assertThat(Dtype.INT4.bytes()).isEqualTo(4.5 / 8);
        // groups of 128 take fewer bits than INT4's 4.5, and quantized attention would be a W4A16 dense GEMM
        assertThatThrownBy(() -> config(moe.formatted(128, "\"lm_head\", \"re:.*self_attn.*\"")))
                .hasMessageStartingWith("timing.model: c: quantization_config states 4-bit integer weights in groups"
                        + " of 128, which are not priced");
        assertThatThrownBy(() -> config(moe.formatted(32, "\"lm_head\"")))
                .hasMessageContaining("4-bit integer weights for the attention projections too");
        // a dense model's 4-bit integer weights stay unpriced
        assertThatThrownBy(() -> config(("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64,"
                        + " \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": 128,"
                        + " \"vocab_size\": 1000, \"quantization_config\": {\"quant_method\":"
                        + " \"compressed-tensors\", \"config_groups\": {\"group_0\": {\"weights\": {\"type\":"
                        + " \"int\", \"num_bits\": 4, \"group_size\": 32}}}}}")))
                .hasMessageContaining("is not priced");
        // the kimi-k2.5 preset is Moonshot's release: W4A16 experts, BF16 attention
        ModelSpec kimi = Specs.modelByHfId("moonshotai/Kimi-K2.5", "model");
        assertThat(kimi.name()).isEqualTo("kimi-k2.5");
        assertThat(kimi.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.INT4);
        assertThat(kimi.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        // and INT4 is a type for experts only
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "", "t", List.of("timing.model=kimi-k2.5", "timing.gpu=h200-sxm", "timing.weight_dtype=int4")))
                .hasMessageContaining("timing.weight_dtype")
                .hasMessageContaining("set timing.expert_dtype");
    }

    @Test
    void anNvfp4ReleaseOfAModelWithW4a16Experts_replacesThem() {
        // NVIDIA's Kimi-K2.5 NVFP4 release of the kimi-k2.5 preset (Moonshot's W4A16 experts): stating NVFP4 for
        // the weights makes the experts NVFP4 too, as stating it for the experts does
        for (String set : List.of("timing.weight_dtype=nvfp4", "timing.expert_dtype=nvfp4")) {
            SimConfig c = ConfigLoader.fromYaml(
                    "", "t", List.of("timing.model=kimi-k2.5", "timing.gpu=b200", "timing.tensor_parallel=8", set));
            assertThat(Deployment.resolve(c).expertDtype()).as(set).isEqualTo(Dtype.NVFP4);
        }
        SimConfig own = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=kimi-k2.5", "timing.gpu=b200", "timing.tensor_parallel=8"));
        assertThat(Deployment.resolve(own).expertDtype()).isEqualTo(Dtype.INT4);
    }

    @Test
    void int4FusedMoe_isVllmsMarlinKernel_asMeasuredForTheDeploymentsVersion() {
        // Marlin's rows only: vLLM 0.14's (fused_marlin_moe called directly) and 0.24's (the compressed-tensors
        // W4A16 Marlin method); 0.18 and 0.19 timed the Triton WNA16 kernel and are left out
        GpuSpec.MoeKernel h200At016 =
                Specs.fusedMoe("h200-sxm", VllmVersion.find("0.16.0")).int4();
        assertThat(h200At016.callUs()).isEqualTo(41.1); // the newest not newer: 0.14's
        assertThat(h200At016.gbytesPerS()).isEqualTo(3352);
        assertThat(h200At016.backend()).isEqualTo(GpuSpec.MoeBackend.MARLIN);
        assertThat(Specs.fusedMoe("h200-sxm", null).int4().callUs()).isEqualTo(87.3); // unstated: the newest
        // the B200's only Marlin collection is 0.24's: every version gets it
        assertThat(Specs.fusedMoe("b200", VllmVersion.find("0.15.1")).int4().gbytesPerS())
                .isEqualTo(3753);
        GpuSpec b200 = Specs.gpu("b200", "t");
        assertThat(b200.moeKernel(Dtype.INT4)).isEqualTo(b200.fusedMoe().int4());
        assertThat(b200.achievedMoeFlopsPerSecond(Dtype.INT4)).isEqualTo(298.2e12);
        assertThat(Specs.fusedMoe("a100-sxm-80gb", null)).isNull(); // not measured: the roofline prices them
    }

    @Test
    void decodeAttention_isVllmsMeasuredLayer_elseTheMeasuredGpusMeans() {
        // measured (AIConfigurator's generation_attention tables, vLLM 0.24): FlashAttention 3 on the H100,
        // FlashInfer's
        // TensorRT-LLM decode kernel on the B200, whose KV read outruns its GEMMs' small-batch weight streaming
        GpuSpec.DecodeAttention h100 = Specs.gpu("h100-sxm", "t").achieved().decodeAttention();
        assertThat(h100).isEqualTo(new GpuSpec.DecodeAttention(11.53, 27.14, 2977));
        GpuSpec b200 = Specs.gpu("b200", "t");
        assertThat(b200.achieved().decodeAttention().gbytesPerS())
                .isGreaterThan(b200.achieved().gbytesPerS());
        // a GPU nobody measured: the measured GPUs' mean call and pair times, and their mean ratio of KV rate to
        // weight-streaming rate times its own streaming rate
        String[] measured = {
            "a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200", "b300", "gb200", "gb300", "l40s", "rtx-pro-6000"
        };
        double call = 0;
        double pair = 0;
        double ratio = 0;
        for (String name : measured) {
            GpuSpec.Achieved a = Specs.gpu(name, "t").achieved();
            call += a.decodeAttention().callUs() / measured.length;
            pair += a.decodeAttention().seqKvHeadNs() / measured.length;
            ratio += a.decodeAttention().gbytesPerS() / a.gbytesPerS() / measured.length;
        }
        GpuSpec.Achieved l4 = Specs.gpu("l4", "t").achieved();
        assertThat(l4.decodeAttention().callUs()).isCloseTo(call, within(1e-9));
        assertThat(l4.decodeAttention().seqKvHeadNs()).isCloseTo(pair, within(1e-9));
        assertThat(l4.decodeAttention().gbytesPerS()).isCloseTo(l4.gbytesPerS() * ratio, within(1e-6));
        assertThat(ratio).isBetween(0.9, 1.2);
    }

    @Test
    void timingModel_takesAHuggingFaceId_servedAsTheReleaseItsNameSays() {
        // a base id is the preset as published
        ModelSpec llama = Specs.model("meta-llama/Llama-3.1-8B-Instruct", "timing.model");
        assertThat(llama.name()).isEqualTo("llama-3.1-8b");
        assertThat(llama.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        assertThat(Specs.model("moonshotai/Kimi-K2.5", "timing.model").expertDtype(null, Dtype.BF16))
                .isEqualTo(Dtype.INT4);
        // as is a repository name alone that one preset lists
        assertThat(Specs.model("Llama-3.1-8B-Instruct", "timing.model").name()).isEqualTo("llama-3.1-8b");
        // an FP8 release: its linear layers in FP8 whatever timing.weight_dtype says, as a config.json stating it
        ModelSpec fp8 = Specs.model("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "timing.model");
        assertThat(fp8.weightDtype(Dtype.BF16)).isEqualTo(Dtype.FP8);
        assertThat(Specs.model("Qwen/Qwen3-32B-FP8", "timing.model").weightDtype(Dtype.BF16))
                .isEqualTo(Dtype.FP8_BLOCK);
        // an NVFP4 release: a dense model's layers; a MoE model's experts only; NVIDIA's with an FP8 KV cache
        ModelSpec dense = Specs.model("nvidia/Llama-3.3-70B-Instruct-FP4", "timing.model");
        assertThat(dense.weightDtype(Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        assertThat(dense.kvDtype(Dtype.BF16)).isEqualTo(Dtype.FP8);
        ModelSpec kimi = Specs.model("nvidia/Kimi-K2.5-NVFP4", "timing.model");
        assertThat(kimi.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        assertThat(kimi.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        ModelSpec community = Specs.model("mconcat/MiniMax-M2.5-NVFP4", "timing.model");
        assertThat(community.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        assertThat(community.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16); // the preset's block FP8 replaced
        assertThat(community.kvDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        // in a config, end to end
        SimConfig c = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "timing.model=nvidia/Llama-3.3-70B-Instruct-FP4",
                        "timing.gpu=b200",
                        "timing.tensor_parallel=2"));
        Deployment d = Deployment.resolve(c);
        assertThat(d.model().weightDtype(c.timing().weightDtype())).isEqualTo(Dtype.NVFP4);
        assertThat(d.model().name()).isEqualTo("llama-3.3-70b");
        // its FP8 KV cache holds twice the tokens of a BF16 one: 2 x 80 layers x 8 KV heads x 128 / 2 GPUs
        assertThat(d.bytesPerToken()).isEqualTo(80L * 2 * 8 * 128 / 2);
        // what is neither a preset's id nor a file, and a quantization servesim does not price, are errors
        assertThatThrownBy(() -> Specs.model("acme/Unknown-7B", "timing.model"))
                .hasMessageStartingWith(
                        "timing.model: 'acme/Unknown-7B' is neither a file nor a Hugging Face id a preset lists");
        assertThatThrownBy(() -> Specs.model("Qwen/Qwen3-32B-AWQ", "timing.model"))
                .hasMessageContaining("quantized as AWQ");
        assertThatThrownBy(() -> Specs.model("Qwen3-32B-AWQ", "timing.model")).hasMessageContaining("quantized as AWQ");
        assertThatThrownBy(() -> Specs.model("no-such-model", "timing.model"))
                .hasMessageStartingWith("timing.model: unknown model 'no-such-model' (presets: ");
        assertThatThrownBy(() -> Specs.model("configs/missing.json", "timing.model"))
                .hasMessageStartingWith("timing.model: no such file: configs/missing.json");
    }

    @Test
    void kimiK25sMultimodalConfig_isTimedAsTheDeepseekV3LanguageModelItWraps() {
        // vLLM's KimiK25ForConditionalGeneration builds its language model from text_config's own architecture
        String text = "\"text_config\": {\"architectures\": [\"DeepseekV3ForCausalLM\"], \"hidden_size\": 256,"
                + " \"num_hidden_layers\": 3, \"num_attention_heads\": 4, \"num_key_value_heads\": 4,"
                + " \"intermediate_size\": 512, \"moe_intermediate_size\": 64, \"n_routed_experts\": 8,"
                + " \"n_shared_experts\": 1, \"num_experts_per_tok\": 2, \"first_k_dense_replace\": 1,"
                + " \"moe_layer_freq\": 1, \"q_lora_rank\": 64, \"kv_lora_rank\": 32, \"qk_nope_head_dim\": 16,"
                + " \"qk_rope_head_dim\": 8, \"v_head_dim\": 16, \"vocab_size\": 1000,"
                + " \"max_position_embeddings\": 4096%s}";
        String w4a16 = ", \"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\":"
                + " {\"group_0\": {\"input_activations\": null, \"weights\": {\"type\": \"int\", \"num_bits\": 4,"
                + " \"group_size\": 32}}}, \"ignore\": [\"lm_head\", \"re:.*self_attn.*\"]}";
        ModelSpec moonshot =
                config("{\"architectures\": [\"KimiK25ForConditionalGeneration\"], " + text.formatted(w4a16) + "}");
        assertThat(moonshot.architecture()).isEqualTo("DeepseekV3ForCausalLM");
        assertThat(moonshot.mla()).isNotNull();
        assertThat(moonshot.numExperts()).isEqualTo(8);
        assertThat(moonshot.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.INT4);
        // NVIDIA's NVFP4 release: the quantization at the top, attention and shared experts excluded, FP8 KV
        ModelSpec nvidia = config("{\"architectures\": [\"KimiK25ForConditionalGeneration\"], " + text.formatted("")
                + ", \"quantization_config\": {\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\","
                + " \"kv_cache_scheme\": {\"dynamic\": false, \"num_bits\": 8, \"type\": \"float\"},"
                + " \"exclude_modules\": [\"language_model.lm_head\", \"language_model.model.layers.1.self_attn*\"]}}");
        assertThat(nvidia.expertDtype(null, Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        assertThat(nvidia.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        assertThat(nvidia.kvDtype(Dtype.BF16)).isEqualTo(Dtype.FP8);
        // a wrapper whose language model is not a supported architecture is still refused, naming it
        assertThatThrownBy(() -> config("{\"architectures\": [\"KimiK25ForConditionalGeneration\"], \"text_config\":"
                        + " {\"architectures\": [\"AcmeForCausalLM\"]}}"))
                .hasMessageContaining("architecture 'AcmeForCausalLM' is not supported");
        // NVIDIA's K2.6 and K2.7-Code releases share the preset's shapes
        assertThat(Specs.model("nvidia/Kimi-K2.6-NVFP4", "timing.model").expertDtype(null, Dtype.BF16))
                .isEqualTo(Dtype.NVFP4);
    }

    /** A quantized release's Hugging Face id, the preset it resolves to, and the type vLLM serves it in. */
    private record Release(String id, String preset, Dtype dtype) {
        void assertResolves() {
            assertThat(Specs.modelByHfId(id, "model").name()).as(id).isEqualTo(preset);
            assertThat(Specs.checkpointDtypeOfId(id)).as(id).isEqualTo(dtype);
        }
    }

    private static ModelSpec config(String json) {
        return Specs.fromHfConfig("c", JsonMapper.builder().build().readTree(json), "timing.model");
    }

    private static Dtype quantization(String json) {
        return Specs.checkpointQuantization(
                tools.jackson.databind.json.JsonMapper.builder().build().readTree(json), "m", "timing.model");
    }

    @Test
    void aConfigsQuantizationMethod_isServedAsVllmRunsIt_andAnUnpricedOneIsAnError() {
        assertThat(quantization("{\"quant_method\": \"fp8\"}")).isEqualTo(Dtype.FP8);
        assertThat(quantization("{\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}"))
                .isEqualTo(Dtype.FP8_BLOCK);
        assertThat(quantization("{\"quant_method\": \"fbgemm_fp8\", \"activation_scale_ub\": 1200.0}"))
                .isEqualTo(Dtype.FP8);
        assertThat(quantization("{\"quant_method\": \"modelopt\", \"quant_algo\": \"FP8\"}"))
                .isEqualTo(Dtype.FP8);
        String floatWeights = "{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\":"
                + " {\"weights\": {\"type\": \"float\", \"num_bits\": 8, \"strategy\": \"%s\"}}}}";
        assertThat(quantization(floatWeights.formatted("channel"))).isEqualTo(Dtype.FP8);
        assertThat(quantization(floatWeights.formatted("block"))).isEqualTo(Dtype.FP8_BLOCK);
        assertThat(quantization("{\"torch_dtype\": \"bfloat16\"}")).isNull();
        for (String unpriced : List.of(
                "{\"quant_method\": \"awq\", \"bits\": 4}",
                "{\"quant_method\": \"gptq\", \"bits\": 4}",
                "{\"quant_method\": \"modelopt\", \"quant_algo\": \"W4A8_AWQ\"}",
                "{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": {\"weights\":"
                        + " {\"type\": \"int\", \"num_bits\": 4}}}}")) {
            assertThatThrownBy(() -> quantization(unpriced))
                    .as(unpriced)
                    .hasMessageStartingWith("timing.model: m: quantization_config '")
                    .hasMessageContaining("is not priced");
        }
    }

    @Test
    void printedGpuNames_resolveExactly_orByTheirLongestKnownStart() {
        assertThat(Specs.gpuByName("NVIDIA H100 80GB HBM3", "gpu").name()).isEqualTo("h100-sxm");
        assertThat(Specs.gpuByName("nvidia h100 80gb hbm3 (sxm)", "gpu").name()).isEqualTo("h100-sxm");
        assertThat(Specs.gpuByName("H100-SXM", "gpu").name()).isEqualTo("h100-sxm");
        // nvidia-smi's names of the other H100 and A100 parts win over the bare family name by being longer
        assertThat(Specs.gpuByName("H100", "gpu").name()).isEqualTo("h100-sxm");
        assertThat(Specs.gpuByName("NVIDIA H100 PCIe", "gpu").name()).isEqualTo("h100-pcie");
        assertThat(Specs.gpuByName("NVIDIA H100 NVL (94 GB)", "gpu").name()).isEqualTo("h100-nvl");
        assertThat(Specs.gpuByName("NVIDIA A100 80GB PCIe", "gpu").name()).isEqualTo("a100-pcie-80gb");
        assertThat(Specs.gpuByName("NVIDIA A100 80GB HBM2e (SXM)", "gpu").name())
                .isEqualTo("a100-sxm-80gb");
        assertThat(Specs.gpuByName("NVIDIA A100-SXM4-40GB", "gpu").name()).isEqualTo("a100-sxm-40gb");
        assertThat(Specs.gpuByName("A100-80", "gpu").name()).isEqualTo("a100-sxm-80gb");
        assertThat(Specs.gpuByName("NVIDIA L40", "gpu").name()).isEqualTo("l40");
        assertThat(Specs.gpuByName("NVIDIA L40S", "gpu").name()).isEqualTo("l40s");
        assertThat(Specs.gpuByName("NVIDIA RTX PRO 6000 (96 GB GDDR7, 1,597 GB/s per the source config.json)", "gpu")
                        .name())
                .isEqualTo("rtx-pro-6000");
        assertThat(Specs.gpuByName("NVIDIA RTX PRO 6000 Blackwell Server Edition", "gpu")
                        .name())
                .isEqualTo("rtx-pro-6000");
        assertThat(Specs.gpuByName("RTXPRO6000", "gpu").name()).isEqualTo("rtx-pro-6000");
        assertThat(Specs.gpuByName("NVIDIA A100-SXM4-80GB", "gpu").name()).isEqualTo("a100-sxm-80gb");
        assertThat(Specs.gpuByName("NVIDIA L40S", "gpu").name()).isEqualTo("l40s");
        assertThat(Specs.gpuByName("NVIDIA GeForce RTX 4090", "gpu").name()).isEqualTo("rtx-4090");
        assertThat(Specs.gpuByName("NVIDIA H200", "gpu").name()).isEqualTo("h200-sxm");
        assertThat(Specs.gpuByName("NVIDIA B200", "gpu").name()).isEqualTo("b200");
        assertThat(Specs.gpuByName("b200", "gpu").name()).isEqualTo("b200"); // a preset name too
        // separators and the vendor prefix do not matter: '-', '_' and spaces are one separator
        assertThat(Specs.gpuByName("H100_SXM", "gpu").name()).isEqualTo("h100-sxm");
        assertThat(Specs.gpuByName("nvidia-h100-80gb-hbm3", "gpu").name()).isEqualTo("h100-sxm");
        assertThat(Specs.gpuByName("H100-SXM5-80GB", "gpu").name()).isEqualTo("h100-sxm");
        assertThat(Specs.gpuByName("H100_PCIe", "gpu").name()).isEqualTo("h100-pcie");
        assertThat(Specs.gpuByName("H200-141GB", "gpu").name()).isEqualTo("h200-sxm");
        assertThat(Specs.gpuByName("A100", "gpu").name()).isEqualTo("a100-sxm-80gb");
        assertThat(Specs.gpuByName("A100_40GB", "gpu").name()).isEqualTo("a100-sxm-40gb");
        assertThat(Specs.gpuByName("rtx_pro_6000", "gpu").name()).isEqualTo("rtx-pro-6000");
        // a longer name is not a prefix match without a separator
        assertThatThrownBy(() -> Specs.gpuByName("NVIDIA L40SX", "meta.json: gpu"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("meta.json: gpu: unknown GPU 'NVIDIA L40SX' (known: ")
                .hasMessageContaining("NVIDIA A100-SXM4-80GB");
        assertThatThrownBy(() -> Specs.gpuByName("NVIDIA GH200 480GB", "gpu")).hasMessageContaining("unknown GPU");
        for (String preset : Specs.gpuPresets()) {
            assertThat(Specs.gpuNames(preset)).as(preset).isNotEmpty();
            for (String name : Specs.gpuNames(preset)) {
                assertThat(Specs.gpuByName(name, "gpu").name()).as(name).isEqualTo(preset);
            }
        }
    }

    @Test
    void nvlink_isTheLinkOfTheSxmParts_pcieOfTheOthers() {
        assertThat(Specs.gpuPresets().stream()
                        .filter(g -> Specs.gpu(g, "timing.gpu").hasNvlink())
                        .toList())
                .containsExactlyInAnyOrder(
                        "a100-sxm-80gb",
                        "a100-sxm-40gb",
                        "h100-sxm",
                        "h200-sxm",
                        "h20",
                        "b200",
                        "b300",
                        "gb200",
                        "gb300");
    }

    @Test
    void llama8b_countsByHand() {
        ModelSpec m = Specs.model("llama-3.1-8b", "timing.model");
        long attention = 4096L * 4096 + 2L * 4096 * 1024 + 4096L * 4096;
        long mlp = 3L * 4096 * 14336;
        // 8,029,995,008 (the published 8,030,261,248 adds 266,240 norm weights, neglected here)
        assertThat(m.totalParams()).isEqualTo(32 * (attention + mlp) + 2L * 128256 * 4096);
        assertThat(m.kvBytesPerToken(2, 1)).isEqualTo(131_072); // 2 x 32 layers x 8 heads x 128 x 2 B
        assertThat(m.kvBytesPerToken(2, 4)).isEqualTo(32_768);
        assertThat(m.kvBytesPerToken(2, 16)).isEqualTo(16_384); // 8 KV heads over 16 GPUs: replicated, 1 per GPU
    }

    @Test
    void huggingFaceConfigs_load_denseAndMoe(@TempDir Path dir) throws IOException {
        Path dense = dir.resolve("dense.json");
        Files.writeString(dense, """
                {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 2,
                 "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 3072,
                 "vocab_size": 1000, "tie_word_embeddings": true, "torch_dtype": "bfloat16"}
                """);
        ModelSpec d = Specs.model(dense.toString(), "timing.model");
        assertThat(d.headDim()).isEqualTo(128); // hidden / heads when head_dim is absent
        assertThat(d.moe()).isFalse();
        long attention = 1024L * 1024 + 2L * 1024 * 512 + 1024L * 1024;
        assertThat(d.totalParams()).isEqualTo(2 * (attention + 3L * 1024 * 3072) + 1000L * 1024); // tied: one matrix
        Path moe = dir.resolve("moe.json");
        Files.writeString(moe, """
                {"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 256, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 1024,
                 "moe_intermediate_size": 128, "num_experts": 16, "num_experts_per_tok": 2, "vocab_size": 500}
                """);
        ModelSpec e = Specs.model(moe.toString(), "timing.model");
        assertThat(e.moe()).isTrue();
        long att = 256L * 256 + 2L * 256 * 128 + 256L * 256;
        long experts = 16 * 3L * 256 * 128 + 256L * 16;
        assertThat(e.totalParams()).isEqualTo(2 * (att + experts) + 2L * 500 * 256);
        assertThat(e.activeParams()).isEqualTo(2 * (att + 2 * 3L * 256 * 128 + 256L * 16) + 2L * 500 * 256);
    }

    @Test
    void tensorParallel_mustShardTheHeadsEvenly_asVllmRequires(@TempDir Path dir) throws IOException {
        java.util.function.Function<String, SimConfig> withTp = tp -> ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm", "timing.tensor_parallel=" + tp));
        assertThat(Deployment.resolve(withTp.apply("8")).numGpuBlocks()).isPositive(); // 32 heads / 8, 8 KV heads / 8
        assertThat(Deployment.resolve(withTp.apply("32")).numGpuBlocks()).isPositive(); // KV heads replicated 4 times
        assertThatThrownBy(() -> Deployment.resolve(withTp.apply("3")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("timing.tensor_parallel")
                .hasMessageContaining("32 attention heads");
        assertThatThrownBy(() -> Deployment.resolve(withTp.apply("1000000")))
                .hasMessageContaining("timing.tensor_parallel")
                .hasMessageContaining("divisible");
        // 48 heads over 4 GPUs divide, but 6 KV heads can neither be split nor replicated evenly over 4
        Path odd = dir.resolve("odd.json");
        Files.writeString(odd, """
                {"architectures": ["LlamaForCausalLM"], "hidden_size": 3072, "num_hidden_layers": 2,
                 "num_attention_heads": 48, "num_key_value_heads": 6, "intermediate_size": 8192,
                 "vocab_size": 1000, "torch_dtype": "bfloat16"}
                """);
        SimConfig c = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=" + odd, "timing.gpu=h100-sxm", "timing.tensor_parallel=4"));
        assertThatThrownBy(() -> Deployment.resolve(c))
                .hasMessageContaining("timing.tensor_parallel")
                .hasMessageContaining("6 KV heads");
    }

    @Test
    void badModelConfigs_failNamingTheField(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("missing.json");
        Files.writeString(missing, "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64}");
        assertThatThrownBy(() -> Specs.model(missing.toString(), "timing.model"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("timing.model: ")
                .hasMessageContaining("missing 'num_hidden_layers'");
        Path unknown = dir.resolve("unknown.json");
        Files.writeString(unknown, "{\"architectures\": [\"MambaForCausalLM\"]}");
        assertThatThrownBy(() -> Specs.model(unknown.toString(), "timing.model"))
                .hasMessageContaining("'MambaForCausalLM' is not supported")
                .hasMessageContaining("LlamaForCausalLM");
        assertThatThrownBy(() -> Specs.model("llama-9", "timing.model"))
                .hasMessageContaining("unknown model 'llama-9'")
                .hasMessageContaining("qwen3-32b");
        assertThatThrownBy(() -> Specs.gpu("h1000", "timing.gpu"))
                .hasMessageContaining("unknown GPU 'h1000'")
                .hasMessageContaining("h100-sxm");
    }

    @Test
    void gpuPresets_areTheIssuesSevenAndCommonServingParts_withSources() {
        assertThat(Specs.gpuPresets())
                .containsExactlyInAnyOrder(
                        "a100-sxm-80gb",
                        "h100-sxm",
                        "h200-sxm",
                        "b200",
                        "b300",
                        "gb200",
                        "gb300",
                        "l40s",
                        "rtx-4090",
                        "rtx-pro-6000",
                        "a100-sxm-40gb",
                        "a100-pcie-80gb",
                        "h100-pcie",
                        "h100-nvl",
                        "h20",
                        "l40",
                        "l4",
                        "a10");
        for (String g : Specs.gpuPresets()) {
            GpuSpec s = Specs.gpu(g, "timing.gpu");
            assertThat(s.source()).as(g).isNotBlank();
            assertThat(s.bandwidthGbytesPerS()).as(g).isPositive();
        }
        assertThat(Specs.gpu("h100-sxm", "g").flopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(1978.9e12);
        assertThat(Specs.gpu("a100-sxm-80gb", "g").flopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(312e12); // no FP8: BF16 rate
    }

    @Test
    void achievedRates_areAiConfiguratorsMeasurements_whereItMeasuredTheGpu() {
        GpuSpec h100 = Specs.gpu("h100-sxm", "g");
        assertThat(h100.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16))
                .isEqualTo(843.8e12);
        assertThat(h100.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(1155.2e12);
        assertThat(h100.achievedBytesPerSecond()).isEqualTo(3022e9);
        assertThat(h100.achieved().source()).contains("measured");
        // no FP8 tensor cores: FP8 weights run at the measured BF16 rate
        GpuSpec a100 = Specs.gpu("a100-sxm-80gb", "g");
        assertThat(a100.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(288.1e12);
    }

    @Test
    void fusedMoeRate_isMeasuredPerExpertTypeWhereAiConfiguratorHasTheTable_elseTheGemmRateTimesTheMeanRatio() {
        GpuSpec h100 = Specs.gpu("h100-sxm", "g");
        assertThat(h100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16))
                .isEqualTo(621.3e12);
        // block-scaled FP8 and MXFP4 experts at their own measured rates (vLLM 0.24, moe_dtype fp8_block and
        // w4a16_mxfp4): about the BF16 rate, not the 1.37 x FP8 GEMMs gain over BF16 GEMMs on this GPU
        assertThat(h100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(615.9e12);
        assertThat(h100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.MXFP4))
                .isEqualTo(561.0e12);
        GpuSpec b200 = Specs.gpu("b200", "g");
        assertThat(b200.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(893.5e12) // below B200's BF16 fused MoE (1,089.9)
                .isLessThan(b200.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16));
        // unmeasured (the A100): FP8 experts gain what FP8 GEMMs gain over BF16 (none there), MXFP4 the BF16 rate
        GpuSpec a100 = Specs.gpu("a100-sxm-80gb", "g");
        assertThat(a100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(a100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16)
                        * a100.achieved().fp8Tflops()
                        / a100.achieved().bf16Tflops());
        assertThat(a100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.MXFP4))
                .isEqualTo(a100.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16));
        // no vLLM MoE table for the A100: its measured GEMM rate times the mean fused-MoE / GEMM ratio of the eight
        // GPUs that have one (0.685)
        double ratio = (621.3 / 843.8
                        + 662.7 / 828.2
                        + 1089.9 / 1679.6
                        + 1142.5 / 1843.6
                        + 1171.6 / 1843.9
                        + 1203.0 / 2017.0
                        + 219.9 / 260.1
                        + 248.8 / 415.2)
                / 8;
        assertThat(Specs.gpu("a100-sxm-80gb", "g")
                        .achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16))
                .isCloseTo(288.1e12 * ratio, org.assertj.core.data.Offset.offset(1e3));
        assertThat(ratio).isBetween(0.68, 0.69);
    }

    @Test
    void ncclAllGatherAndReduceScatter_areMeasuredForGroupsOf2To8OnEveryMeasuredGpu() {
        for (String g : List.of("a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200", "l40s", "rtx-pro-6000")) {
            GpuSpec s = Specs.gpu(g, "g");
            for (int group : new int[] {2, 4, 8}) {
                assertThat(s.allGather().covers(group)).as(g + " " + group).isTrue();
                assertThat(s.reduceScatter().covers(group)).as(g + " " + group).isTrue();
            }
        }
        // H100, NCCL 2.29.2, 4 GPUs, 1,048,576 FP16 elements (2 MiB gathered): 19.13 and 17.54 us
        GpuSpec h100 = Specs.gpu("h100-sxm", "g");
        assertThat(h100.allGather().seconds(4, 1_048_576))
                .isCloseTo(19.13e-6, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(h100.reduceScatter().seconds(4, 1_048_576))
                .isCloseTo(17.54e-6, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(Specs.gpu("rtx-4090", "g").allGather()).isNull(); // nobody measured it: the link model
    }

    @Test
    void achievedRates_neverExceedTheDatasheet_andMeasuredAllReducesCoverTp2To8() {
        // a measured rate above the datasheet means a misread datasheet (the L40S preset once had half its rates)
        for (String g : Specs.gpuPresets()) {
            GpuSpec s = Specs.gpu(g, "timing.gpu");
            for (io.servesim.config.TimingConfig.Dtype d : io.servesim.config.TimingConfig.Dtype.values()) {
                assertThat(s.achievedFlopsPerSecond(d))
                        .as(g + " " + d)
                        .isBetween(0.3 * s.flopsPerSecond(d), s.flopsPerSecond(d));
            }
            assertThat(s.achievedBytesPerSecond())
                    .as(g)
                    .isBetween(0.5e9 * s.bandwidthGbytesPerS(), 1e9 * s.bandwidthGbytesPerS());
            if (s.allReduce() != null) {
                // a GB200 or GB300 tray holds four GPUs: its tables stop at TP 4 (TP 8 takes the link model)
                int[] groups = g.startsWith("gb") ? new int[] {2, 4} : new int[] {2, 4, 8};
                for (int tp : groups) {
                    assertThat(s.allReduce().covers(tp)).as(g + " TP" + tp).isTrue();
                    assertThat(s.allReduce().seconds(tp, 1e6))
                            .isBetween(1e-6, 1e-2); // 2 MB: 12 us (H100 TP2) to 2 ms (L40S TP8)
                }
            }
        }
    }

    @Test
    void attentionKernels_areVllmsDefaultsByArchitecture_andACustomGpuStatesItsOwn() {
        for (String g : List.of("h100-sxm", "h200-sxm", "h100-pcie", "h100-nvl", "h20")) {
            assertThat(Specs.gpu(g, "g").attentionKernel()).as(g).isEqualTo(io.servesim.config.AttentionKernel.FA3);
        }
        assertThat(Specs.gpu("b200", "g").attentionKernel()).isEqualTo(io.servesim.config.AttentionKernel.FLASHINFER);
        for (String g : List.of(
                "a100-sxm-80gb",
                "a100-sxm-40gb",
                "a100-pcie-80gb",
                "l40s",
                "l40",
                "l4",
                "a10",
                "rtx-4090",
                "rtx-pro-6000")) {
            assertThat(Specs.gpu(g, "g").attentionKernel()).as(g).isEqualTo(io.servesim.config.AttentionKernel.FA2);
        }
        List<String> custom = List.of(
                "timing.model=llama-3.1-8b",
                "timing.gpu=custom",
                "timing.custom_gpu.memory_gib=80",
                "timing.custom_gpu.bandwidth_gbytes_per_s=2000",
                "timing.custom_gpu.bf16_tflops=400",
                "timing.custom_gpu.link_gbytes_per_s=64");
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", custom))
                        .gpu()
                        .attentionKernel())
                .isEqualTo(io.servesim.config.AttentionKernel.FA2);
        List<String> hopperLike = new java.util.ArrayList<>(custom);
        hopperLike.add("timing.custom_gpu.attention_kernel=fa3");
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", hopperLike))
                        .gpu()
                        .attentionKernel())
                .isEqualTo(io.servesim.config.AttentionKernel.FA3);
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.custom_gpu.attention_kernel=fa4")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("timing.custom_gpu.attention_kernel")
                .hasMessageContaining("fa2, fa3, flashinfer");
    }

    @Test
    void achievedRates_ofTheRtx4090_areLlmServingSimsLayerProfiles() {
        // profiled-kernels.yaml (LLMServingSim's vLLM 0.19.0 layer profile of Llama-3.1-8B on an RTX 4090): GEMMs at
        // 163.5 of the datasheet's 165.2 TFLOP/s (GeForce runs BF16 with FP32 accumulate at half rate, far from its
        // power limit), weights streamed at 942 of 1,008 GB/s, prefill attention 134.2 TFLOP/s
        GpuSpec rtx4090 = Specs.gpu("rtx-4090", "g");
        assertThat(rtx4090.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16))
                .isEqualTo(163.5e12);
        assertThat(rtx4090.achievedBytesPerSecond()).isEqualTo(942e9);
        assertThat(rtx4090.achieved().source()).startsWith("measured: LLMServingSim");
        // not measured there: FP8 and the fused-MoE rate fall back to the fleet ratios
        assertThat(rtx4090.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isLessThan(330.3e12 * 0.7);
        assertThat(rtx4090.allReduce()).isNull();
    }

    @Test
    void llmServingSimsProfiles_agreeWithAiConfiguratorsTables_onTheGpuBothMeasure() throws IOException {
        // the RTX PRO 6000: two labs, two harnesses, the same statistics; AIConfigurator's table is the one used
        tools.jackson.databind.JsonNode profiled;
        try (var in = Specs.class.getResourceAsStream("profiled-kernels.yaml")) {
            profiled = tools.jackson.dataformat.yaml.YAMLMapper.builder()
                    .build()
                    .readTree(in)
                    .get("rtx-pro-6000");
        }
        GpuSpec pro = Specs.gpu("rtx-pro-6000", "g");
        assertThat(pro.achieved().source()).contains("AIConfigurator");
        assertThat(profiled.get("bf16_tflops").asDouble() * 1e12)
                .isCloseTo(
                        pro.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16),
                        Percentage.withPercentage(5));
        assertThat(profiled.get("gbytes_per_s").asDouble() * 1e9)
                .isCloseTo(pro.achievedBytesPerSecond(), Percentage.withPercentage(3));
        // attention differs more (AIConfigurator: whole prompts of 4,096+ tokens; LLMServingSim: 2,048-token chunks)
        assertThat(profiled.get("attention_tflops").asDouble() * 1e12)
                .isCloseTo(pro.achievedAttentionFlopsPerSecond(), Percentage.withPercentage(15));
    }

    @Test
    void achievedRates_ofAnUnmeasuredGpu_areItsDatasheetTimesTheMeasuredGpusMeanRatio() {
        // measured / datasheet over the nine measured presets (measured-kernels.yaml over gpus.yaml)
        double bf16 = (288.1 / 312
                        + 843.8 / 989.4
                        + 828.2 / 989.4
                        + 1679.6 / 2250
                        + 1843.6 / 2250
                        + 1843.9 / 2500
                        + 2017.0 / 2500
                        + 260.1 / 362.05
                        + 415.2 / 503.8)
                / 9; // 0.807
        double fp8 = (1155.2 / 1978.9
                        + 1303.6 / 1978.9
                        + 2589.2 / 4500
                        + 2756.7 / 4500
                        + 2861.0 / 5000
                        + 3083.5 / 5000
                        + 390.9 / 733
                        + 768.2 / 1007.6)
                / 8; // 0.614
        double bw = (1669.0 / 2039
                        + 3022.0 / 3350
                        + 4148.0 / 4800
                        + 6701.0 / 8000
                        + 6619.0 / 8000
                        + 6981.0 / 8000
                        + 6711.0 / 8000
                        + 727.0 / 864
                        + 1506.0 / 1792)
                / 9; // 0.849
        GpuSpec l4 = Specs.gpu("l4", "g");
        org.assertj.core.data.Offset<Double> ulp = org.assertj.core.data.Offset.offset(1e3);
        assertThat(l4.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16))
                .isCloseTo(121e12 * bf16, ulp);
        assertThat(l4.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isCloseTo(242.5e12 * fp8, ulp);
        assertThat(l4.achievedBytesPerSecond()).isCloseTo(300e9 * bw, ulp);
        assertThat(l4.achieved().source()).contains("mean ratios");

        // a custom GPU: its own achieved_* values where given, the same fallback for the rest
        SimConfig c = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "timing.model=llama-3.1-8b",
                        "timing.gpu=custom",
                        "timing.custom_gpu.memory_gib=80",
                        "timing.custom_gpu.bandwidth_gbytes_per_s=2000",
                        "timing.custom_gpu.bf16_tflops=400",
                        "timing.custom_gpu.link_gbytes_per_s=64",
                        "timing.custom_gpu.achieved_bf16_tflops=300"));
        GpuSpec custom = Deployment.resolve(c).gpu();
        assertThat(custom.achievedFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.BF16))
                .isEqualTo(300e12);
        assertThat(custom.achievedBytesPerSecond()).isCloseTo(2000e9 * bw, ulp);
    }

    @Test
    void streamingByShape_isMeasuredPerGpu_smallMatricesSlower_andUnmeasuredGpusTakeTheNearestMeasuredGpusGrid() {
        List<String> measured = List.of("a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200", "l40s", "rtx-pro-6000");
        for (String name : measured) {
            GpuSpec.StreamingShapes shapes = Specs.gpu(name, "t").achieved().shapes();
            // a 1,024 x 1,024 weight (2 MiB) streams far below the large-GEMM rate, 8,192 x 8,192 (128 MiB) near it
            assertThat(shapes.factor(1024, 1024)).as(name).isLessThan(0.6);
            assertThat(shapes.factor(8192, 8192)).as(name).isBetween(0.75, 1.1);
        }
        // the shape penalty follows the streaming rate: the L4 (300 GB/s x 0.851) is nearest the L40S (727), a custom
        // GPU streaming 3,000 GB/s the H100 (3,022)
        GpuSpec.StreamingShapes l40s = Specs.gpu("l40s", "t").achieved().shapes();
        assertThat(Specs.gpu("l4", "t").achieved().shapes()).isSameAs(l40s);
        assertThat(Specs.nearestShapes(3000))
                .isSameAs(Specs.gpu("h100-sxm", "t").achieved().shapes());
        assertThat(Specs.nearestShapes(1500))
                .isSameAs(Specs.gpu("rtx-pro-6000", "t").achieved().shapes());
    }

    @Test
    void aProfiledGpu_borrowsTheNearestGrid_scaledSoItsOwnMeasuredShapesTakeTheirMeasuredTime() {
        // the RTX 4090 (LLMServingSim's 942 GB/s) borrows the L40S's grid, scaled so Llama-3.1-8B's four weight
        // shapes, at the rates LLMServingSim measured at 16 tokens, take as long in all as measured
        GpuSpec rtx4090 = Specs.gpu("rtx-4090", "t");
        GpuSpec.StreamingShapes shapes = rtx4090.achieved().shapes();
        GpuSpec.StreamingShapes l40s = Specs.gpu("l40s", "t").achieved().shapes();
        List<double[]> points = Specs.profiledStreamingPoints("rtx-4090");
        assertThat(points).hasSize(4);
        double measured = 0;
        double priced = 0;
        for (double[] p : points) {
            measured += 2 * p[0] * p[1] / (p[2] * 1e9);
            priced += 2 * p[0] * p[1] / (shapes.factor(p[0], p[1]) * rtx4090.achievedBytesPerSecond());
        }
        assertThat(priced).isCloseTo(measured, org.assertj.core.data.Offset.offset(measured * 1e-12));
        // a uniform scale of the L40S's grid: the ratio of any two shapes is the L40S's
        assertThat(shapes.factor(4096, 4096) / shapes.factor(8192, 8192))
                .isCloseTo(
                        l40s.factor(4096, 4096) / l40s.factor(8192, 8192), org.assertj.core.data.Offset.offset(1e-12));
        assertThat(shapes.factor(4096, 4096)).isGreaterThan(l40s.factor(4096, 4096));
        assertThat(Specs.profiledStreamingPoints("h100-sxm")).isEmpty();
    }

    @Test
    void streamingShapes_interpolateTimePerByteOverLogWidths_andHoldTheEdgeOutsideTheGrid() {
        GpuSpec.StreamingShapes s =
                new GpuSpec.StreamingShapes(new double[] {1024, 4096}, new double[][] {{0.25, 0.5}, {0.5, 1}});
        assertThat(s.factor(1024, 4096)).isEqualTo(0.5); // a measured cell (row k, column n)
        // 2,048 is halfway between 1,024 and 4,096 in log: the mean of the four cells' time per byte, (4 + 2 + 2 + 1)
        // / 4 = 2.25, so 1 / 2.25 of the rate
        assertThat(s.factor(2048, 2048)).isCloseTo(1 / 2.25, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(s.factor(100, 100)).isEqualTo(0.25);
        assertThat(s.factor(1 << 20, 1 << 20)).isEqualTo(1);
        assertThat(s.factor(1 << 20, 100)).isEqualTo(0.5);
        assertThatThrownBy(() ->
                        new GpuSpec.StreamingShapes(new double[] {1024, 1024}, new double[][] {{1, 1}, {1, 1}}))
                .hasMessageContaining("increasing");
        assertThatThrownBy(() ->
                        new GpuSpec.StreamingShapes(new double[] {1024, 2048}, new double[][] {{1, 0}, {1, 1}}))
                .hasMessageContaining("positive");
        assertThatThrownBy(() -> new GpuSpec.StreamingShapes(new double[] {1024, 2048}, new double[][] {{1, 1}}))
                .hasMessageContaining("1 rows for 2 widths");
    }

    @Test
    void kvCapacity_followsVllmsFormula_llama8bOnH100() {
        SimConfig c = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm", "engine.kv_cache.block_size=16"));
        Deployment d = Deployment.resolve(c);
        double gib = 1L << 30;
        double memory = 79.19 * gib;
        double weights = 8_029_995_008.0 * 2;
        double forward = 8192.0 * (2 * 14336 + 4 * 4096) * 2; // profiling forward of max_num_batched_tokens
        double sampler = 1024.0 * 128256 * 4 * 2; // fp32 logits + probs of max_num_seqs requests: the larger
        double available = 0.9 * memory - weights - Math.max(forward, sampler) - 1.0 * gib;
        int blocks = (int) Math.floor(available / (16 * 131072.0));
        assertThat(d.numGpuBlocks()).isEqualTo(blocks); // 27,820 (vllm-semantics.md §7.5: about 27.5k)
        assertThat(blocks).isBetween(27_000, 28_500);
        assertThat(d.blocksSource()).isEqualTo("derived");
        assertThat(d.bytesPerToken()).isEqualTo(131_072);
        assertThat(d.timingType()).isEqualTo(io.servesim.config.TimingType.ROOFLINE);
        assertThat(d.maxModelLen()).isEqualTo(131_072); // the model's limit, below what the pool holds
        SimConfig fixed = ConfigLoader.fromYaml(
                "",
                "t",
                List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm", "engine.kv_cache.num_gpu_blocks=1000"));
        assertThat(Deployment.resolve(fixed).numGpuBlocks()).isEqualTo(1000);
        assertThat(Deployment.resolve(fixed).blocksSource()).isEqualTo("configured");
    }

    @Test
    void aModelThatDoesNotFit_isAConfigErrorSayingWhat() {
        SimConfig c = ConfigLoader.fromYaml("", "t", List.of("timing.model=llama-3.1-70b", "timing.gpu=rtx-4090"));
        assertThatThrownBy(() -> Deployment.resolve(c))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("does not fit on rtx-4090")
                .hasMessageContaining("tensor_parallel");
    }

    @Test
    void allReduce_isTheDeploymentsVllmVersions_theNewestMeasuredNotNewer_elseTheOldest() {
        // AIConfigurator measured vLLM's all-reduce on the RTX PRO 6000 (PCIe) for vLLM 0.24 (2, 4 and 8 GPUs) and 0.19
        // (2 GPUs), 2-4 times slower there: at 1,048,576 elements over 2 GPUs 55.69 against 157.54 us
        double elements = 1_048_576;
        Offset<Double> exact = Offset.offset(1e-15);
        // {major, minor, group, the measured latency in us}
        double[][] cases = {
            {0, 24, 2, 55.69},
            {0, 19, 2, 157.54},
            {0, 22, 2, 157.54}, // between the measured versions: the newest not newer than it
            {0, 12, 2, 157.54}, // older than every measured version: the oldest
            {1, 2, 2, 55.69},
            {0, 19, 4, 145.76}, // a group only vLLM 0.24 measured
        };
        for (double[] c : cases) {
            int group = (int) c[2];
            assertThat(Specs.allReduce("rtx-pro-6000", new VllmVersion((int) c[0], (int) c[1]), group)
                            .seconds(group, elements))
                    .as("vLLM %d.%d, %d GPUs", (int) c[0], (int) c[1], group)
                    .isCloseTo(c[3] * 1e-6, exact);
        }
        // NVLink GPUs measured the same kernel in every version: one table
        assertThat(Specs.allReduce("h100-sxm", new VllmVersion(0, 14), 2).seconds(2, elements))
                .isEqualTo(Specs.gpu("h100-sxm", "t").allReduce().seconds(2, elements));
        assertThat(Specs.allReduce("rtx-4090", new VllmVersion(0, 19), 2)).isNull(); // no table at all
        // a deployment that states its version is priced with that version's table; one that does not, the newest's
        List<String> tp2 = List.of("timing.model=qwen3-32b", "timing.gpu=rtx-pro-6000", "timing.tensor_parallel=2");
        SimConfig stated = ConfigLoader.fromYaml("", "t", concat(tp2, "timing.vllm_version=v0.19.0rc1"));
        assertThat(Deployment.resolve(stated).gpu().allReduce().seconds(2, elements))
                .isCloseTo(157.54e-6, exact);
        SimConfig unstated = ConfigLoader.fromYaml("", "t", tp2);
        assertThat(Deployment.resolve(unstated).gpu().allReduce().seconds(2, elements))
                .isCloseTo(55.69e-6, exact);
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", concat(tp2, "timing.vllm_version=nightly")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("timing.vllm_version")
                .hasMessageContaining("expected a vLLM version such as \"0.19.0\", got \"nightly\"");
    }

    @Test
    void fusedAllReduce_fromVllm016_onHopperAndBlackwellDataCentre_upToVllmsSizeLimit() {
        // vLLM's FI_ALLREDUCE_FUSION_MAX_SIZE_MB: compute capability 9.0 64 / 2 / 0.5 MB, 10.x 64 / 32 / 1 MB (TP
        // 2/4/8)
        long mib = 1024 * 1024;
        assertThat(Specs.fusedAllReduce("h100-sxm", null, 2).maxBytes()).isEqualTo(64 * mib);
        assertThat(Specs.fusedAllReduce("h200-sxm", null, 4).maxBytes()).isEqualTo(2 * mib);
        assertThat(Specs.fusedAllReduce("h100-sxm", null, 8).maxBytes()).isEqualTo(mib / 2);
        assertThat(Specs.fusedAllReduce("b200", null, 4).maxBytes()).isEqualTo(32 * mib);
        assertThat(Specs.fusedAllReduce("b200", null, 8).maxBytes()).isEqualTo(mib);
        // priced with TensorRT-LLM's measured all-reduce: 6.34 us at 65,536 elements over eight B200s
        assertThat(Specs.fusedAllReduce("b200", null, 8).table().seconds(8, 65536))
                .isCloseTo(6.34e-6, Offset.offset(1e-15));
        // not before vLLM 0.16, not for one GPU or a group FlashInfer does not fuse, not on other architectures
        assertThat(Specs.fusedAllReduce("b200", new VllmVersion(0, 15), 8)).isNull();
        assertThat(Specs.fusedAllReduce("b200", new VllmVersion(0, 16), 8)).isNotNull();
        assertThat(Specs.fusedAllReduce("b200", null, 1)).isNull();
        assertThat(Specs.fusedAllReduce("b200", null, 16)).isNull();
        assertThat(Specs.fusedAllReduce("rtx-pro-6000", null, 2)).isNull(); // Blackwell workstation (12.0)
        assertThat(Specs.fusedAllReduce("a100-sxm-80gb", null, 2)).isNull(); // Ampere
        assertThat(Specs.fusedAllReduce("h20", null, 2)).isNull(); // Hopper, but nobody measured the kernel on it
        // attention DP turned it off from 0.16 until vLLM 0.22
        assertThat(Specs.fusedAllReduce("h100-sxm", new VllmVersion(0, 19), 4).withAttentionDp())
                .isFalse();
        assertThat(Specs.fusedAllReduce("h100-sxm", new VllmVersion(0, 22), 4).withAttentionDp())
                .isTrue();
        assertThat(Specs.fusedAllReduce("h100-sxm", null, 4).withAttentionDp()).isTrue();
        // a deployment gets it for vLLM, by its version (unstated: the newest), and not for SGLang or TensorRT-LLM
        List<String> tp8 = List.of("timing.model=llama-3.1-70b", "timing.gpu=b200", "timing.tensor_parallel=8");
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", tp8)).gpu().fusedAllReduce())
                .isNotNull();
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", concat(tp8, "timing.vllm_version=0.15.1")))
                        .gpu()
                        .fusedAllReduce())
                .isNull();
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", concat(tp8, "engine.kind=sglang")))
                        .gpu()
                        .fusedAllReduce())
                .isNull();
        // a stated link bandwidth prices every collective with the link model: no measured fused kernel either
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", concat(tp8, "timing.link_gbytes_per_s=100")))
                        .gpu()
                        .fusedAllReduce())
                .isNull();
    }

    @Test
    void gptOss_loadsItsCheckpointsMxfp4Experts_andFitsOneH100_asItsReleaseSays() {
        // gpt-oss's config.json: quantization_config.quant_method mxfp4, which vLLM applies to the routed experts only
        assertThat(Specs.model("gpt-oss-120b", "t").checkpointExpertDtype()).isEqualTo(TimingConfig.Dtype.MXFP4);
        assertThat(Specs.model("gpt-oss-20b", "t").checkpointExpertDtype()).isEqualTo(TimingConfig.Dtype.MXFP4);
        assertThat(Specs.model("mixtral-8x7b", "t").checkpointExpertDtype()).isNull();
        SimConfig c = ConfigLoader.fromYaml("", "t", List.of("timing.model=gpt-oss-120b", "timing.gpu=h100-sxm"));
        Deployment d = Deployment.resolve(c);
        // 36 layers x 128 experts x 3 x 2,880 x 2,880 expert weights at 4.25 bits, the other 2,127,052,800 in BF16
        double experts = 36.0 * 128 * 3 * 2880 * 2880;
        double others = 116_788_838_400.0 - experts;
        double gib = 1L << 30;
        assertThat(d.capacity().weightsGib())
                .isCloseTo((others * 2 + experts * 0.53125) / gib, Offset.offset(1e-9)); // 60.69 GiB: 65.2 GB
        assertThat(d.numGpuBlocks()).isPositive();
        assertThat(d.expertDtype()).isEqualTo(TimingConfig.Dtype.MXFP4); // reported in summary.json's deployment
        assertThat(Deployment.resolve(ConfigLoader.fromYaml(
                                "", "t", List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm")))
                        .expertDtype())
                .isNull(); // dense: none
        // BF16 experts (a dequantized copy) do not fit, as before the checkpoint's type was known
        SimConfig bf16 = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=gpt-oss-120b", "timing.gpu=h100-sxm", "timing.expert_dtype=bf16"));
        assertThatThrownBy(() -> Deployment.resolve(bf16))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("does not fit on h100-sxm");
    }

    /**
     * vLLM's hybrid KV cache for gpt-oss ({@code _get_kv_cache_groups_uniform_page_size}, {@code get_num_blocks} at
     * 9aaf83ef): its 18 sliding-window and 18 full-attention layers form two groups of 18, and a block holds one
     * group's layers, so the same memory holds twice the blocks it would with every layer in one group
     * ({@code hybrid_window: 0}, vLLM's {@code --disable-hybrid-kv-cache-manager}). With a KV connector servesim keeps
     * the single group; a stated window is refused where it cannot run.
     */
    @Test
    void gptOss_hybridKvCache_holdsTwiceTheBlocks_oneGroupsLayersPerBlock() {
        java.util.function.Function<String[], Deployment> d = sets -> Deployment.resolve(ConfigLoader.fromYaml(
                "",
                "t",
                java.util.stream.Stream.concat(
                                java.util.stream.Stream.of("timing.model=gpt-oss-120b", "timing.gpu=h100-sxm"),
                                java.util.Arrays.stream(sets))
                        .toList()));
        Deployment hybrid = d.apply(new String[0]);
        Deployment single = d.apply(new String[] {"engine.kv_cache.hybrid_window=0"});
        assertThat(hybrid.hybridWindowTokens()).isEqualTo(128);
        assertThat(single.hybridWindowTokens()).isZero();
        double kvBytes = hybrid.capacity().availableKvGib() * (1L << 30);
        double blockAllLayers = 16.0 * Specs.model("gpt-oss-120b", "t").kvBytesPerToken(2, 1);
        assertThat(single.numGpuBlocks()).isEqualTo((int) Math.floor(kvBytes / blockAllLayers));
        assertThat(hybrid.numGpuBlocks()).isEqualTo((int) Math.floor(kvBytes / (blockAllLayers / 2)));
        assertThat(d.apply(new String[] {"engine.kvcr.enabled=true"}).hybridWindowTokens())
                .as("with a KV connector the single group")
                .isZero();
        // vLLM's start-up check over both groups: 8,499 usable blocks hold ceil(len / 16) full-attention blocks plus
        // the window group's ceil(min(127 + 8192, len) / 16) + 1 = 521, so at most 7,978 x 16 = 127,648 tokens
        assertThat(d.apply(new String[] {"engine.kv_cache.num_gpu_blocks=8500"}).maxModelLen())
                .as("derived: lowered to what both groups hold")
                .isEqualTo(127_648);
        assertThatThrownBy(() ->
                        d.apply(new String[] {"engine.kv_cache.num_gpu_blocks=8500", "engine.max_model_len=131072"}))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.max_model_len")
                .hasMessageContaining("hybrid KV cache");
        assertThat(d.apply(new String[] {
                            "engine.kv_cache.num_gpu_blocks=8500",
                            "engine.max_model_len=131072",
                            "engine.kv_cache.hybrid_window=0"
                        })
                        .maxModelLen())
                .as("one group: full attention alone must fit")
                .isEqualTo(131_072);
        assertThatThrownBy(
                        () -> d.apply(new String[] {"engine.kvcr.enabled=true", "engine.kv_cache.hybrid_window=128"}))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kv_cache.hybrid_window");
        assertThatThrownBy(() -> Deployment.resolve(ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of(
                                "timing.model=llama-3.1-8b",
                                "timing.gpu=h100-sxm",
                                "engine.kv_cache.hybrid_window=64"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("no sliding-window layers");
        assertThatThrownBy(() -> Deployment.resolve(ConfigLoader.fromYaml(
                        "", "t", List.of("engine.kind=sglang", "engine.kv_cache.hybrid_window=64"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kind: vllm");
    }

    @Test
    void mxfp4Experts_occupyTheWeightsTheirBackendPadsThemTo_asVllmLoadsThem() {
        // vLLM pads each MXFP4 expert for its backend: Marlin (the RTX PRO 6000, AIConfigurator's kernel source) the
        // hidden size to 256 and each GPU's intermediate slice to 128; Triton (Hopper) the slice to 64
        assertThat(Specs.gpu("rtx-pro-6000", "t").mxfp4Moe().backend()).isEqualTo(GpuSpec.MoeBackend.MARLIN);
        assertThat(Specs.gpu("h100-sxm", "t").mxfp4Moe().backend()).isEqualTo(GpuSpec.MoeBackend.TRITON);
        assertThat(Specs.gpu("b200", "t").mxfp4Moe().backend()).isEqualTo(GpuSpec.MoeBackend.FLASHINFER_TRTLLM);
        double experts = 36.0 * 128 * 3 * 2880 * 2880;
        double others = (116_788_838_400.0 - experts) * 2;
        double gib = 1L << 30;
        java.util.function.BiFunction<String, String, Double> weights =
                (gpu, tp) -> Deployment.resolve(ConfigLoader.fromYaml(
                                "",
                                "t",
                                List.of(
                                        "timing.model=gpt-oss-120b",
                                        "timing.gpu=" + gpu,
                                        "timing.tensor_parallel=" + tp)))
                        .capacity()
                        .weightsGib();
        // one RTX PRO 6000: 3,072 x 2,944 per expert matrix pair instead of 2,880 x 2,880 (+9.0 %)
        assertThat(weights.apply("rtx-pro-6000", "1"))
                .isCloseTo((others + 36.0 * 128 * 3 * 3072 * 2944 * 0.53125) / gib, Offset.offset(1e-9));
        // two H100s: the slice of 1,440 becomes 1,472; the hidden size stays
        assertThat(weights.apply("h100-sxm", "2"))
                .isCloseTo((others / 2 + 36.0 * 128 * 3 * 2880 * 1472 * 0.53125) / gib, Offset.offset(1e-9));
        // expert parallelism over two: 64 whole experts each, the intermediate size 2,880 already a multiple of 64
        SimConfig ep = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "timing.model=gpt-oss-120b",
                        "timing.gpu=h100-sxm",
                        "timing.tensor_parallel=2",
                        "timing.expert_parallel=true"));
        assertThat(Deployment.resolve(ep).capacity().weightsGib())
                .isCloseTo((others / 2 + experts / 2 * 0.53125) / gib, Offset.offset(1e-9));
    }

    @Test
    void aModeloptCheckpointsKvCacheQuantization_isServedAsVllmsAutoKvCacheDtypeTakesIt() {
        String shapes = "\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                + " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": 128,"
                + " \"vocab_size\": 1000";
        // NVIDIA's releases: kv_cache_quant_algo FP8 (top level, or under "quantization" in hf_quant_config.json)
        ModelSpec fp8 = config("{" + shapes + ", \"quantization_config\": {\"quant_method\": \"modelopt\","
                + " \"quant_algo\": \"NVFP4\", \"kv_cache_quant_algo\": \"FP8\"}}");
        assertThat(fp8.kvDtype(Dtype.BF16)).isEqualTo(Dtype.FP8);
        assertThat(fp8.kvBytes(Dtype.BF16)).isEqualTo(1);
        ModelSpec nested = config("{" + shapes + ", \"quantization_config\": {\"quant_method\": \"modelopt\","
                + " \"quantization\": {\"quant_algo\": \"FP8\", \"kv_cache_scheme\": {\"num_bits\": 8,"
                + " \"type\": \"float\", \"dynamic\": false}}}}");
        assertThat(nested.kvDtype(Dtype.BF16)).isEqualTo(Dtype.FP8);
        // vLLM reads it for ModelOpt checkpoints only, and an unstated one leaves timing.kv_dtype
        ModelSpec other = config("{" + shapes + ", \"quantization_config\": {\"quant_method\": \"fp8\","
                + " \"kv_cache_quant_algo\": \"FP8\"}}");
        assertThat(other.kvDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        ModelSpec unstated = config("{" + shapes + ", \"quantization_config\": {\"quant_method\": \"modelopt\","
                + " \"quant_algo\": \"FP8\", \"kv_cache_quant_algo\": null}}");
        assertThat(unstated.kvDtype(Dtype.FP8)).isEqualTo(Dtype.FP8);
        assertThat(unstated.kvDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        // 2 layers x 2 KV heads x 16 head dim x K and V: 128 elements per token, one byte each
        assertThat(fp8.kvBytesPerToken(fp8.kvBytes(Dtype.BF16), 1)).isEqualTo(128);
        assertThatThrownBy(() -> config("{" + shapes + ", \"quantization_config\": {\"quant_method\": \"modelopt\","
                        + " \"quant_algo\": \"NVFP4\", \"kv_cache_quant_algo\": \"NVFP4\"}}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("NVFP4 KV cache, which is not priced");
    }

    @Test
    void nvfp4_isAWeightOrExpertType_neverAKvCacheOne() {
        assertThat(TimingConfig.Dtype.NVFP4.bytes()).isEqualTo(0.5625); // 4 bits and an 8-bit scale per 16
        assertThat(ConfigLoader.fromYaml("", "t", List.of("timing.weight_dtype=nvfp4"))
                        .timing()
                        .weightBytes())
                .isEqualTo(0.5625);
        assertThat(ConfigLoader.fromYaml("", "t", List.of("timing.expert_dtype=nvfp4"))
                        .timing()
                        .expertDtype())
                .isEqualTo(TimingConfig.Dtype.NVFP4);
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.kv_dtype=nvfp4")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("timing.kv_dtype: expected bf16 or fp8, got nvfp4");
    }

    @Test
    void nvfp4Kernels_areTheMeasuredOnes_theMoeOfTheDeploymentsVllmVersion_andNoneWithoutFp4TensorCores() {
        // measured-kernels.yaml, the B200: nvfp4_tflops 4,241.5; nvfp4_streaming 2,632 GB/s at 8,192 x 8,192 and 4,238
        // at 8,192 x 65,536 (9/16 byte per weight), against the BF16 gbytes_per_s 6,701; nvfp4_moe 0.24 40.5 us +
        // 7,463 GB/s, 0.19 32.4 us + 7,278; moe_nvfp4_tflops 3,456.2
        GpuSpec.Nvfp4Kernels newest = Specs.nvfp4("b200", null);
        assertThat(newest.shapes().factor(8192, 8192)).isCloseTo(2632.0 / 6701, within(1e-9));
        assertThat(newest.shapes().factor(8192, 65536)).isCloseTo(4238.0 / 6701, within(1e-9));
        assertThat(newest.tflops()).isEqualTo(4241.5);
        assertThat(newest.moe().callUs()).isEqualTo(40.5);
        assertThat(newest.moeTflops()).isEqualTo(3456.2);
        GpuSpec.Nvfp4Kernels v019 = Specs.nvfp4("b200", VllmVersion.find("0.19.0"));
        assertThat(v019.moe().callUs()).isEqualTo(32.4);
        assertThat(v019.moe().gbytesPerS()).isEqualTo(7278);
        assertThat(Specs.nvfp4("b200", VllmVersion.find("0.13.0")).moe().callUs())
                .isEqualTo(32.4); // the oldest
        GpuSpec b200 = Specs.gpu("b200", "t");
        assertThat(b200.achievedFlopsPerSecond(TimingConfig.Dtype.NVFP4)).isEqualTo(4241.5e12);
        assertThat(b200.achievedMoeFlopsPerSecond(TimingConfig.Dtype.NVFP4)).isEqualTo(3456.2e12);
        assertThat(b200.moeKernel(TimingConfig.Dtype.NVFP4)).isEqualTo(newest.moe());
        assertThat(b200.measuredGemm(TimingConfig.Dtype.NVFP4)).isNull(); // the grid prices it, not a call fit
        // a deployment stating its version gets that version's fused MoE
        assertThat(Deployment.resolve(ConfigLoader.fromYaml(
                                "",
                                "t",
                                List.of(
                                        "timing.model=llama-3.1-8b",
                                        "timing.gpu=b200",
                                        "timing.vllm_version=\"0.19.0\"")))
                        .gpu()
                        .nvfp4()
                        .moe())
                .isEqualTo(v019.moe());
        // Hopper has no FP4 tensor cores: vLLM's Marlin runs NVFP4 weight-only, at the BF16 rates
        GpuSpec h100 = Specs.gpu("h100-sxm", "t");
        assertThat(h100.nvfp4()).isNull();
        assertThat(h100.achievedFlopsPerSecond(TimingConfig.Dtype.NVFP4))
                .isEqualTo(h100.achievedFlopsPerSecond(TimingConfig.Dtype.BF16));
        assertThat(h100.achievedMoeFlopsPerSecond(TimingConfig.Dtype.NVFP4))
                .isEqualTo(h100.achievedMoeFlopsPerSecond(TimingConfig.Dtype.BF16));
        assertThat(h100.moeKernel(TimingConfig.Dtype.NVFP4)).isNull();
    }

    @Test
    void anNvfp4ReleaseOfAModelWhoseOwnCheckpointIsFp8_replacesThatQuantization() {
        // MiniMax-M2.5's own checkpoint is block-scaled FP8; NVIDIA's NVFP4 release quantizes the experts and leaves
        // attention in BF16: stating NVFP4 experts serves the attention in the stated BF16, not the preset's FP8
        java.util.function.Function<List<String>, ModelSpec> served = sets -> {
            List<String> all = new java.util.ArrayList<>(
                    List.of("timing.model=minimax-m2.5", "timing.gpu=b200", "timing.tensor_parallel=4"));
            all.addAll(sets);
            return Deployment.resolve(ConfigLoader.fromYaml("", "t", all)).model();
        };
        ModelSpec own = served.apply(List.of());
        assertThat(own.weightDtype(Dtype.BF16)).isEqualTo(Dtype.FP8_BLOCK);
        ModelSpec fp4Experts = served.apply(List.of("timing.expert_dtype=nvfp4", "timing.weight_dtype=bf16"));
        assertThat(fp4Experts.weightDtype(Dtype.BF16)).isEqualTo(Dtype.BF16);
        assertThat(fp4Experts.expertDtype(Dtype.NVFP4, Dtype.BF16)).isEqualTo(Dtype.NVFP4);
        ModelSpec fp4All = served.apply(List.of("timing.weight_dtype=nvfp4"));
        assertThat(fp4All.weightDtype(Dtype.NVFP4)).isEqualTo(Dtype.NVFP4);
        assertThat(fp4All.expertDtype(null, Dtype.NVFP4)).isEqualTo(Dtype.NVFP4);
        // stating another type leaves the checkpoint's FP8 in place, as before
        assertThat(served.apply(List.of("timing.weight_dtype=bf16")).weightDtype(Dtype.BF16))
                .isEqualTo(Dtype.FP8_BLOCK);
    }

    @Test
    void nvfp4Weights_occupyNineSixteenthsOfAByteEach_theEmbeddingsStayBf16() {
        // Llama-3.1-70B on one B200: every linear layer but the embeddings at 9/16 byte per weight, the input
        // embedding and the untied LM head (2 x 128,256 x 8,192) at two bytes
        ModelSpec m = Specs.model("llama-3.1-70b", "t");
        SimConfig c = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=llama-3.1-70b", "timing.gpu=b200", "timing.weight_dtype=nvfp4"));
        double embeddings = 2.0 * 128256 * 8192;
        assertThat(Deployment.weightBytes(m, Specs.gpu("b200", "t"), c.timing(), 1, 1))
                .isEqualTo((m.totalParams() - embeddings) * 0.5625 + embeddings * 2);
    }

    @Test
    void mxfp4_isRefusedForAnythingButAMoeModelsExperts_namingTheKey() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.weight_dtype=mxfp4")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("timing.weight_dtype: expected bf16, fp8, fp8_block or nvfp4, got mxfp4")
                .hasMessageContaining("timing.expert_dtype");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.kv_dtype=mxfp4")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("timing.kv_dtype: expected bf16 or fp8, got mxfp4");
        SimConfig dense = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm", "timing.expert_dtype=mxfp4"));
        assertThatThrownBy(() -> Deployment.resolve(dense))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("timing.expert_dtype: model llama-3.1-8b has no experts");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.expert_dtype=fp4")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("timing.expert_dtype");
    }

    @Test
    void anFp8Checkpoint_isServedInItsOwnType_blockScaledWithAWeightBlockSize_perTensorWithout() {
        // MiniMax-M2.5's config.json: quant_method fp8 with weight_block_size [128, 128]; every layer MoE (256 experts
        // of 3,072 x 1,536, 8 per token), the projections' width 48 x 128 = 6,144 for a 3,072-wide model
        ModelSpec minimax = Specs.model("minimax-m2.5", "timing.model");
        assertThat(minimax.checkpointDtype()).isEqualTo(TimingConfig.Dtype.FP8_BLOCK);
        assertThat(minimax.weightDtype(TimingConfig.Dtype.BF16)).isEqualTo(TimingConfig.Dtype.FP8_BLOCK);
        assertThat(minimax.expertDtype(null, TimingConfig.Dtype.BF16)).isEqualTo(TimingConfig.Dtype.FP8_BLOCK);
        assertThat(minimax.expertDtype(TimingConfig.Dtype.BF16, TimingConfig.Dtype.BF16))
                .isEqualTo(TimingConfig.Dtype.BF16); // a stated expert type still wins
        assertThat(minimax.numExperts()).isEqualTo(256);
        assertThat(minimax.expertsPerToken()).isEqualTo(8);
        assertThat(minimax.expertIntermediateSize()).isEqualTo(1536);
        assertThat(minimax.qkNormAllReduce()).isTrue();
        assertThat(Specs.model("mixtral-8x7b", "t").qkNormAllReduce()).isFalse();
        // 62 x (attention 3,072 x (6,144 + 2 x 1,024) + 6,144 x 3,072, experts 256 x 3 x 3,072 x 1,536, router
        // 3,072 x 256) + two 200,064 x 3,072 embeddings: 228.7 B (published: 229 B)
        assertThat(minimax.totalParams())
                .isEqualTo(
                        62L * (3072 * 8192 + 6144 * 3072 + 256L * 3 * 3072 * 1536 + 3072 * 256) + 2L * 200064 * 3072);
        // per-tensor scales (no weight_block_size), e.g. a ModelOpt FP8 checkpoint; no quantization: the stated type
        ObjectNode c = (ObjectNode) JsonMapper.builder()
                .build()
                .readTree("{\"architectures\": [\"LlamaForCausalLM\"],"
                        + " \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": 128,"
                        + " \"vocab_size\": 1000, \"quantization_config\": {\"quant_method\": \"fp8\"}}");
        assertThat(Specs.fromHfConfig("c", c, "timing.model").weightDtype(TimingConfig.Dtype.BF16))
                .isEqualTo(TimingConfig.Dtype.FP8);
        c.remove("quantization_config");
        assertThat(Specs.fromHfConfig("c", c, "timing.model").weightDtype(TimingConfig.Dtype.FP8_BLOCK))
                .isEqualTo(TimingConfig.Dtype.FP8_BLOCK);
    }

    @Test
    void blockFp8Gemm_isTheFastestFitMeasuredUpToTheDeploymentsVersion() {
        // AIConfigurator's block-FP8 GEMM on the H200 (measured-kernels.yaml fp8_block_gemm): vLLM 0.14 25.9 us per
        // call + 2,328 GB/s, 0.18 66.2 + 4,148, 0.19 13.0 + 2,577, 0.22 48.9 + 4,148, 0.24 55.9 + 4,148
        assertThat(Specs.blockFp8Gemm("h200-sxm", VllmVersion.find("0.16.0")).callUs())
                .isEqualTo(25.9); // 0.14 only
        assertThat(Specs.blockFp8Gemm("h200-sxm", VllmVersion.find("0.18.0")).callUs())
                .isEqualTo(25.9); // 0.18's own fit is slower than 0.14's: 66.2 + 4 against 25.9 + 7.2 us at 4,096^2
        assertThat(Specs.blockFp8Gemm("h200-sxm", VllmVersion.find("0.19.0")).gbytesPerS())
                .isEqualTo(2577);
        assertThat(Specs.blockFp8Gemm("h200-sxm", VllmVersion.find("0.24.0")).callUs())
                .isEqualTo(13.0);
        assertThat(Specs.blockFp8Gemm("h200-sxm", null).callUs()).isEqualTo(13.0); // unstated: every version
        assertThat(Specs.blockFp8Gemm("h200-sxm", VllmVersion.find("0.10.0")).callUs())
                .isEqualTo(25.9); // the oldest
        assertThat(Specs.blockFp8Gemm("h200-sxm", null).tflops()).isEqualTo(1246.4); // fp8_block_tflops
        // the B200's DeepGEMM collections (0.22: 158.6 us, 0.24: 175.4) never beat 0.19's 11.7
        assertThat(Specs.blockFp8Gemm("b200", VllmVersion.find("0.24.0")).callUs())
                .isEqualTo(11.7);
        assertThat(Specs.blockFp8Gemm("a100-sxm-80gb", null)).isNull(); // no FP8 tensor cores: not measured
        assertThat(Specs.gpu("h200-sxm", "t").blockFp8Gemm().callUs()).isEqualTo(13.0); // the preset: unstated
        // SGLang and TensorRT-LLM run their own kernels (fp8_block_gemm_sglang / _trtllm), about 6 us per call in
        // every version: the fastest at 4,096 x 4,096 is SGLang 0.5.14's (5.9 + 16.8 MB at 3,661 GB/s) and
        // TensorRT-LLM 1.2.0rc5's (6.1 + 16.8 MB at 3,916 GB/s)
        assertThat(Specs.blockFp8Gemm("h200-sxm", EngineKind.SGLANG, VllmVersion.find("0.14.0"))
                        .callUs())
                .isEqualTo(5.9);
        assertThat(Specs.blockFp8Gemm("h200-sxm", EngineKind.TRTLLM, null).gbytesPerS())
                .isEqualTo(3916);
        assertThat(Specs.blockFp8Gemm("h200-sxm", EngineKind.VLLM, VllmVersion.find("0.16.0"))
                        .callUs())
                .isEqualTo(25.9);
        // a deployment gets its engine's: a TensorRT-LLM engine whatever timing.vllm_version says
        SimConfig trt = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "engine.kind=trtllm",
                        "timing.type=roofline",
                        "timing.model=qwen3-32b",
                        "timing.gpu=h200-sxm",
                        "timing.vllm_version=\"0.16.0\""));
        assertThat(Deployment.resolve(trt).gpu().blockFp8Gemm().callUs()).isEqualTo(6.1);
        SimConfig vllm = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "timing.type=roofline",
                        "timing.model=qwen3-32b",
                        "timing.gpu=h200-sxm",
                        "timing.vllm_version=\"0.16.0\""));
        assertThat(Deployment.resolve(vllm).gpu().blockFp8Gemm().callUs()).isEqualTo(25.9);
    }

    @Test
    void fusedMoeFp8_onBlackwellFromVllm015_isFlashInfersTrtllmKernel_whichTheFp8MoeOracleRunsThere() {
        // the B200's block-FP8 fits: 0.19 and 0.22 timed vLLM's Triton kernel directly (15.9 us + 4,448 GB/s, 18.2 us
        // + 4,290 GB/s), 0.24 the oracle's pick, FlashInfer's TRT-LLM kernel (38.2 us + 7,239 GB/s)
        GpuSpec.MoeKernel at019 =
                Specs.fusedMoe("b200", VllmVersion.find("0.19.0")).fp8();
        assertThat(at019.callUs()).isEqualTo(38.2);
        assertThat(at019.gbytesPerS()).isEqualTo(7239);
        assertThat(at019.backend()).isEqualTo(GpuSpec.MoeBackend.FLASHINFER_TRTLLM);
        assertThat(Specs.fusedMoe("b200", VllmVersion.find("0.15.0")).fp8().gbytesPerS())
                .isEqualTo(7239);
        // before the oracle (vLLM 0.14): the version rule, here the oldest fit (0.19's Triton kernel)
        GpuSpec.MoeKernel at014 =
                Specs.fusedMoe("b200", VllmVersion.find("0.14.0")).fp8();
        assertThat(at014.gbytesPerS()).isEqualTo(4448);
        assertThat(at014.backend()).isEqualTo(GpuSpec.MoeBackend.TRITON);
        // BF16 experts keep the version rule (0.19's Triton fit), and Hopper, whose oracle picks Triton, too
        assertThat(Specs.fusedMoe("b200", VllmVersion.find("0.19.0")).bf16().gbytesPerS())
                .isEqualTo(6619);
        assertThat(Specs.fusedMoe("h200-sxm", VllmVersion.find("0.19.0")).fp8().gbytesPerS())
                .isEqualTo(4022);
        // a deployment reaches it through its stated version
        SimConfig c = ConfigLoader.fromYaml(
                "workload:\n  seed: 1\n",
                "t",
                List.of(
                        "timing.type=roofline",
                        "timing.model=minimax-m2.5",
                        "timing.gpu=b200",
                        "timing.tensor_parallel=2",
                        "timing.vllm_version=\"0.19.0\""));
        assertThat(Deployment.resolve(c).gpu().fusedMoe().fp8().gbytesPerS()).isEqualTo(7239);
    }

    @Test
    void fusedMoe_isTheDeploymentsVllmVersions_perDtype_theNewestMeasuredNotNewer_elseTheOldest() {
        // AIConfigurator measured vLLM's BF16 fused MoE on the H200 for vLLM 0.14, 0.18, 0.19, 0.22 and 0.24, its
        // block-scaled FP8 one for the same versions (measured-kernels.yaml fused_moe)
        assertThat(Specs.fusedMoe("h200-sxm", null).bf16().callUs()).isEqualTo(38.5); // unstated: the newest
        assertThat(Specs.fusedMoe("h200-sxm", null).fp8().callUs()).isEqualTo(47.4);
        assertThat(Specs.fusedMoe("h200-sxm", VllmVersion.find("0.20.0")).bf16().callUs())
                .isEqualTo(39.3); // 0.19's
        assertThat(Specs.fusedMoe("h200-sxm", VllmVersion.find("0.20.0")).fp8().gbytesPerS())
                .isEqualTo(4022);
        assertThat(Specs.fusedMoe("h200-sxm", VllmVersion.find("0.10.0")).bf16().callUs())
                .isEqualTo(28.1); // the oldest, 0.14's
        // the RTX PRO 6000's FP8 kernel was measured for 0.19 only: every version gets it
        assertThat(Specs.fusedMoe("rtx-pro-6000", VllmVersion.find("0.24.0"))
                        .fp8()
                        .callUs())
                .isEqualTo(25.9);
        assertThat(Specs.fusedMoe("a100-sxm-80gb", null)).isNull(); // not measured
        assertThat(Specs.gpu("h100-sxm", "t")
                        .fusedMoe()
                        .forDtype(TimingConfig.Dtype.BF16)
                        .gbytesPerS())
                .isEqualTo(3005);
        GpuSpec h100 = Specs.gpu("h100-sxm", "t");
        assertThat(h100.moeKernel(TimingConfig.Dtype.MXFP4)).isEqualTo(h100.mxfp4Moe()); // MXFP4 has its own fit
        assertThat(h100.moeKernel(TimingConfig.Dtype.BF16))
                .isEqualTo(h100.fusedMoe().bf16());
        assertThat(Specs.gpu("h100-sxm", "t").fusedMoe().forDtype(TimingConfig.Dtype.MXFP4))
                .isNull();
        SimConfig c = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "timing.model=mixtral-8x7b",
                        "timing.gpu=h100-sxm",
                        "timing.tensor_parallel=2",
                        "timing.vllm_version=\"0.19.0\""));
        assertThat(Deployment.resolve(c).gpu().fusedMoe().bf16().callUs()).isEqualTo(28.8);
    }

    @Test
    void mxfp4Moe_isTheDeploymentsVllmVersions_theNewestMeasuredNotNewer_elseTheOldest() {
        // AIConfigurator measured vLLM's MXFP4 fused MoE on the H200 for vLLM 0.19 and 0.24 at two or more TP sizes
        // (and 0.18 at one, not fitted): 64.6 against 35.6 us per call
        assertThat(Specs.mxfp4Moe("h200-sxm", null).callUs()).isEqualTo(35.6); // unstated: the newest
        assertThat(Specs.mxfp4Moe("h200-sxm", VllmVersion.find("0.24.1")).callUs())
                .isEqualTo(35.6);
        assertThat(Specs.mxfp4Moe("h200-sxm", VllmVersion.find("0.22.0")).callUs())
                .isEqualTo(64.6);
        assertThat(Specs.mxfp4Moe("h200-sxm", VllmVersion.find("0.19.0")).gbytesPerS())
                .isEqualTo(2558);
        assertThat(Specs.mxfp4Moe("h200-sxm", VllmVersion.find("0.18.0")).callUs())
                .isEqualTo(64.6); // the oldest
        assertThat(Specs.gpu("h200-sxm", "t").mxfp4Moe().callUs()).isEqualTo(35.6);
        assertThat(Specs.mxfp4Moe("a100-sxm-80gb", null)).isNull(); // not measured
        // a deployment stating its version gets that version's kernel
        SimConfig c = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=gpt-oss-120b", "timing.gpu=h200-sxm", "timing.vllm_version=\"0.19.0\""));
        assertThat(Deployment.resolve(c).gpu().mxfp4Moe().callUs()).isEqualTo(64.6);
    }

    @Test
    void mxfp4Mxfp8_pricesMxfp4ExpertsWithTheMxfp8ActivationKernel_onTheBlackwellGpuThatMeasuredIt() {
        // VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8 on a B200: FlashInfer's MXFP4 x MXFP8 kernel (AIConfigurator, vLLM
        // 0.24: 48.1 us per call + 7,054 GB/s, 1,897.9 TFLOP/s) instead of its MXFP4 x BF16 one (27.1 us + 4,692 GB/s,
        // 541.6 TFLOP/s)
        List<String> b200 = List.of("timing.model=gpt-oss-120b", "timing.gpu=b200");
        GpuSpec bf16 = Deployment.resolve(ConfigLoader.fromYaml("", "t", b200)).gpu();
        assertThat(bf16.mxfp4Moe().callUs()).isEqualTo(27.1);
        assertThat(bf16.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.MXFP4))
                .isEqualTo(541.6e12);
        GpuSpec mxfp8 = Deployment.resolve(ConfigLoader.fromYaml("", "t", concat(b200, "timing.mxfp4_mxfp8=true")))
                .gpu();
        assertThat(mxfp8.mxfp4Moe().callUs()).isEqualTo(48.1);
        assertThat(mxfp8.mxfp4Moe().gbytesPerS()).isEqualTo(7054);
        assertThat(mxfp8.mxfp4Moe().backend()).isEqualTo(GpuSpec.MoeBackend.FLASHINFER_TRTLLM);
        assertThat(mxfp8.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.MXFP4))
                .isEqualTo(1897.9e12);
        // the other expert types keep their rates
        assertThat(mxfp8.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8))
                .isEqualTo(bf16.achievedMoeFlopsPerSecond(io.servesim.config.TimingConfig.Dtype.FP8));
        // vLLM reads the flag on Blackwell only: elsewhere it is refused, naming the key and the GPUs measured
        assertThat(Specs.mxfp4Mxfp8Gpus()).containsExactlyInAnyOrder("b200", "b300", "gb200", "gb300");
        assertThatThrownBy(() -> Deployment.resolve(ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of("timing.model=gpt-oss-120b", "timing.gpu=h100-sxm", "timing.mxfp4_mxfp8=true"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("timing.mxfp4_mxfp8")
                .hasMessageContaining("measured for b200");
    }

    private static List<String> concat(List<String> a, String b) {
        List<String> out = new java.util.ArrayList<>(a);
        out.add(b);
        return out;
    }
}
