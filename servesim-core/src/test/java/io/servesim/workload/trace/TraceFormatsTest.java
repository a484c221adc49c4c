package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.TraceFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each trace format's rows carry only what its {@link TraceFormat} declares, and the declared content shows up. */
class TraceFormatsTest {
    private static final String DIR = "src/test/resources/traces/";

    @TempDir
    Path tmp;

    private static List<TraceRecord> read(TraceFormat format, Path file) {
        List<TraceRecord> rows = new ArrayList<>();
        try (TraceReader reader = TraceFormats.open(format, file, 512)) {
            for (TraceRecord r = reader.next(); r != null; r = reader.next()) {
                rows.add(r);
            }
        }
        return rows;
    }

    /** Asserts that no row carries an undeclared kind of content, and returns what the rows carried: s, t, h. */
    private static String carried(TraceFormat format, List<TraceRecord> rows) {
        boolean sessions = false;
        boolean tokens = false;
        boolean hashes = false;
        for (TraceRecord r : rows) {
            sessions |= r.sessionId() != null;
            tokens |= r.inputTokenIds() != null;
            hashes |= r.hashIds() != null;
        }
        assertThat(sessions && !format.sessions()).as(format + " sessions").isFalse();
        assertThat(tokens && !format.tokenIds()).as(format + " token ids").isFalse();
        assertThat(hashes && !format.hashIds()).as(format + " hash ids").isFalse();
        return (sessions ? "s" : "") + (tokens ? "t" : "") + (hashes ? "h" : "");
    }

    @Test
    void everyFormat_carriesOnlyWhatItDeclares() throws IOException {
        List<TraceRecord> mooncake = read(TraceFormat.MOONCAKE, Path.of(DIR + "sessions.jsonl"));
        assertThat(carried(TraceFormat.MOONCAKE, mooncake)).isEqualTo("sh");
        assertThat(carried(
                        TraceFormat.MOONCAKE,
                        read(TraceFormat.MOONCAKE, Path.of(DIR + "mooncake_conversation_first200.jsonl"))))
                .contains("h");
        assertThat(carried(
                        TraceFormat.AZURE, read(TraceFormat.AZURE, Path.of(DIR + "azure_llm_2023_conv_first200.csv"))))
                .isEmpty();
        List<TraceRecord> bench = read(TraceFormat.VLLM_BENCH, Path.of(DIR + "sharegpt_vllm_bench_first50.jsonl"));
        assertThat(carried(TraceFormat.VLLM_BENCH, bench)).contains("t");

        Path nativeFile = tmp.resolve("native.jsonl");
        List<String> lines = new ArrayList<>();
        for (TraceRecord r : mooncake) {
            lines.add(NativeFormat.line(r));
        }
        for (TraceRecord r : bench) {
            lines.add(NativeFormat.line(r));
        }
        Files.write(nativeFile, lines);
        assertThat(carried(TraceFormat.SERVESIM, read(TraceFormat.SERVESIM, nativeFile)))
                .isEqualTo("sth");
    }
}
