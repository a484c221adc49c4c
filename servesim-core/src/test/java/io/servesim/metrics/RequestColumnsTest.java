package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-request column table: one record, written and read back the same way by every output. */
class RequestColumnsTest {
    static RequestRecord sample() {
        return new RequestRecord(
                7,
                3,
                2,
                1,
                0,
                1_500_000L,
                2_000_001L,
                12_345_678L,
                42_345_679L,
                900,
                4,
                512,
                448,
                128,
                64,
                1,
                RequestStatus.COMPLETED,
                2,
                0,
                9,
                true,
                3_000_123L,
                2,
                1);
    }

    @Test
    void aCsvRow_readsBackAsTheSameRecord() {
        RequestRecord r = sample();
        StringBuilder sb = new StringBuilder();
        RequestColumns.appendCsv(r, sb);
        RequestColumns.CsvReader reader = new RequestColumns.CsvReader(RequestColumns.CSV_HEADER.strip());
        assertThat(reader.parse(sb.toString().strip())).isEqualTo(r);
    }

    @Test
    void neverHappenedValues_areEmptyCells_andReadBackAsMinusOne() {
        RequestRecord r = Records.timed(0, -1, -1, 5L, -1, -1, -1, 10, 0, RequestStatus.REJECTED_NO_WORKER);
        StringBuilder sb = new StringBuilder();
        RequestColumns.appendCsv(r, sb);
        assertThat(sb.toString()).startsWith("0,,0,-1,-1,0.000005,,,,,,,,10,0,");
        assertThat(new RequestColumns.CsvReader(RequestColumns.CSV_HEADER.strip())
                        .parse(sb.toString().strip()))
                .isEqualTo(r);
    }

    @Test
    void tpot_isOneDefinition_toThePicosecond_inRecordCsvAndSummary() {
        RequestRecord r = sample(); // (42,345,679 − 12,345,678) ns over 3 gaps = 10,000,000.333… ns
        assertThat(r.tpotPicos()).isEqualTo(10_000_000_333L);
        StringBuilder sb = new StringBuilder();
        RequestColumns.appendCsv(r, sb);
        assertThat(sb.toString().split(",", -1)[RequestColumns.CSV_NAMES.indexOf("tpot_ms")])
                .isEqualTo("10.000000333");
        assertThat(r.tpotMs()).isCloseTo(10.000000333, org.assertj.core.data.Offset.offset(1e-12));
        RequestMetrics m = new RequestMetrics();
        m.record(r);
        assertThat(m.tpotPicos.stats(1e-9).mean()).isEqualTo(r.tpotMs());
        RequestRecord oneToken = Records.timed(1, 0, 0, 0, 0, 10, 10, 5, 1, RequestStatus.COMPLETED);
        assertThat(oneToken.tpotPicos()).isEqualTo(-1);
        assertThat(oneToken.tpotMs()).isNaN();
    }

    @Test
    void canonicalKeys_areSorted_andEveryColumnIsDeclared() {
        List<String> keys = RequestColumns.CANONICAL.stream()
                .map(RequestColumns.Column::canonicalName)
                .toList();
        assertThat(keys).isSorted().contains("arrival_ns", "pull_ns", "status", "restarts");
        assertThat(RequestColumns.ALL).allSatisfy(c -> {
            assertThat(c.unit()).isNotBlank();
            assertThat(c.meaning()).isNotBlank();
        });
        StringBuilder sb = new StringBuilder();
        RequestColumns.appendCanonical(sample(), sb);
        assertThat(sb.toString())
                .startsWith("{\"arrival_ns\":1500000,\"cached_tokens\":512,\"finish_reason\":\"stop\"")
                .endsWith("\"turn\":2,\"worker\":1}");
    }
}
