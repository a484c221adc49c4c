package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.api.Servesim;
import io.servesim.config.SimConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** summary.json's {@code deployment} says which scheduler limits the run used, the GPU's defaults included. */
class SummaryDeploymentTest {
    private static JsonNode deployment(String gpu, String kind) {
        SimConfig c = Servesim.config()
                .set("workload.synthetic.requests", 20)
                .set("timing.type", "roofline")
                .set("timing.model", "llama-3.1-8b")
                .set("timing.gpu", gpu)
                .set("engine.kind", kind)
                .build();
        return ReportWriter.summaryTree(Servesim.run(c).summary()).get("deployment");
    }

    /** vLLM's limits when none are stated: 256 / 2048 on an A100, 1024 / 8192 on an H100 (get_batch_defaults). */
    @Test
    void vllmLimitsInEffect_areReported_withTheGpusDefaults() {
        JsonNode a100 = deployment("a100-sxm-80gb", "vllm");
        assertThat(a100.get("max_num_seqs").asInt()).isEqualTo(256);
        assertThat(a100.get("max_num_batched_tokens").asInt()).isEqualTo(2048);
        JsonNode h100 = deployment("h100-sxm", "vllm");
        assertThat(h100.get("max_num_seqs").asInt()).isEqualTo(1024);
        assertThat(h100.get("max_num_batched_tokens").asInt()).isEqualTo(8192);
    }

    /** SGLang and TensorRT-LLM do not read vLLM's scheduler keys, so their summaries do not show them. */
    @Test
    void otherEngines_reportNoVllmLimits() {
        assertThat(deployment("h100-sxm", "sglang").has("max_num_seqs")).isFalse();
        assertThat(deployment("h100-sxm", "trtllm").has("max_num_batched_tokens"))
                .isFalse();
    }

    /**
     * A ModelOpt NVFP4 checkpoint that calibrated FP8 KV scales is served with NVFP4 weights and an FP8 KV cache (vLLM's
     * kv_cache_dtype auto takes its kv_cache_quant_algo), whatever timing.weight_dtype and timing.kv_dtype say, and the
     * summary says so: Llama-3.1-8B's 32 layers x 8 KV heads x 128 x K and V at one byte, 65,536 bytes per token.
     */
    @Test
    void aCheckpointsOwnWeightAndKvTypes_areReported(@TempDir Path dir) throws IOException {
        Path config = dir.resolve("config.json");
        Files.writeString(config, """
                {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                 "vocab_size": 128256, "max_position_embeddings": 131072,
                 "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4",
                   "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}
                """);
        SimConfig c = Servesim.config()
                .set("workload.synthetic.requests", 20)
                .set("timing.type", "roofline")
                .set("timing.model", config.toString())
                .set("timing.gpu", "b200")
                .build();
        JsonNode d = ReportWriter.summaryTree(Servesim.run(c).summary()).get("deployment");
        assertThat(d.get("weight_dtype").asString()).isEqualTo("nvfp4");
        assertThat(d.get("kv_dtype").asString()).isEqualTo("fp8");
        assertThat(d.get("bytes_per_token").asLong()).isEqualTo(65536);
    }
}
