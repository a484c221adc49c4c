package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.TraceFormat;
import java.nio.file.Path;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** {@code trace stats} reproduces the figures published in ../shared/traces/README.md for the shared traces. */
class TraceStatsTest {
    private static final Path SHARED = sharedTraces();

    /** ../shared/traces of the repository (found by walking up from the working directory). */
    static Path sharedTraces() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("shared").resolve("traces");
            if (java.nio.file.Files.isRegularFile(candidate.resolve("README.md"))) {
                return candidate;
            }
        }
        throw new AssertionError("shared/traces not found beside the repository (expected ../shared/traces)");
    }

    @Test
    void mooncakeConversation_has12031Rows_over59Minutes_with36Point6PercentBlockReuse() {
        TraceStats s =
                TraceStats.of(TraceFormat.MOONCAKE, SHARED.resolve("mooncake_conversation_trace.jsonl"), 512, 16);
        assertThat(s.rows()).isEqualTo(12_031);
        assertThat(s.lastTimestampNanos() - s.firstTimestampNanos()).isEqualTo(3_536_999L * 1_000_000L);
        assertThat(s.blocks()).isEqualTo(288_500);
        assertThat(s.prefixReuseRatio()).isCloseTo(0.366, Offset.offset(0.0005));
        assertThat(s.input().mean()).isCloseTo(12_035, Offset.offset(0.5));
        assertThat(s.output().max()).isEqualTo(2000);
        assertThat(s.blockSize()).isEqualTo(512);
    }

    @Test
    void mooncakeSynthetic_has64PercentBlockReuse() {
        TraceStats s = TraceStats.of(TraceFormat.MOONCAKE, SHARED.resolve("mooncake_synthetic_trace.jsonl"), 512, 16);
        assertThat(s.rows()).isEqualTo(3_993);
        assertThat(s.blocks()).isEqualTo(121_877);
        assertThat(s.prefixReuseRatio()).isCloseTo(0.640, Offset.offset(0.0005));
    }

    @Test
    void vllmBenchWorkload_reuses1220Of15942FullBlocksAt16Tokens() {
        TraceStats s = TraceStats.of(
                TraceFormat.VLLM_BENCH,
                SHARED.resolve("llmservingsim_vllm_validation/workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl"),
                512,
                16);
        assertThat(s.rows()).isEqualTo(300);
        assertThat(s.blocks()).isEqualTo(15_942);
        assertThat(s.reusedBlocks()).isEqualTo(1_220);
    }

    @Test
    void azureCode_has8819Rows_andNoPrefixReuse() {
        TraceStats s = TraceStats.of(TraceFormat.AZURE, SHARED.resolve("azure_llm_2023_code.csv"), 512, 16);
        assertThat(s.rows()).isEqualTo(8_819);
        assertThat(s.spanSeconds()).isCloseTo(3_435.9, Offset.offset(0.05));
        assertThat(s.reusedBlocks()).isZero();
        assertThat(s.input().max()).isEqualTo(7_437);
    }

    @Test
    void sessionRows_areCountedPerSession() {
        TraceStats s =
                TraceStats.of(TraceFormat.MOONCAKE, Path.of("src/test/resources/traces/sessions.jsonl"), 512, 16);
        assertThat(s.sessions()).isEqualTo(2);
        assertThat(s.sessionRows()).isEqualTo(3);
        // blocks [1,2], [3], [1,2,4]: the third row's leading 2 blocks were seen
        assertThat(s.blocks()).isEqualTo(6);
        assertThat(s.reusedBlocks()).isEqualTo(2);
    }
}
