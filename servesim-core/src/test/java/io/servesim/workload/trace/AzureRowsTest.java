package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Azure CSV row is read as its comma-separated fields, each trimmed, in the header's column order; the row's
 * whole text (ASCII or any UTF-8) is what it says, and a bad row names its file, line and field.
 */
class AzureRowsTest {
    @TempDir
    Path tmp;

    private AzureReader reader(String name, byte[] content) throws IOException {
        Path f = tmp.resolve(name);
        Files.write(f, content);
        return new AzureReader(f);
    }

    private AzureReader reader(String name, String content) throws IOException {
        return reader(name, content.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void fieldsAreTrimmed_inTheHeadersColumnOrder_andOtherColumnsIgnored() throws IOException {
        try (AzureReader r = reader("a.csv", """
                GeneratedTokens, Note ,TIMESTAMP,ContextTokens
                 7 , x ,2023-11-16 18:15:46.5, 374
                9,,2023-11-16 18:15:47,1\s\s
                """)) {
            TraceRecord first = r.next();
            assertThat(first.inputLength()).isEqualTo(374);
            assertThat(first.outputLength()).isEqualTo(7);
            assertThat(first.line()).isEqualTo(2);
            TraceRecord second = r.next();
            assertThat(second.inputLength()).isEqualTo(1);
            assertThat(second.outputLength()).isEqualTo(9);
            assertThat(second.timestampNanos() - first.timestampNanos()).isEqualTo(500_000_000L);
            assertThat(r.next()).isNull();
        }
    }

    @Test
    void aRowWithTextThatIsNotAscii_readsAsItsUtf8() throws IOException {
        // a non-ASCII note goes through the strict decoder; its fields are the same as an ASCII row's
        try (AzureReader r = reader("u.csv", """
                TIMESTAMP,ContextTokens,GeneratedTokens,Note
                2023-11-16 18:15:46,12,3,caf\u00e9 \u2014 \uD83D\uDE00
                """)) {
            TraceRecord row = r.next();
            assertThat(row.inputLength()).isEqualTo(12);
            assertThat(row.outputLength()).isEqualTo(3);
        }
    }

    @Test
    void aRowWithTheWrongColumnCount_orABadCount_namesItsLineAndField() throws IOException {
        try (AzureReader r = reader("b.csv", """
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 18:15:46,12,3,4
                2023-11-16 18:15:46,12
                2023-11-16 18:15:46,12,0
                2023-11-16 18:15:46, ,3
                """)) {
            assertThatThrownBy(r::next).hasMessage("b.csv:2: expected 3 columns, got 4");
            assertThatThrownBy(r::next).hasMessage("b.csv:3: expected 3 columns, got 2");
            assertThatThrownBy(r::next).hasMessage("b.csv:4: GeneratedTokens: expected a positive integer, got 0");
            assertThatThrownBy(r::next).hasMessage("b.csv:5: ContextTokens: expected a positive integer, got ''");
        }
    }
}
