package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The Azure trace's TIMESTAMP: up to 9 fractional digits, an optional UTC offset (UTC without one), to the nanosecond. */
class AzureTimeTest {
    // 2023-11-16 18:15:46 UTC
    private static final long SECONDS = 1_700_158_546L;

    @Test
    void aTimestampWithoutOffset_isUtc_toTheNanosecond() {
        assertThat(AzureReader.parseTime("2023-11-16 18:15:46.6805900", "t.csv:2"))
                .isEqualTo(SECONDS * 1_000_000_000L + 680_590_000L);
        assertThat(AzureReader.parseTime("2023-11-16 18:15:46", "t.csv:2")).isEqualTo(SECONDS * 1_000_000_000L);
        assertThat(AzureReader.parseTime("2023-11-16 18:15:46.000000001", "t.csv:2"))
                .isEqualTo(SECONDS * 1_000_000_000L + 1);
    }

    @Test
    void anOffset_isApplied_andZIsUtc() {
        assertThat(AzureReader.parseTime("2023-11-16 19:15:46.5+01:00", "t.csv:2"))
                .isEqualTo(SECONDS * 1_000_000_000L + 500_000_000L);
        assertThat(AzureReader.parseTime("2023-11-16 13:45:46-04:30", "t.csv:2"))
                .isEqualTo(SECONDS * 1_000_000_000L);
        assertThat(AzureReader.parseTime("2023-11-16 18:15:46Z", "t.csv:2")).isEqualTo(SECONDS * 1_000_000_000L);
    }

    @Test
    void aMalformedTimestamp_namesTheLineAndField() {
        for (String bad :
                new String[] {"2023-11-16T18:15:46", "2023-13-16 18:15:46", "yesterday", "2023-11-16 18:15"}) {
            assertThatThrownBy(() -> AzureReader.parseTime(bad, "t.csv:7"))
                    .isInstanceOf(TraceFormatException.class)
                    .hasMessageContaining("t.csv:7")
                    .hasMessageContaining("TIMESTAMP")
                    .hasMessageContaining(bad);
        }
    }
}
