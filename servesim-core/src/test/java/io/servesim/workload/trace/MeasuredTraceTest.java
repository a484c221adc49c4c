package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.TraceConfig;
import io.servesim.config.TraceFormat;
import io.servesim.sim.EventQueue;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code measured} trace format (a run folder's workload.jsonl) and {@code workload.trace.shared_prefix}, the
 * approximate shared system prompt of rows that carry only lengths.
 */
class MeasuredTraceTest {
    private static final String CORPUS = "src/test/resources/corpus/";

    @TempDir
    Path tmp;

    private static List<TraceRecord> read(Path file) {
        List<TraceRecord> rows = new ArrayList<>();
        try (TraceReader reader = TraceFormats.open(TraceFormat.MEASURED, file, 512)) {
            for (TraceRecord r = reader.next(); r != null; r = reader.next()) {
                rows.add(r);
            }
        }
        return rows;
    }

    private Path write(String name, String content) throws IOException {
        Path p = tmp.resolve(name);
        Files.writeString(p, content);
        return p;
    }

    @Test
    void rows_giveArrivalInSeconds_lengths_andTokenIdsWhenPresent_ignoringOtherFields() throws IOException {
        Path f = write("workload.jsonl", """
                {"request_id": "a", "arrival_s": 0.0, "input_tokens": 3, "output_tokens": 2, "output_tokens_client_count": 9}
                {"request_id": "b", "arrival_s": 1.25, "input_tokens": 2, "output_tokens": 1, "prompt_token_ids": [7, 8]}

                {"arrival_s": 2, "input_tokens": 5, "output_tokens": 4, "anything": {"else": true}}
                """);
        List<TraceRecord> rows = read(f);
        assertThat(rows).hasSize(3);
        assertThat(rows.get(0).timestampNanos()).isZero();
        assertThat(rows.get(0).inputLength()).isEqualTo(3);
        assertThat(rows.get(0).outputLength()).isEqualTo(2);
        assertThat(rows.get(0).inputTokenIds()).isNull();
        assertThat(rows.get(1).timestampNanos()).isEqualTo(1_250_000_000L);
        assertThat(rows.get(1).inputTokenIds()).containsExactly(7, 8);
        assertThat(rows.get(2).timestampNanos()).isEqualTo(2_000_000_000L);
        assertThat(rows.get(2).location()).isEqualTo("workload.jsonl:4"); // blank lines keep their numbers
        assertThat(rows).allSatisfy(r -> {
            assertThat(r.sessionId()).isNull();
            assertThat(r.hashIds()).isNull();
        });
    }

    @Test
    void theCommittedRunFolders_read_withTokenIdsOnlyWhereTheSourceHasThem() {
        List<TraceRecord> sharegpt = read(Path.of(CORPUS + "llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1/workload.jsonl"));
        assertThat(sharegpt)
                .hasSize(60)
                .allSatisfy(r -> assertThat(r.inputTokenIds()).hasSize(r.inputLength()));
        List<TraceRecord> blis = read(Path.of(CORPUS + "blis_H100_Llama-2-7b_tp1_codegen/workload.jsonl"));
        assertThat(blis).hasSize(120).allSatisfy(r -> {
            assertThat(r.inputTokenIds()).isNull();
            assertThat(r.outputLength()).isEqualTo(247); // the profile's output_len, not the client's re-count
        });
    }

    @Test
    void badRows_failWithFileLineAndField() throws IOException {
        record Bad(String row, String message) {}
        List<Bad> cases = List.of(
                new Bad("{\"input_tokens\": 3, \"output_tokens\": 2}", "bad.jsonl:1: arrival_s: is required"),
                new Bad(
                        "{\"arrival_s\": -1, \"input_tokens\": 3, \"output_tokens\": 2}",
                        "bad.jsonl:1: arrival_s: expected a non-negative time, got -1"),
                new Bad(
                        "{\"arrival_s\": \"soon\", \"input_tokens\": 3, \"output_tokens\": 2}",
                        "bad.jsonl:1: arrival_s: expected a number, got \"soon\""),
                new Bad("{\"arrival_s\": 0, \"output_tokens\": 2}", "bad.jsonl:1: input_tokens: is required"),
                new Bad(
                        "{\"arrival_s\": 0, \"input_tokens\": 0, \"output_tokens\": 2}",
                        "bad.jsonl:1: input_tokens: expected a positive integer, got 0"),
                new Bad(
                        "{\"arrival_s\": 0, \"input_tokens\": 3, \"output_tokens\": 1.5}",
                        "bad.jsonl:1: output_tokens: expected a positive integer, got 1.5"),
                new Bad(
                        "{\"arrival_s\": 0, \"input_tokens\": 3, \"output_tokens\": 2, \"prompt_token_ids\": [1, 2]}",
                        "bad.jsonl:1: prompt_token_ids: has 2 ids but input_tokens is 3"),
                new Bad(
                        "{\"arrival_s\": 0, \"input_tokens\": 2, \"output_tokens\": 2, \"prompt_token_ids\": [1, -2]}",
                        "bad.jsonl:1: prompt_token_ids[1]: expected a token id >= 0, got -2"),
                new Bad("[1, 2]", "bad.jsonl:1: expected a JSON object per line"));
        for (Bad c : cases) {
            Path f = write("bad.jsonl", c.row() + "\n");
            assertThatThrownBy(() -> read(f))
                    .as(c.row())
                    .isInstanceOf(TraceFormatException.class)
                    .hasMessage(c.message());
        }
        Path later = write("bad.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 3, \"output_tokens\": 2}\n{}\n");
        assertThatThrownBy(() -> read(later)).hasMessageStartingWith("bad.jsonl:2: arrival_s: ");
    }

    // ---- shared_prefix ----------------------------------------------------------------------------------------

    /** The prompts a trace replay releases, in request-id order. */
    private static List<int[]> prompts(Path trace, String... sets) {
        List<String> all = new ArrayList<>(
                List.of("workload.type=trace", "workload.trace.format=measured", "workload.trace.path=" + trace));
        all.addAll(List.of(sets));
        TraceConfig config = ConfigLoader.fromYaml("", "t", all).workload().trace();
        TraceWorkload w = new TraceWorkload(config, trace, new RandomStreams(42));
        List<Request> released = new ArrayList<>();
        EventQueue queue = new EventQueue();
        w.start(queue, released::add);
        while (queue.runNext()) {
            // releases every row at its arrival time
        }
        return released.stream().map(Request::promptTokens).toList();
    }

    private Path lengthsOnly() throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            sb.append("{\"arrival_s\": ")
                    .append(i)
                    .append(", \"input_tokens\": ")
                    .append(i == 4 ? 5 : 40);
            sb.append(", \"output_tokens\": 3}\n");
        }
        sb.append("{\"arrival_s\": 6, \"input_tokens\": 12, \"output_tokens\": 3, \"prompt_token_ids\": ");
        sb.append("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}\n");
        return write("w.jsonl", sb.toString());
    }

    @Test
    void sharedPrefix_sameGroupSharesItsFirstTokens_groupsDiffer_andTheRestIsUnique() throws IOException {
        List<int[]> p = prompts(lengthsOnly(), "workload.trace.shared_prefix={tokens: 10, groups: 2}");
        // request i is in group i mod 2: 0, 2, 4 in group 0; 1, 3, 5 in group 1
        assertThat(Arrays.copyOf(p.get(2), 10)).isEqualTo(Arrays.copyOf(p.get(0), 10));
        assertThat(Arrays.copyOf(p.get(3), 10)).isEqualTo(Arrays.copyOf(p.get(1), 10));
        assertThat(Arrays.copyOf(p.get(1), 10)).isNotEqualTo(Arrays.copyOf(p.get(0), 10));
        assertThat(Arrays.copyOfRange(p.get(2), 10, 40)).isNotEqualTo(Arrays.copyOfRange(p.get(0), 10, 40));
        // a prompt shorter than the prefix is the prefix's first tokens
        assertThat(p.get(4)).isEqualTo(Arrays.copyOf(p.get(0), 5));
        // rows with token ids keep them
        assertThat(p.get(6)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
        // deterministic: the same prompts again
        List<int[]> again = prompts(lengthsOnly(), "workload.trace.shared_prefix={tokens: 10, groups: 2}");
        for (int i = 0; i < p.size(); i++) {
            assertThat(again.get(i)).isEqualTo(p.get(i));
        }
    }

    @Test
    void sharedPrefix_unset_leavesEveryPromptAsBefore_andTheSuffixIsUnchangedWhenSet() throws IOException {
        Path trace = lengthsOnly();
        List<int[]> plain = prompts(trace);
        assertThat(Arrays.copyOf(plain.get(2), 10)).isNotEqualTo(Arrays.copyOf(plain.get(0), 10));
        assertThat(plain.get(0)).hasSize(40);
        // unique pseudo-random tokens: request i's token j is a function of (the run's seed, i) and j
        long seed = io.servesim.sim.Mix64.mix(42L ^ TraceWorkload.UNIQUE_PROMPT_SALT, 0);
        int[] expected = new int[40];
        for (int j = 0; j < expected.length; j++) {
            expected[j] = (int) ((io.servesim.sim.Mix64.mix(seed, j) >>> 1) % Request.VOCAB);
        }
        assertThat(plain.get(0)).isEqualTo(expected);
        List<int[]> shared = prompts(trace, "workload.trace.shared_prefix={tokens: 10, groups: 3}");
        assertThat(shared.get(0)).hasSize(40);
        assertThat(Arrays.copyOf(shared.get(3), 10)).isEqualTo(Arrays.copyOf(shared.get(0), 10));
    }

    @Test
    void repeatPeriod_aRowAsLongAsTheRowPLinesEarlierRepeatsThatWholePrompt_andAWindowRestartsTheChain()
            throws IOException {
        int[] lengths = {40, 41, 40, 42, 40, 41};
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < lengths.length; i++) {
            sb.append("{\"arrival_s\": ")
                    .append(i)
                    .append(", \"input_tokens\": ")
                    .append(lengths[i])
                    .append(", \"output_tokens\": 3}\n");
        }
        Path trace = write("r.jsonl", sb.toString());
        String shared = "workload.trace.shared_prefix={tokens: 8, groups: 2, repeat_period: 2}";
        List<int[]> p = prompts(trace, shared);
        assertThat(p.get(2)).isEqualTo(p.get(0)); // 40 tokens, as the row 2 lines earlier: the same prompt
        assertThat(p.get(4)).isEqualTo(p.get(0)); // and again two lines later (a chain)
        assertThat(p.get(3)).hasSize(42); // 42 != 41: a prompt of its own
        assertThat(Arrays.copyOfRange(p.get(5), 8, 41)).isNotEqualTo(Arrays.copyOfRange(p.get(1), 8, 41)); // 41 != 42
        // replaying from 1.5 s does not see rows 0 and 1: row 2 starts the chain, row 4 repeats it
        List<int[]> window = prompts(trace, shared, "workload.trace.start_ms=1500");
        assertThat(window).hasSize(4);
        assertThat(window.get(2)).isEqualTo(window.get(0));
        assertThat(window.get(0)).isNotEqualTo(p.get(0));
        // without repeat_period every length-only prompt is unique past its group's prefix
        List<int[]> unique = prompts(trace, "workload.trace.shared_prefix={tokens: 8, groups: 2}");
        assertThat(Arrays.copyOf(unique.get(2), 8)).isEqualTo(Arrays.copyOf(unique.get(0), 8));
        assertThat(unique.get(2)).isNotEqualTo(unique.get(0));
    }

    @Test
    void sharedPrefix_isValidated_andLeftOutOfWrittenConfigsWhileUnset() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("workload.trace.shared_prefix={tokens: 0}")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("workload.trace.shared_prefix.tokens: must be >= 1, got 0");
        assertThatThrownBy(() ->
                        ConfigLoader.fromYaml("", "t", List.of("workload.trace.shared_prefix={tokens: 10, groups: 0}")))
                .hasMessage("workload.trace.shared_prefix.groups: must be >= 1, got 0");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("workload.trace.shared_prefix.tokens=10")))
                .hasMessage("workload.trace.shared_prefix.groups: is required");
        var unset = ConfigLoader.fromYaml("", "t", List.of());
        assertThat(unset.workload().trace().sharedPrefix()).isNull();
        assertThat(ConfigLoader.toTree(unset).path("workload").path("trace").has("shared_prefix"))
                .isFalse();
        var set = ConfigLoader.fromYaml("", "t", List.of("workload.trace.shared_prefix={tokens: 100, groups: 11}"));
        assertThat(ConfigLoader.fromYaml(ConfigLoader.toYaml(set), "t", List.of()))
                .isEqualTo(set);
    }
}
