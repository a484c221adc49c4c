package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.api.Servesim;
import io.servesim.config.SimConfig;
import org.junit.jupiter.api.Test;
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
}
