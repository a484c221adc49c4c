package io.servesim.engine;

import java.util.StringJoiner;

/** Builds JSON token-id lists for hand-written native trace rows in tests. */
final class TokenIds {
    private TokenIds() {}

    /** The JSON list {@code [from, ..., to]}. */
    static String range(int from, int to) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (int i = from; i <= to; i++) {
            j.add(Integer.toString(i));
        }
        return j.toString();
    }

    /** The JSON list {@code [a1..a2, b1..b2]}: a prompt that extends another one. */
    static String concat(int a1, int a2, int b1, int b2) {
        return range(a1, a2).replace("]", "") + "," + range(b1, b2).substring(1);
    }
}
