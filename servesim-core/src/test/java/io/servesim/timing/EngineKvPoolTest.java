package io.servesim.timing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.EngineKind;
import io.servesim.engine.SchedulerSettings;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The KV pool each engine derives from a named model and GPU (docs/timing.md, "KV capacity"): vLLM's rule is in
 * {@code SpecsTest}; here SGLang's ({@code mem_fraction_static}, its defaults by GPU memory) and TensorRT-LLM's
 * ({@code free_gpu_memory_fraction}), each number computed by hand from the engine's formula.
 */
class EngineKvPoolTest {
    private static final double GIB = 1L << 30;
    /** Llama-3.1-8B: parameters, BF16 bytes per weight. */
    private static final double LLAMA8B_WEIGHTS = 8_029_995_008.0 * 2;
    /** Llama-3.1-8B's KV bytes per token: 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes. */
    private static final double LLAMA8B_KV_PER_TOKEN = 131_072;

    private static Deployment resolve(String engine, String gpu, String... more) {
        List<String> sets = new ArrayList<>(List.of(
                "timing.model=llama-3.1-8b",
                "timing.gpu=" + gpu,
                "engine.kind=" + engine,
                "engine.kv_cache.block_size=16"));
        sets.addAll(List.of(more));
        return Deployment.resolve(ConfigLoader.fromYaml("", "t", sets));
    }

