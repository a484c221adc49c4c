package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code servesim trace stats|convert} and trace replays from the command line, including bad input. */
class TraceCommandTest {
    private static final Path FIXTURES = Path.of("..", "servesim-core", "src", "test", "resources", "traces");

    @TempDir
    Path tmp;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    void stats_printsRowsSpanLengthsSessionsAndReuse() {
        CliRun r = run("trace", "stats", FIXTURES.resolve("sessions.jsonl").toString());
        assertThat(r.exit()).isEqualTo(Main.OK);
        assertThat(r.out())
                .contains("rows        3")
                .contains("sessions    2 (3 rows in sessions)")
                .contains("prefix reuse 33.33 % of 6 blocks (512-token blocks");
    }

    @Test
    void stats_unknownFormat_isAUsageError() {
        CliRun r = run("trace", "stats", FIXTURES.resolve("sessions.jsonl").toString(), "--format", "csv");
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("unknown trace format 'csv'")
                .contains("mooncake, azure, vllm_bench, measured, servesim");
    }

    @Test
    void stats_malformedRow_isAnInputErrorNamingFileAndLine() {
        CliRun r = run("trace", "stats", FIXTURES.resolve("bad_json.jsonl").toString());
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("bad_json.jsonl:2: not valid JSON");
    }

    @Test
    void convert_writesNativeJsonl_compressedByExtension_andItReplays() throws IOException {
        Path out = tmp.resolve("conv.jsonl.zst");
        CliRun c = run(
                "trace",
                "convert",
                FIXTURES.resolve("mooncake_conversation_first200.jsonl").toString(),
                "--format",
                "mooncake",
                "--out",
                out.toString());
        assertThat(c.exit()).isEqualTo(Main.OK);
        assertThat(c.out()).contains("wrote 200 rows");
        CliRun s = run("trace", "stats", out.toString(), "--format", "servesim");
        assertThat(s.exit()).isEqualTo(Main.OK);
        assertThat(s.out()).contains("rows        200");
        Path cfg = tmp.resolve("t.yaml");
        Files.writeString(
                cfg,
                "workload: {type: trace, trace: {format: servesim, path: '" + out + "', limit: 20}}\n"
                        + "timing: {type: fixed}\n",
                StandardCharsets.UTF_8);
        CliRun replay =
                run("replay", cfg.toString(), "--out", tmp.resolve("run").toString());
        assertThat(replay.exit()).as(replay.err()).isEqualTo(Main.OK);
        assertThat(replay.out()).contains("requests 20");
    }

    @Test
    void statsAndConvert_refuseRowsOutOfTimeOrder_asReplayDoes() throws IOException {
        Path bad = tmp.resolve("order.jsonl");
        Files.writeString(bad, """
                {"arrival_ms": 10, "input_length": 20, "output_length": 2}
                {"arrival_ms": 30, "session_id": "s", "input_length": 20, "output_length": 2}
                {"arrival_ms": 5, "session_id": "s", "input_length": 20, "output_length": 2}
                {"arrival_ms": 20, "input_length": 20, "output_length": 2}
                """);
        // line 3 is a later turn (its timestamp is ignored); line 4 is a first turn earlier than line 2's 30 ms
        CliRun stats = run("trace", "stats", bad.toString(), "--format", "servesim");
        assertThat(stats.exit()).isEqualTo(Main.USAGE);
        assertThat(stats.err())
                .contains("order.jsonl:4: timestamp: is 20.0 ms, earlier than the previous row's 30.0 ms");
        CliRun convert = run(
                "trace",
                "convert",
                bad.toString(),
                "--format",
                "servesim",
                "--out",
                tmp.resolve("o.jsonl").toString());
        assertThat(convert.exit()).isEqualTo(Main.USAGE);
        assertThat(convert.err()).contains("order.jsonl:4: timestamp");
        assertThat(tmp.resolve("o.jsonl")).doesNotExist();
    }

    @Test
    void convert_withATraceBlockSizeOfZero_isAUsageError_notAStackTrace() {
        CliRun c = run(
                "trace",
                "convert",
                FIXTURES.resolve("mooncake_conversation_first200.jsonl").toString(),
                "--format",
                "mooncake",
                "--trace-block-size",
                "0",
                "--out",
                tmp.resolve("x.jsonl").toString());
        assertThat(c.exit()).isEqualTo(Main.USAGE);
        assertThat(c.err()).contains("--trace-block-size must be >= 1, got 0").doesNotContain("Exception");
        assertThat(tmp.resolve("x.jsonl")).doesNotExist();
    }

    @Test
    void replay_ofAMalformedTrace_exits2NamingFileAndLine_andSkipBadLinesCountsIt() throws IOException {
        Path cfg = tmp.resolve("bad.yaml");
        Files.writeString(
                cfg,
                "workload: {type: trace, trace: {format: mooncake, path: '" + FIXTURES.resolve("bad_json.jsonl")
                        + "'}}\n",
                StandardCharsets.UTF_8);
        CliRun failed = run("replay", cfg.toString(), "--out", tmp.resolve("a").toString());
        assertThat(failed.exit()).isEqualTo(Main.USAGE);
        assertThat(failed.err())
                .contains("input error: bad_json.jsonl:2: not valid JSON")
                .contains("--skip-bad-lines");
        assertThat(tmp.resolve("a").resolve("summary.json")).doesNotExist();
        CliRun skipped = run(
                "replay",
                cfg.toString(),
                "--skip-bad-lines",
                "--out",
                tmp.resolve("b").toString());
        assertThat(skipped.exit()).isEqualTo(Main.OK);
        assertThat(skipped.err()).contains("warning: skipped 1 malformed trace rows");
        assertThat(Files.readString(tmp.resolve("b").resolve("summary.json")))
                .contains("\"bad_lines_skipped\" : 1")
                .contains("bad_json.jsonl:2");
    }

    @Test
    void replay_withoutATracePath_isAConfigError() throws IOException {
        Path cfg = tmp.resolve("nopath.yaml");
        Files.writeString(cfg, "workload: {type: trace}\n", StandardCharsets.UTF_8);
        CliRun r = run("replay", cfg.toString());
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("workload.trace.path: is required when type is trace");
    }
}
