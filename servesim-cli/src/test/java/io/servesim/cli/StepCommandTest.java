package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code servesim step}: a deployment's steps priced by term, without a simulation. */
class StepCommandTest {
    @TempDir
    Path tmp;

    private Path config(String yaml) throws IOException {
        Path p = tmp.resolve("c.yaml");
        Files.writeString(p, "workload:\n  seed: 1\n" + yaml);
        return p;
    }

    @Test
    void fixedTiming_synchronousLoop_periodIsGpuPlusCpu_andTokensPerSecondFollowIt() throws IOException {
        // a decode step of 8: 4 ms + 8 x 0.5 ms on the GPU, 1 ms of CPU before it: 9 ms, 8 tokens -> 888.9 tokens/s
        Path c = config("""
                engine:
                  scheduler:
                    async_scheduling: false
                timing:
                  type: fixed
                  fixed:
                    decode_ms: 4
                    decode_per_token_ms: 0.5
                    cpu_ms: 1
                """);
        CliRun r = CliRun.of("step", c.toString(), "--batch", "8");
        assertThat(r.exit()).isEqualTo(Main.OK);
        assertThat(r.out())
                .contains("fixed timing, vllm engine, synchronous (CPU then GPU) loop")
                .containsPattern("decode 8 +8\\.000 +1\\.000 +9\\.000 +889 *\\R");
    }

    @Test
    void asyncLoop_periodIsTheLargerPart_andARooflineStepIsSplitByTerm() throws IOException {
        Path fixed = config("timing:\n  type: fixed\n  fixed:\n    decode_ms: 4\n    cpu_ms: 1\n");
        assertThat(CliRun.of("step", fixed.toString(), "--batch", "2").out())
                .containsPattern("decode 2 +4\\.000 +1\\.000 +4\\.000 +500 *\\R");
        Path roofline =
                config("timing:\n  type: roofline\n  model: mixtral-8x7b\n  gpu: h100-sxm\n  tensor_parallel: 2\n");
        CliRun r = CliRun.of("step", roofline.toString(), "--batch", "1,16", "--context", "512", "--prefill", "2048");
        assertThat(r.exit()).isEqualTo(Main.OK);
        assertThat(r.out())
                .contains("mixtral-8x7b on 2 x h100-sxm (TP 2), weights bf16")
                .contains("decodes hold 512 tokens each")
                .contains("dense_ms  experts_ms  attention_ms  collectives_ms  fixed_ms  gpu_ms  cpu_ms  period_ms")
                .containsPattern("\\Rdecode 1 ")
                .containsPattern("\\Rdecode 16 ")
                .containsPattern("\\Rprefill 2048 ");
    }

    @Test
    void optionsOutsideTheDeployment_areUsageErrors() throws IOException {
        Path c = config("engine:\n  max_model_len: 4096\ntiming:\n  type: fixed\n");
        CliRun ctx = CliRun.of("step", c.toString(), "--context", "4096");
        assertThat(ctx.exit()).isEqualTo(Main.USAGE);
        assertThat(ctx.err()).contains("--context must be between 0 and max_model_len - 1 = 4095, got 4096");
        CliRun batch = CliRun.of("step", c.toString(), "--batch", "0");
        assertThat(batch.exit()).isEqualTo(Main.USAGE);
        assertThat(batch.err()).contains("--batch sizes must be between 1 and 1048576");
        CliRun pool = CliRun.of("step", c.toString(), "--pool", "1");
        assertThat(pool.exit()).isEqualTo(Main.USAGE);
        assertThat(pool.err()).contains("the config has no cluster.pools");
        CliRun badKey = CliRun.of("step", c.toString(), "--set", "timing.fixed.decode_msx=1");
        assertThat(badKey.exit()).isEqualTo(Main.USAGE);
        assertThat(badKey.err()).contains("config error").contains("decode_msx");
    }

    @Test
    void overKvPoolOrMaxNumSeqs_isNotedOnTheRow() throws IOException {
        Path c = config("""
                engine:
                  max_model_len: 4096
                  scheduler:
                    max_num_seqs: 4
                  kv_cache:
                    num_gpu_blocks: 257
                    block_size: 16
                timing:
                  type: fixed
                """);
        // 8 x 1,025 tokens > 256 usable blocks x 16 = 4,096
        assertThat(CliRun.of("step", c.toString(), "--batch", "2,8", "--context", "1024")
                        .out())
                .containsPattern("decode 8 .*over the KV pool; over max_num_seqs 4")
                .doesNotContainPattern("decode 2 .*over");
    }

    @Test
    void aDisaggregatedCluster_pricesThePoolItNames() {
        Path pd = Path.of("..", "examples", "pd-disagg.yaml");
        CliRun prefill = CliRun.of("step", pd.toString(), "--batch", "8");
        assertThat(prefill.exit()).isEqualTo(Main.OK);
        assertThat(prefill.out()).startsWith("servesim step: pool 0 of 2, 'prefill', prefill (--pool picks another): ");
        assertThat(CliRun.of("step", pd.toString(), "--batch", "8", "--pool", "1")
                        .out())
                .startsWith("servesim step: pool 1 of 2, 'decode', decode (--pool picks another): ");
        CliRun bad = CliRun.of("step", pd.toString(), "--pool", "2");
        assertThat(bad.exit()).isEqualTo(Main.USAGE);
        assertThat(bad.err()).contains("--pool must be between 0 and 1, got 2");
    }

    @Test
    void polynomialTiming_readsTheKvUseOfTheRanksUsablePool() throws IOException {
        // 256 usable blocks x 16 = 4,096 tokens; two decodes holding 1,023 tokens each use 2 x 1,024 of them: u = 0.5,
        // so the decode term is 1 + 10 x 0.5 = 6 ms (no CPU part), 2 tokens per 6 ms
        Path c = config("""
                engine:
                  max_model_len: 2048
                  kv_cache:
                    num_gpu_blocks: 257
                    block_size: 16
                timing:
                  type: polynomial
                  polynomial:
                    decode_d2: 0
                    decode_d1: 10
                    decode_d0: 1
                """);
        assertThat(CliRun.of("step", c.toString(), "--batch", "2", "--context", "1023")
                        .out())
                .containsPattern("decode 2 +6\\.000 +0\\.000 +6\\.000 +333 *\\R");
    }
}
