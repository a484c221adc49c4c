package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestStatus;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code workload.max_tokens_sent}: a client that sends its output length as {@code max_tokens} meets vLLM's API
 * server check (its renderer: the prompt may hold at most {@code max_model_len - max_tokens} tokens), so a request whose
 * prompt and output exceed {@code max_model_len} is refused at once instead of being served up to the limit.
 *
 * <p>By hand: {@code max_model_len} 120, constant 10 ms steps; request 0 has 100 prompt and 30 output tokens (130 &gt;
 * 120), request 1 has 100 and 20 (exactly 120: allowed), both at 0.
 */
class MaxTokensSentTest {
    private static final long MS = 1_000_000;

    private static final String ROWS = """
            {"arrival_ms": 0, "input_length": 100, "output_length": 30}
            {"arrival_ms": 0, "input_length": 100, "output_length": 20}
            """;

    private static List<String> sets() {
        List<String> sets = FixedStepTraces.sets(ROWS);
        sets.addAll(List.of("engine.scheduler.max_num_seqs=4", "engine.max_model_len=120"));
        return sets;
    }

    private static RunResult run(boolean sent) {
        List<String> sets = sets();
        if (sent) {
            sets.add("workload.max_tokens_sent=true");
        }
        return CheckedRuns.run(ConfigLoader.fromYaml("", "t", sets));
    }

    private static int row(RequestLog log, int id) {
        return FixedStepTraces.row(log, id);
    }

    @Test
    void maxTokensSent_refusesAPromptPlusMaxTokensAboveMaxModelLen_atArrival() {
        RequestLog log = run(true).log();
        assertThat(log.status(row(log, 0))).isEqualTo(RequestStatus.REJECTED_PROMPT_TOO_LONG);
        assertThat(log.firstScheduledNanos(row(log, 0))).isEqualTo(-1);
        // request 1 fits exactly and runs alone: its prefill 0-10, then 19 decodes to 200 ms
        assertThat(log.status(row(log, 1))).isEqualTo(RequestStatus.COMPLETED);
        assertThat(log.firstTokenNanos(row(log, 1))).isEqualTo(10 * MS);
        assertThat(log.lastTokenNanos(row(log, 1))).isEqualTo(200 * MS);
    }

    @Test
    void disaggregated_thePrefillSideIsSentOneToken_andTheDecodeSideRefusesWhatCannotFit() {
        // vLLM's P/D proxy sends the prompt with max_tokens 1 to the prefill worker, which runs it; the decode worker
        // then gets the client's max_tokens and refuses request 0 (100 + 30 > 120), and the prefill worker's blocks
        // for it are held until their lease runs out (CheckedRuns: none is left held at the end)
        List<String> sets = sets();
        sets.addAll(List.of(
                "workload.max_tokens_sent=true",
                "cluster.mode=disaggregated",
                "cluster.prefill={workers: 1}",
                "cluster.decode={workers: 1}"));
        RequestLog log = CheckedRuns.run(ConfigLoader.fromYaml("", "t", sets)).log();
        int a = row(log, 0);
        assertThat(log.status(a)).isEqualTo(RequestStatus.REJECTED_PROMPT_TOO_LONG);
        assertThat(log.firstScheduledNanos(a)).isZero(); // its prompt ran on the prefill worker
        assertThat(log.worker(a)).isEqualTo(1); // the decode worker refused it
        assertThat(log.status(row(log, 1))).isEqualTo(RequestStatus.COMPLETED);
    }

    @Test
    void withoutIt_theEngineServesTheLongerRequestUntilItReachesMaxModelLen() {
        RequestLog log = run(false).log();
        // request 0 runs beside request 1 and stops at 120 tokens: 20 of its 30 output tokens
        assertThat(log.status(row(log, 0))).isEqualTo(RequestStatus.LENGTH_CAPPED);
        assertThat(log.outputTokens(row(log, 0))).isEqualTo(20);
        assertThat(log.status(row(log, 1))).isEqualTo(RequestStatus.COMPLETED);
        assertThat(log.lastTokenNanos(row(log, 1))).isEqualTo(200 * MS);
    }
}
