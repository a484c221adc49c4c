package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.longs.LongArrayList;
import org.junit.jupiter.api.Test;

/**
 * The count pass's scanner ({@link JsonLinesReader#scanHashIds}) reads the common row shape itself and leaves every
 * other line to Jackson; {@link JsonLinesReader#hashIds} answers the same either way.
 */
class HashIdScanTest {
    private static long[] scanned(String line) {
        LongArrayList out = new LongArrayList();
        int r = JsonLinesReader.scanHashIds(line, out);
        return r == JsonLinesReader.UNSURE ? null : out.toLongArray();
    }

    private static int parsed(String line, LongArrayList out) {
        return JsonLinesReader.parseHashIds(line, out);
    }

    @Test
    void aMooncakeRow_isReadByTheScanner_withTheIdsTheParserReads() {
        String row = "{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52,"
                + " \"hash_ids\": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}";
        LongArrayList viaParser = new LongArrayList();
        assertThat(parsed(row, viaParser)).isEqualTo(1);
        assertThat(scanned(row)).containsExactly(viaParser.toLongArray());
        assertThat(scanned(row))
                .containsExactly(46L, 47L, 48L, 49L, 50L, 51L, 52L, 53L, 54L, 55L, 56L, 57L, 2353L, 2354L);
    }

    @Test
    void whitespaceEmptyArraysNegativeIdsAndOtherFields_areScanned() {
        assertThat(scanned("\t{ \"hash_ids\" :\t[ ] , \"x\": [1, {\"y\": \"]\"}]}"))
                .isEmpty();
        assertThat(scanned("{\"a\":{\"hash_ids\":[7]},\"hash_ids\":[-3,0,123456789012345678]}"))
                .containsExactly(-3L, 0L, 123456789012345678L); // the nested key is not the row's
        assertThat(scanned("{\"note\": \"hash_ids: [5]\", \"hash_ids\": [1]}")).containsExactly(1L);
        assertThat(scanned("{\"hash_ids\": [2]} trailing")).containsExactly(2L); // as the streaming parser: not read
    }

    @Test
    void anythingElse_isLeftToTheParser() {
        for (String line : new String[] {
            "{\"hash\\u005fids\": [1]}", // an escaped key: only a parser knows it is hash_ids
            "{\"s\": \"a \\\" \\\"hash_ids\\\": [9]\", \"hash_ids\": [1]}", // escaped quotes in a string
            "{\"hash_ids\": [1], \"hash_ids\": [2]}", // a repeated key
            "{\"hash_ids\": [1.5]}", // a fraction
            "{\"hash_ids\": [1e3]}", // an exponent
            "{\"hash_ids\": [1234567890123456789]}", // 19 digits
            "{\"hash_ids\": [\"1\"]}", // a string id
            "{\"hash_ids\": null}", // not an array
            "{\"timestamp\": 1}", // no ids
            "[{\"hash_ids\": [1]}]", // not an object
            "{\"hash_ids\": [1, 2", // cut
            "\uFEFF{\"hash_ids\": [1]}", // a byte-order mark
        }) {
            assertThat(scanned(line)).as(line).isNull();
        }
    }

    @Test
    void hashIds_givesTheParsersAnswer_whereTheScannerIsUnsure() {
        LongArrayList out = new LongArrayList();
        assertThat(JsonLinesReader.hashIds("{\"hash\\u005fids\": [4, 5]}", out)).isEqualTo(1);
        assertThat(out.toLongArray()).containsExactly(4L, 5L);
        assertThat(JsonLinesReader.hashIds("{\"hash_ids\": [1], \"hash_ids\": [2]}", out))
                .isEqualTo(parsed("{\"hash_ids\": [1], \"hash_ids\": [2]}", new LongArrayList()));
        assertThat(JsonLinesReader.hashIds("{\"timestamp\": 1}", out)).isZero();
        assertThat(JsonLinesReader.hashIds("{\"hash_ids\": [1.5]}", out)).isEqualTo(-1);
        assertThat(JsonLinesReader.hashIds("{\"hash_ids\": [1, 2", out)).isEqualTo(-1);
    }
}
