package io.servesim.workload.trace;

import java.math.BigDecimal;
import java.math.RoundingMode;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Field access for JSONL trace rows: every failure names {@code file:line}, the field and what was expected. */
final class JsonRows {
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    private JsonRows() {}

    /** Parses one line as a JSON object. */
    static JsonNode parse(String line, String location) {
        JsonNode node;
        try {
            node = JSON.readTree(line);
        } catch (JacksonException e) {
            String msg = e.getOriginalMessage();
            int nl = msg == null ? -1 : msg.indexOf('\n');
            throw new TraceFormatException(location + ": not valid JSON: " + (nl > 0 ? msg.substring(0, nl) : msg));
        }
        if (node == null || !node.isObject()) {
            throw new TraceFormatException(location + ": expected a JSON object per line");
        }
        return node;
    }

    /** The first present field among {@code names}, or null. */
    static JsonNode any(JsonNode row, String... names) {
        for (String n : names) {
            JsonNode v = row.get(n);
            if (v != null && !v.isNull()) {
                return v;
            }
        }
        return null;
    }

    /** A non-negative integer field, or -1 when absent. */
    static long optLong(JsonNode row, String location, String... names) {
        JsonNode v = any(row, names);
        if (v == null) {
            return -1;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
            throw TraceFormatException.field(location, names[0], "expected a non-negative integer, got " + v);
        }
        return v.longValue();
    }

    /** A positive int field that must be present. */
    static int positiveInt(JsonNode row, String location, String... names) {
        JsonNode v = any(row, names);
        if (v == null) {
            throw TraceFormatException.field(location, String.join("|", names), "is required");
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 1) {
            throw TraceFormatException.field(location, names[0], "expected a positive integer, got " + v);
        }
        return v.intValue();
    }

    /** A positive int field, or -1 when absent. */
    static int optPositiveInt(JsonNode row, String location, String... names) {
        return any(row, names) == null ? -1 : positiveInt(row, location, names);
    }

    /** The latest time a trace may state: 2^62 ns, about 146 years (virtual time is a long of nanoseconds). */
    static final BigDecimal MAX_TIME_NANOS = BigDecimal.valueOf(1L << 62);

    /** A non-negative time in {@code unitNanos} units (e.g. 1e6 for ms), as nanoseconds; -1 when absent. */
    static long optTime(JsonNode row, String location, long unitNanos, String... names) {
        JsonNode v = any(row, names);
        if (v == null) {
            return -1;
        }
        if (!v.isNumber()) {
            throw TraceFormatException.field(location, names[0], "expected a number, got " + v);
        }
        BigDecimal d = v.decimalValue();
        if (d.signum() < 0) {
            throw TraceFormatException.field(location, names[0], "expected a non-negative time, got " + v);
        }
        BigDecimal nanos = d.multiply(BigDecimal.valueOf(unitNanos)).setScale(0, RoundingMode.HALF_EVEN);
        if (nanos.compareTo(MAX_TIME_NANOS) > 0) {
            // longValue() would wrap around (1e13 ms read as negative, 1e300 as 0): say what was read instead
            throw TraceFormatException.field(
                    location,
                    names[0],
                    "is " + v + ", too large: a time must be at most "
                            + MAX_TIME_NANOS.divide(BigDecimal.valueOf(unitNanos), 0, RoundingMode.DOWN)
                            + " in this field's unit (about 146 years)");
        }
        return nanos.longValueExact();
    }

    /** A session id (string or integer), or null. */
    static String optSession(JsonNode row, String location, String name) {
        JsonNode v = row.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isString()) {
            return v.stringValue();
        }
        if (v.isIntegralNumber()) {
            return v.asString();
        }
        throw TraceFormatException.field(location, name, "expected a string or an integer, got " + v);
    }

    /** An array of non-negative longs, or null when absent. */
    static long[] optLongArray(JsonNode row, String location, String name) {
        JsonNode v = row.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isArray()) {
            throw TraceFormatException.field(location, name, "expected a list of integers, got " + abbreviate(v));
        }
        long[] out = new long[v.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode e = v.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToLong() || e.longValue() < 0) {
                throw TraceFormatException.field(
                        location, name + "[" + i + "]", "expected a non-negative integer, got " + e);
            }
            out[i] = e.longValue();
        }
        return out;
    }

    /** An array of token ids (ints &ge; 0), or null when absent. */
    static int[] optTokenArray(JsonNode row, String location, String name) {
        JsonNode v = row.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isArray()) {
            throw TraceFormatException.field(location, name, "expected a list of token ids, got " + abbreviate(v));
        }
        int[] out = new int[v.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode e = v.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt() || e.intValue() < 0) {
                throw TraceFormatException.field(location, name + "[" + i + "]", "expected a token id >= 0, got " + e);
            }
            out[i] = e.intValue();
        }
        return out;
    }

    private static String abbreviate(JsonNode v) {
        String s = v.toString();
        return s.length() > 60 ? s.substring(0, 57) + "..." : s;
    }
}
