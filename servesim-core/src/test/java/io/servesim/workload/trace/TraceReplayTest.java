package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.ZstdOutputStream;
import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.report.ReportWriter;
import io.servesim.report.Summaries;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Golden replays of committed trace excerpts (see src/test/resources/traces/README.md) on one worker with fixed
 * timing (prefill step 20 ms, decode step 10 ms), with expectations checked by hand against the rows.
 */
class TraceReplayTest {
    private static final long MS = 1_000_000L;
    private static final String DIR = "src/test/resources/traces/";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    static RunResult replay(String format, String path, String... sets) {
        List<String> all = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=" + format,
                "workload.trace.path=" + path,
                "timing.type=fixed",
                "timing.fixed.prefill_ms=20",
                "timing.fixed.decode_ms=10"));
        all.addAll(List.of(sets));
        return Simulation.run(ConfigLoader.fromYaml("", "test", all));
    }

    static List<JsonNode> rows(String path) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(path))) {
            out.add(JSON.readTree(line));
        }
        return out;
    }

    @Test
    void sessionTurn_isReleasedWhenThePreviousTurnCompletes_plusItsDelay() {
        RunResult r = replay("mooncake", DIR + "sessions.jsonl");
        RequestLog log = r.log();
        int[] byId = log.indicesByRequestId();
        assertThat(byId).hasSize(3);
        // a/0 arrives at 0: prefill [0,20) -> token 1 at 20, decode [20,30) -> token 2 at 30: done at 30
        int a0 = byId[0];
        assertThat(log.lastTokenNanos(a0)).isEqualTo(30 * MS);
        // a/1 is released at 30 + delay 50 = 80 ms (its own position in the file does not matter)
        int a1 = byId[1];
        assertThat(log.arrivalNanos(a1)).isEqualTo(80 * MS);
        assertThat(log.sessionId(a1)).isEqualTo(log.sessionId(a0));
        assertThat(log.turn(a1)).isEqualTo(1);
        // it shares hash ids 1, 2 (1,024 tokens) with a/0, whose computed blocks are cached: 1,024 tokens hit
        assertThat(log.cachedTokens(a1)).isEqualTo(1024);
        assertThat(log.firstTokenNanos(a1)).isEqualTo(100 * MS);
        // b/0 arrives at its timestamp, 100 ms, with no shared hash ids
        int b0 = byId[2];
        assertThat(log.arrivalNanos(b0)).isEqualTo(100 * MS);
        assertThat(log.cachedTokens(b0)).isZero();
    }

    @Test
    void equalHashIdPrefixes_hitAfterReblocking512TokenIdsInto16And64TokenEngineBlocks() {
        for (int engineBlock : new int[] {16, 64}) {
            RunResult r = replay(
                    "mooncake",
                    DIR + "mooncake_conversation_first200.jsonl",
                    "workload.trace.limit=2",
                    "engine.kv_cache.block_size=" + engineBlock);
            RequestLog log = r.log();
            int second = log.indicesByRequestId()[1];
            // rows 1 and 2 share only hash id 0 (512 tokens); row 1's blocks are cached when scheduled, so
            // row 2 hits them in the same step: 512 / 16 = 32 or 512 / 64 = 8 engine blocks
            assertThat(log.cachedTokens(second))
                    .as("block size %d", engineBlock)
                    .isEqualTo(512);
            assertThat(log.inputTokens(second)).isEqualTo(7322);
        }
    }

    @Test
    void arrivals_followTheTraceTimestamps_shiftedToZero_andDividedBySpeedup() throws IOException {
        List<JsonNode> rows = rows(DIR + "mooncake_conversation_first200.jsonl");
        RunResult plain = replay("mooncake", DIR + "mooncake_conversation_first200.jsonl", "workload.trace.limit=60");
        RunResult fast = replay(
                "mooncake",
                DIR + "mooncake_conversation_first200.jsonl",
                "workload.trace.limit=60",
                "workload.trace.speedup=2");
        int[] p = plain.log().indicesByRequestId();
        int[] f = fast.log().indicesByRequestId();
        long t0 = rows.get(0).get("timestamp").longValue();
        for (int i = 0; i < 60; i++) {
            long raw = (rows.get(i).get("timestamp").longValue() - t0) * MS;
            assertThat(plain.log().arrivalNanos(p[i])).isEqualTo(raw);
            assertThat(fast.log().arrivalNanos(f[i])).isEqualTo(raw / 2);
            assertThat(plain.log().inputTokens(p[i]))
                    .isEqualTo(rows.get(i).get("input_length").intValue());
            assertThat(plain.log().outputTokens(p[i]))
                    .isEqualTo(rows.get(i).get("output_length").intValue());
        }
        assertThat(rows.get(59).get("timestamp").longValue()).isPositive(); // the excerpt spans several slots
    }

    @Test
    void window_keepsRowsFromStartToEnd_andTheFirstKeptRowArrivesAtZero() throws IOException {
        List<JsonNode> rows = rows(DIR + "mooncake_conversation_first200.jsonl");
        long t0 = rows.get(0).get("timestamp").longValue();
        long start = 3000;
        long end = 9000;
        List<Long> expected = new ArrayList<>();
        for (JsonNode row : rows) {
            long rel = row.get("timestamp").longValue() - t0;
            if (rel >= start && rel < end) {
                expected.add(rel);
            }
        }
        assertThat(expected).isNotEmpty();
        RunResult r = replay(
                "mooncake",
                DIR + "mooncake_conversation_first200.jsonl",
                "workload.trace.start_ms=" + start,
                "workload.trace.end_ms=" + end);
        int[] ids = r.log().indicesByRequestId();
        assertThat(ids).hasSize(expected.size());
        for (int i = 0; i < ids.length; i++) {
            assertThat(r.log().arrivalNanos(ids[i])).isEqualTo((expected.get(i) - expected.get(0)) * MS);
        }
    }

    @Test
    void concurrencyMode_ignoresTimestamps_andKeepsNRequestsInFlight() {
        RunResult r = replay(
                "mooncake",
                DIR + "mooncake_synthetic_first200.jsonl",
                "workload.trace.limit=6",
                "workload.trace.arrival=concurrency",
                "workload.trace.concurrency=2");
        RequestLog log = r.log();
        int[] ids = log.indicesByRequestId();
        assertThat(ids).hasSize(6);
        assertThat(log.arrivalNanos(ids[0])).isZero();
        assertThat(log.arrivalNanos(ids[1])).isZero();
        // each later request arrives exactly when one of the in-flight ones finished
        for (int k = 2; k < 6; k++) {
            long at = log.arrivalNanos(ids[k]);
            boolean matches = false;
            for (int j = 0; j < k; j++) {
                matches |= log.lastTokenNanos(ids[j]) == at;
            }
            assertThat(matches).as("request %d arrives at a completion", k).isTrue();
        }
    }

    @Test
    void outputOverrideAndCap_replaceOrBoundTheTraceOutputLengths() {
        RunResult over = replay(
                "mooncake",
                DIR + "mooncake_conversation_first200.jsonl",
                "workload.trace.limit=5",
                "workload.trace.output_tokens_override=3");
        RunResult cap = replay(
                "mooncake",
                DIR + "mooncake_conversation_first200.jsonl",
                "workload.trace.limit=5",
                "workload.trace.output_tokens_cap=400");
        for (int i = 0; i < 5; i++) {
            assertThat(over.log().outputTokens(i)).isEqualTo(3);
            assertThat(cap.log().outputTokens(i)).isLessThanOrEqualTo(400);
        }
        assertThat(cap.log().outputTokens(cap.log().indicesByRequestId()[0])).isEqualTo(400); // row 1 asks for 500
    }

    @Test
    void azureTrace_arrivalsComeFromSevenDigitFractionalTimestamps() {
        RunResult r = replay("azure", DIR + "azure_llm_2023_conv_first200.csv", "workload.trace.limit=3");
        int[] ids = r.log().indicesByRequestId();
        // 18:15:46.6805900, 18:15:50.9951690, ... (first row at 0)
        assertThat(r.log().arrivalNanos(ids[0])).isZero();
        assertThat(r.log().arrivalNanos(ids[1])).isEqualTo(4_314_579_000L);
        assertThat(r.log().inputTokens(ids[0])).isEqualTo(374);
        assertThat(r.log().outputTokens(ids[0])).isEqualTo(44);
        assertThat(r.log().cachedTokens(ids[1])).isZero(); // no prefix information: unique prompts
    }

    @Test
    void vllmBenchTrace_usesRealTokenIds_soSharedConversationPrefixesHit() throws IOException {
        List<JsonNode> rows = rows(DIR + "sharegpt_vllm_bench_first50.jsonl");
        RunResult r = replay("vllm_bench", DIR + "sharegpt_vllm_bench_first50.jsonl");
        RequestLog log = r.log();
        int[] ids = log.indicesByRequestId();
        assertThat(ids).hasSize(50);
        long t0 = rows.get(0).get("arrival_time_ns").longValue();
        long hits = 0;
        for (int i = 0; i < 50; i++) {
            assertThat(log.arrivalNanos(ids[i]))
                    .isEqualTo(rows.get(i).get("arrival_time_ns").longValue() - t0);
            assertThat(log.inputTokens(ids[i]))
                    .isEqualTo(rows.get(i).get("input_toks").intValue());
            hits += log.cachedTokens(ids[i]);
        }
        assertThat(hits).isPositive().isEqualTo(hits - hits % 16); // block-granular reuse between turns
    }

    @Test
    void gzAndZstTraces_replayExactlyLikeThePlainFile(@TempDir Path tmp) throws IOException {
        byte[] plain = Files.readAllBytes(Path.of(DIR + "sessions.jsonl"));
        Path gz = tmp.resolve("sessions.jsonl.gz");
        try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(gz))) {
            o.write(plain);
        }
        Path zst = tmp.resolve("sessions.jsonl.zst");
        try (OutputStream o = new ZstdOutputStream(Files.newOutputStream(zst))) {
            o.write(plain);
        }
        String expected = requestsOf(replay("mooncake", DIR + "sessions.jsonl"));
        assertThat(requestsOf(replay("mooncake", gz.toString()))).isEqualTo(expected);
        assertThat(requestsOf(replay("mooncake", zst.toString()))).isEqualTo(expected);
    }

    @Test
    void convertingToNativeJsonl_replaysIdentically(@TempDir Path tmp) throws IOException {
        for (String[] src : new String[][] {
            {"mooncake", DIR + "sessions.jsonl"},
            {"mooncake", DIR + "mooncake_conversation_first200.jsonl"},
            {"azure", DIR + "azure_llm_2023_conv_first200.csv"},
            {"vllm_bench", DIR + "sharegpt_vllm_bench_first50.jsonl"}
        }) {
            Path out = tmp.resolve("native.jsonl");
            List<String> lines = new ArrayList<>();
            try (TraceReader reader =
                    TraceFormats.open(io.servesim.config.TraceFormat.of(src[0]), Path.of(src[1]), 512)) {
                for (TraceRecord rec = reader.next(); rec != null; rec = reader.next()) {
                    lines.add(NativeFormat.line(rec));
                }
            }
            Files.write(out, lines, StandardCharsets.UTF_8);
            assertThat(requestsOf(replay("servesim", out.toString(), "workload.trace.limit=50")))
                    .as(src[1])
                    .isEqualTo(requestsOf(replay(src[0], src[1], "workload.trace.limit=50")));
        }
    }

    /** canonical.json's request rows (the config differs between formats). */
    static String requestsOf(RunResult r) {
        StringWriter w = new StringWriter();
        try {
            ReportWriter.writeCanonical(r, Summaries.of(r), w);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        String s = w.toString();
        return s.substring(s.indexOf("\"requests\":["), s.indexOf("\"schema\""));
    }

    // ---- bad input --------------------------------------------------------------------------------------------

    @Test
    void malformedJson_failsNamingFileAndLine() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "bad_json.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("bad_json.jsonl:2: not valid JSON");
    }

    @Test
    void missingRequiredField_failsNamingFileLineAndField() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "bad_missing_output.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("bad_missing_output.jsonl:2: output_length|output_tokens: is required");
    }

    @Test
    void negativeLength_failsSayingWhatWasExpected() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "bad_negative.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("bad_negative.jsonl:1: input_length: expected a positive integer, got -10");
    }

    @Test
    void hashIdsInconsistentWithInputLength_fail() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "bad_hash_count.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("bad_hash_count.jsonl:1: hash_ids: has 2 ids but input_length 1100 needs"
                        + " ceil(1100 / 512) = 3");
    }

    @Test
    void timestampsGoingBackwards_failWithArrivalTrace_butNotWithConcurrency() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "bad_order.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("bad_order.jsonl:2: timestamp: is 5.0 ms, earlier than the previous row's");
        RunResult r = replay(
                "mooncake",
                DIR + "bad_order.jsonl",
                "workload.trace.arrival=concurrency",
                "workload.trace.concurrency=1");
        assertThat(r.log().size()).isEqualTo(2);
    }

    @Test
    void emptyTrace_isAClearError() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "empty.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("empty.jsonl: the trace has no rows to replay");
    }

    @Test
    void missingFile_isAClearError() {
        assertThatThrownBy(() -> replay("mooncake", DIR + "nope.jsonl"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageContaining("trace file not found");
    }

    @Test
    void skipBadLines_countsAndListsTheSkippedRows_neverSilently() {
        RunResult r = replay("mooncake", DIR + "bad_json.jsonl", "workload.trace.skip_bad_lines=true");
        assertThat(r.log().size()).isEqualTo(2);
        assertThat(r.badLinesSkipped()).isEqualTo(1);
        assertThat(r.badLineSamples()).singleElement().asString().startsWith("bad_json.jsonl:2:");
        assertThat(ReportWriter.summaryTree(Summaries.of(r))
                        .get("bad_lines_skipped")
                        .longValue())
                .isEqualTo(1);
    }

    @Test
    void azureBadRows_nameTheColumnAndLine() {
        assertThatThrownBy(() -> replay("azure", DIR + "bad_azure.csv"))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("bad_azure.csv:3: ContextTokens: expected a positive integer, got 'notanumber'");
        RunResult r = replay("azure", DIR + "bad_azure.csv", "workload.trace.skip_bad_lines=true");
        assertThat(r.badLinesSkipped()).isEqualTo(2);
        assertThat(r.badLineSamples().get(1)).startsWith("bad_azure.csv:4: TIMESTAMP: expected");
    }

    @Test
    @org.junit.jupiter.api.Timeout(60) // it used to loop forever: a regression fails here instead of hanging the build
    void aTruncatedGzipTrace_failsOnceNamingTheLine_andWithSkipBadLinesEndsThere_insteadOfLoopingForever(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < 2000; i++) {
            rows.append("{\"timestamp\": ")
                    .append(i * 10)
                    .append(", \"input_length\": 600, \"output_length\": 4,")
                    .append(" \"hash_ids\": [")
                    .append(i)
                    .append(", ")
                    .append(i + 7_000_000)
                    .append("]}\n");
        }
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (var out = new java.util.zip.GZIPOutputStream(gz)) {
            out.write(rows.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        byte[] all = gz.toByteArray();
        java.nio.file.Path cut = dir.resolve("cut.jsonl.gz");
        java.nio.file.Files.write(cut, java.util.Arrays.copyOf(all, all.length / 2));
        assertThatThrownBy(() -> replay("mooncake", cut.toString()))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageMatching("cut\\.jsonl\\.gz:\\d+: cannot read \\(truncated or corrupt file\\?\\): .*");
        RunResult r = replay("mooncake", cut.toString(), "workload.trace.skip_bad_lines=true");
        assertThat(r.badLinesSkipped()).isEqualTo(1);
        assertThat(r.log().size()).isBetween(100, 1999); // the rows before the cut replayed, then the file ended
        assertThat(r.badLineSamples()).singleElement().asString().contains("truncated or corrupt");
    }

    @Test
    void hugeTimestamps_areReportedAsRead_notWrappedAround(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws IOException {
        for (String ts : List.of("1e300", "1e13", "9223372036854775807")) {
            java.nio.file.Path f = dir.resolve("t" + ts.length() + ".jsonl");
            java.nio.file.Files.writeString(
                    f,
                    "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n"
                            + "{\"timestamp\": " + ts + ", \"input_length\": 10, \"output_length\": 2,"
                            + " \"hash_ids\": [2]}\n");
            assertThatThrownBy(() -> replay("mooncake", f.toString()))
                    .as(ts)
                    .isInstanceOf(TraceFormatException.class)
                    .hasMessageContaining(f.getFileName() + ":2: timestamp: is ")
                    .hasMessageContaining("too large")
                    .hasMessageNotContaining("is required")
                    .hasMessageNotContaining("earlier than");
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(30) // a 2^31 - 1 token prompt used to be expanded and hashed: out of memory
    void aPromptOfTwoBillionTokens_isRejectedAsTooLong_withoutBeingBuiltOrHashed(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        java.nio.file.Path f = dir.resolve("big.jsonl");
        java.nio.file.Files.writeString(f, """
                {"arrival_ms": 0, "input_length": 2147483647, "output_length": 2}
                {"arrival_ms": 5, "input_length": 100, "output_length": 2}
                """);
        RunResult r = replay("servesim", f.toString());
        assertThat(r.log().size()).isEqualTo(2);
        assertThat(r.log().status(0).reason()).isEqualTo("prompt_too_long");
        assertThat(r.log().status(1).status()).isEqualTo("completed");
    }

    @Test
    void sessionIdsThatAreNotUtf8_areRejectedNamingTheLine_notMergedIntoOneSession(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        b.writeBytes("{\"arrival_ms\": 0, \"session_id\": \"A".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        b.write(0xFF);
        b.writeBytes("\", \"input_length\": 10, \"output_length\": 2}\r\n"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        b.writeBytes("{\"arrival_ms\": 1, \"session_id\": \"A".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        b.write(0xFE);
        b.writeBytes("\", \"input_length\": 10, \"output_length\": 2}\r\n"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        b.writeBytes("{\"arrival_ms\": 2, \"session_id\": \"B\", \"input_length\": 10, \"output_length\": 2}\r\n"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        java.nio.file.Path f = dir.resolve("ids.jsonl");
        java.nio.file.Files.write(f, b.toByteArray());
        assertThatThrownBy(() -> replay("servesim", f.toString()))
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("ids.jsonl:1: not valid UTF-8 (byte 0xFF at byte 35 of the line)");
        RunResult r = replay("servesim", f.toString(), "workload.trace.skip_bad_lines=true");
        assertThat(r.badLinesSkipped()).isEqualTo(2); // both rows counted, neither merged into the other
        assertThat(r.log().size()).isEqualTo(1); // the valid CRLF row replays
    }

    @Test
    void aByteOrderMarkBeforeTheFirstLine_isSkipped_asWindowsToolsWriteOne(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        String csv = """
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 18:15:46.6805900,374,44
                2023-11-16 18:15:50.9951690,396,109
                """;
        java.nio.file.Path plain = dir.resolve("plain.csv");
        java.nio.file.Path bom = dir.resolve("bom.csv");
        java.nio.file.Files.writeString(plain, csv);
        java.nio.file.Files.writeString(bom, "\uFEFF" + csv); // EF BB BF in UTF-8
        RunResult a = replay("azure", plain.toString());
        RunResult b = replay("azure", bom.toString());
        assertThat(b.log().size()).isEqualTo(2);
        assertThat(b.log().size()).isEqualTo(a.log().size());
        // only before the first line: a BOM inside a row is still an error naming it
        java.nio.file.Files.writeString(bom, csv + "\uFEFF2023-11-16 18:15:51.0012730,879,11\n");
        assertThatThrownBy(() -> replay("azure", bom.toString()))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageStartingWith("bom.csv:4: ");
    }

    @Test
    @org.junit.jupiter.api.Timeout(30) // a row 68 years ahead used to fill the time series, a row per second
    void aTraceRowYearsAhead_costsATimeSeriesRow_notOnePerTick(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws IOException {
        java.nio.file.Path f = dir.resolve("far.jsonl");
        java.nio.file.Files.writeString(f, """
                {"request_id": "r-0", "arrival_s": 0.0, "input_tokens": 59, "output_tokens": 24}
                {"request_id": "r-1", "arrival_s": 2147483648, "input_tokens": 58, "output_tokens": 24}
                """);
        RunResult r = replay("measured", f.toString(), "output.timeseries_tick_s=1");
        assertThat(r.log().size()).isEqualTo(2);
        // samples while the first request runs, one before the second arrives (the idle ticks between would repeat
        // it with zero rates), then while the second runs
        assertThat(r.timeSeries().size()).isBetween(3, 12);
        long lastTime = r.timeSeries().timeNanos(r.timeSeries().size() - 1);
        assertThat(lastTime).isGreaterThanOrEqualTo(2_147_483_648L * 1_000_000_000L);
    }

    @Test
    void laterTurnsOfASessionWhoseTurnWasRejected_areRecordedAsAbandoned_soNoRowIsLost(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        // 10 sessions x 4 turns + 5 single requests; each turn's prompt grows by 300 tokens, so with max_model_len
        // 700 turn 3 (900 tokens) is rejected and turn 4 is never sent
        StringBuilder rows = new StringBuilder();
        for (int s = 0; s < 10; s++) {
            for (int t = 0; t < 4; t++) {
                rows.append("{\"arrival_ms\": ")
                        .append(s * 100 + t)
                        .append(", \"session_id\": \"s")
                        .append(s)
                        .append("\", \"input_length\": ")
                        .append(300 * (t + 1))
                        .append(", \"output_length\": 4}\n");
            }
        }
        for (int i = 0; i < 5; i++) {
            rows.append("{\"arrival_ms\": ").append(2000 + i).append(", \"input_length\": 50, \"output_length\": 4}\n");
        }
        java.nio.file.Path f = dir.resolve("sessions.jsonl");
        java.nio.file.Files.writeString(f, rows.toString());
        RunResult r = replay("servesim", f.toString(), "engine.max_model_len=700");
        var log = r.log();
        assertThat(log.size()).isEqualTo(45); // every row ends in requests.csv
        java.util.Map<String, Integer> byReason = new java.util.TreeMap<>();
        for (int i = 0; i < log.size(); i++) {
            byReason.merge(log.status(i).status() + "/" + log.status(i).reason(), 1, Integer::sum);
        }
        assertThat(byReason)
                .containsEntry("completed/stop", 25) // turns 1-2 of 10 sessions, and the 5 single requests
                .containsEntry("rejected/prompt_too_long", 10)
                .containsEntry("abandoned/session_ended", 10)
                .hasSize(3);
        var summary = ReportWriter.summaryTree(Summaries.of(r));
        assertThat(summary.get("abandoned").longValue()).isEqualTo(10);
        assertThat(summary.get("requests").longValue()).isEqualTo(45);
    }

    @Test
    void whenEveryWorkerFails_theTurnsOfSessionsThatReachNoWorker_endAsRejectedAndAbandoned_soNoRowIsLost(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        // 100 sessions x 4 turns (1 s apart) + 50 single requests over 20 s; both workers fail at 8 s
        StringBuilder rows = new StringBuilder();
        for (int s = 0; s < 100; s++) {
            for (int t = 0; t < 4; t++) {
                rows.append("{\"arrival_ms\": ")
                        .append(s * 150 + t * 1000)
                        .append(", \"session_id\": \"s")
                        .append(s)
                        .append("\", \"input_length\": ")
                        .append(100 * (t + 1))
                        .append(", \"output_length\": 8}\n");
            }
        }
        for (int i = 0; i < 50; i++) {
            rows.append("{\"arrival_ms\": ").append(i * 400).append(", \"input_length\": 50, \"output_length\": 4}\n");
        }
        String sorted = rows.toString()
                .lines()
                .sorted(java.util.Comparator.comparingLong(
                        l -> Long.parseLong(l.replaceAll("^\\{\"arrival_ms\": ([0-9]+),.*$", "$1"))))
                .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
        java.nio.file.Path f = dir.resolve("sessions.jsonl");
        java.nio.file.Files.writeString(f, sorted);
        RunResult r = replay(
                "servesim",
                f.toString(),
                "cluster.workers=2",
                "cluster.events=[{at_ms: 8000, worker: 0, action: fail}, {at_ms: 8000, worker: 1, action: fail}]");
        var log = r.log();
        assertThat(log.size()).isEqualTo(450); // every row ends in requests.csv (it was 237)
        java.util.Map<String, Integer> byReason = new java.util.TreeMap<>();
        for (int i = 0; i < log.size(); i++) {
            byReason.merge(log.status(i).status() + "/" + log.status(i).reason(), 1, Integer::sum);
        }
        assertThat(byReason).containsKeys("completed/stop", "rejected/no_worker", "abandoned/session_ended");
        assertThat(byReason.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(450);
    }
}
