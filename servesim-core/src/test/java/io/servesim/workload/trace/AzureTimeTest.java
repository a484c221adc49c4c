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
    void theDigitByDigitPath_agreesWithTheFormatter_onRandomTimestamps_andLeavesEveryOtherFormToIt() {
        java.util.SplittableRandom rng = new java.util.SplittableRandom(11);
        for (int i = 0; i < 20_000; i++) {
            int digits = rng.nextInt(10); // 0: no fraction
            StringBuilder t = new StringBuilder(String.format(
                    java.util.Locale.ROOT,
                    "%04d-%02d-%02d %02d:%02d:%02d",
                    1970 + rng.nextInt(231),
                    1 + rng.nextInt(12),
                    1 + rng.nextInt(31),
                    rng.nextInt(24),
                    rng.nextInt(60),
                    rng.nextInt(60)));
            if (digits > 0) {
                t.append('.');
                for (int d = 0; d < digits; d++) {
                    t.append((char) ('0' + rng.nextInt(10)));
                }
            }
            String text = t.toString();
            assertThat(AzureReader.parseTime(text, "t.csv:2"))
                    .as(text)
                    .isEqualTo(AzureReader.parseWithFormatter(text, "t.csv:2"));
        }
        // forms the fast path leaves to the formatter: offsets, 30 February (the formatter's smart resolution), hour
        // 24, an empty fraction, a year it does not cover
        for (String other : new String[] {
            "2023-11-16 18:15:46+01:00",
            "2023-02-30 10:00:00",
            "2023-11-16 24:00:00",
            "2023-11-16 18:15:46.",
            "1969-12-31 23:59:59",
            "2262-01-01 00:00:00"
        }) {
            assertThat(AzureReader.parsePlainUtc(other)).as(other).isEqualTo(-1);
        }
        assertThat(AzureReader.parsePlainUtc("2023-11-16 18:15:46.6805900")).isPositive();
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