    @Test
    void sglangPool_isMemFractionStaticTimesMemoryLessTheWeights_h100() {
        Deployment d = resolve("sglang", "h100-sxm");
        // SGLang's heuristic in MiB: 79.19 GiB = 81,090.56 MiB, in the 60-90 GB class: chunked_prefill_size 8,192 and
        // cuda_graph_max_bs 256 (TP 1); reserved = 512 + 8,192 × 1.5 + 256 × 2 + 1 / 8 × 1,024 = 13,440 (above the
        // 10,240 floor), so mem_fraction_static = round((81,090.56 − 13,440) / 81,090.56, 3) = 0.834
        double mib = 79.19 * 1024;
        assertThat(Math.round((mib - 13_440) / mib * 1000) / 1000.0).isEqualTo(0.834);
        double available = 0.834 * 79.19 * GIB - LLAMA8B_WEIGHTS; // rest = mem_fraction_static × memory − weights
        int blocks = (int) Math.floor(available / (16 * LLAMA8B_KV_PER_TOKEN));
        assertThat(d.numGpuBlocks()).isEqualTo(blocks); // 26,156 blocks of 16: about 418,000 tokens
        assertThat(d.capacity().engine()).isEqualTo(EngineKind.SGLANG);
        assertThat(d.capacity().fraction()).isEqualTo(0.834);
        assertThat(d.capacity().activationGib()).isCloseTo(0.166 * 79.19, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(d.capacity().nonTorchGib()).isZero();
        assertThat(d.sglang().chunkedPrefillSize()).isEqualTo(8192);
        // fewer blocks than vLLM's 0.9 × memory − weights − activation − 1 GiB on the same GPU
        assertThat(blocks).isLessThan(resolve("vllm", "h100-sxm").numGpuBlocks());
    }

    @Test
    void sglangChunkedPrefillSize_defaultsByTheGpusMemory_andAStatedOneIsKept() {
        assertThat(resolve("sglang", "rtx-4090").sglang().chunkedPrefillSize()).isEqualTo(2048); // below 35 GB
        assertThat(resolve("sglang", "l40s").sglang().chunkedPrefillSize()).isEqualTo(4096); // below 60 GB
        assertThat(resolve("sglang", "h100-sxm").sglang().chunkedPrefillSize()).isEqualTo(8192); // below 90 GB
        assertThat(resolve("sglang", "h200-sxm").sglang().chunkedPrefillSize()).isEqualTo(8192); // below 160 GB
        assertThat(resolve("sglang", "b200").sglang().chunkedPrefillSize()).isEqualTo(16384); // from 160 GB
        assertThat(resolve("sglang", "h100-sxm", "engine.sglang.chunked_prefill_size=4096")
                        .sglang()
                        .chunkedPrefillSize())
                .isEqualTo(4096);
        assertThat(resolve("sglang", "h100-sxm", "engine.sglang.chunked_prefill_size=0")
                        .sglang()
                        .chunkedPrefillSize())
                .isZero();
        // without a GPU (no derived pool), the H100's
        assertThat(Deployment.resolve(ConfigLoader.fromYaml("", "t", List.of("engine.kind=sglang")))
                        .sglang()
                        .chunkedPrefillSize())
                .isEqualTo(8192);
        assertThat(resolve("vllm", "h100-sxm").sglang()).isNull();
    }

    @Test
    void sglangMemFractionStatic_growsItsReserveWithTheChunk_theGroupAndAttentionDp() {
        // B200 (178.4 GiB = 182,681.6 MiB, from 160 GB): chunk 16,384, cuda_graph_max_bs 512;
        // reserved = 512 + 24,576 + 1,024 + 128 = 26,240 → round((182,681.6 − 26,240) / 182,681.6, 3) = 0.856
        assertThat(resolve("sglang", "b200").capacity().fraction()).isEqualTo(0.856);
        // L40S (44.52 GiB = 45,588.48 MiB, below 60 GB: no 10,240 floor): chunk 4,096, cuda_graph_max_bs 32;
        // reserved = 512 + 6,144 + 64 + 128 = 6,848 → round(38,740.48 / 45,588.48, 3) = 0.850
        assertThat(resolve("sglang", "l40s").capacity().fraction()).isEqualTo(0.85);
        // H100, TP 8: cuda_graph_max_bs 512; reserved = 512 + 12,288 + 1,024 + 8 / 8 × 1,024 = 14,848 → 0.817
        assertThat(resolve("sglang", "h100-sxm", "timing.model=llama-3.1-70b", "timing.tensor_parallel=8")
                        .capacity()
                        .fraction())
                .isEqualTo(0.817);
        // H100, TP 1 × attention DP 4 (SGLang's tp_size 4, dp 4): cuda_graph_max_bs 512; reserved = 512 + 12,288 +
        // 1,024 + 512 + 512 × 4 × 3 + 512 × 4 × 1.5 (above 300) = 23,552 → round(57,538.56 / 81,090.56, 3) = 0.710
        assertThat(resolve("sglang", "h100-sxm", "cluster.attention_dp=4")
                        .capacity()
                        .fraction())
                .isEqualTo(0.71);
        // chunking off: max_prefill_tokens (16,384) sizes the activation reserve: 512 + 24,576 + 512 + 128 = 25,728
        double mib = 79.19 * 1024;
        assertThat(resolve("sglang", "h100-sxm", "engine.sglang.chunked_prefill_size=0")
                        .capacity()
                        .fraction())
                .isEqualTo(Math.round((mib - 25_728) / mib * 1000) / 1000.0);
    }

    @Test
    void sglangMemFractionStatic_statedReplacesTheHeuristic_andMustBeAShare() {
        Deployment d = resolve("sglang", "h100-sxm", "engine.sglang.mem_fraction_static=0.88");
        double available = 0.88 * 79.19 * GIB - LLAMA8B_WEIGHTS;
        assertThat(d.numGpuBlocks()).isEqualTo((int) Math.floor(available / (16 * LLAMA8B_KV_PER_TOKEN)));
        assertThatThrownBy(() -> resolve("sglang", "h100-sxm", "engine.sglang.mem_fraction_static=1.2"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.sglang.mem_fraction_static")
                .hasMessageContaining("(0, 1)");
        // too small a share for the weights: the deployment does not fit, as SGLang refuses to start
        assertThatThrownBy(() -> resolve("sglang", "h100-sxm", "engine.sglang.mem_fraction_static=0.1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("does not fit");
    }

    @Test
    void sglangMaxRunningRequests_isHalfThePoolsTokens_atMostTheRequestPool_aStatedOneSplitOverAttentionDp() {
        // request pool = clamp(tokens / context_len × 512, 2,048, 4,096); max_running = min(tokens // 2, it)
        assertThat(SchedulerSettings.sglangMaxRunning(null, 400_000, 131_072, 1))
                .isEqualTo(2048); // 1,562 → 2,048
        assertThat(SchedulerSettings.sglangMaxRunning(null, 400_000, 32_768, 1)).isEqualTo(4096); // 6,250 → 4,096
        assertThat(SchedulerSettings.sglangMaxRunning(null, 400_000, 40_000, 1)).isEqualTo(4096); // 5,120 → 4,096
        assertThat(SchedulerSettings.sglangMaxRunning(null, 500_000, 100_000, 1))
                .isEqualTo(2560); // 2,560
        assertThat(SchedulerSettings.sglangMaxRunning(null, 3_000, 4096, 1)).isEqualTo(1500); // half the pool
        assertThat(SchedulerSettings.sglangMaxRunning(7, 400_000, 131_072, 1)).isEqualTo(7); // stated
        // with attention DP a stated limit is the instance's: max_running_requests // dp_size per DP rank
        assertThat(SchedulerSettings.sglangMaxRunning(256, 400_000, 131_072, 8)).isEqualTo(32);
        assertThat(SchedulerSettings.sglangMaxRunning(7, 400_000, 131_072, 8)).isEqualTo(1); // at least one
        // derived, it is per rank already (each DP rank's own pool)
        assertThat(SchedulerSettings.sglangMaxRunning(null, 400_000, 131_072, 8))
                .isEqualTo(2048);
    }

    @Test
    void trtllmPool_isTheFreeFractionOfWhatWeightsActivationsAndNonTorchMemoryLeave() {
        Deployment d = resolve("trtllm", "h100-sxm");
        // the estimation run: one dummy prompt of max_num_tokens 8,192 tokens (the model's context is longer), so the
        // forward's activations (8,192 × (2 × 14,336 + 4 × 4,096) × 2 bytes) outweigh one request's sampler logits
        double activation = 8192.0 * (2 * 14336 + 4 * 4096) * 2;
        assertThat(activation).isGreaterThan(128_256.0 * 4 * 2);
        double available = 0.9 * (79.19 * GIB - LLAMA8B_WEIGHTS - activation - 1.0 * GIB);
        assertThat(d.numGpuBlocks()).isEqualTo((int) Math.floor(available / (16 * LLAMA8B_KV_PER_TOKEN)));
        assertThat(d.capacity().engine()).isEqualTo(EngineKind.TRTLLM);
        assertThat(d.capacity().fraction()).isEqualTo(0.9);
        Deployment half = resolve("trtllm", "h100-sxm", "engine.trtllm.free_gpu_memory_fraction=0.5");
        double halfAvailable = 0.5 * (79.19 * GIB - LLAMA8B_WEIGHTS - activation - 1.0 * GIB);
        assertThat(half.numGpuBlocks()).isEqualTo((int) Math.floor(halfAvailable / (16 * LLAMA8B_KV_PER_TOKEN)));
        assertThatThrownBy(() -> resolve("trtllm", "h100-sxm", "engine.trtllm.free_gpu_memory_fraction=0"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.trtllm.free_gpu_memory_fraction");
    }

    @Test
    void aConfiguredPool_overridesEveryEnginesRule() {
        for (String engine : List.of("vllm", "sglang", "trtllm")) {
            Deployment d = resolve(engine, "h100-sxm", "engine.kv_cache.num_gpu_blocks=1000");
            assertThat(d.numGpuBlocks()).isEqualTo(1000);
            assertThat(d.capacity()).isNull();
        }
    }
}
