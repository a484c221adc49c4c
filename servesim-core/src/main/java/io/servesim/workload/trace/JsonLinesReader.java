package io.servesim.workload.trace;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.nio.file.Path;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.JsonNode;

/** The shared skeleton of the JSONL readers: one JSON object per non-blank line, parsed into a record. */
abstract class JsonLinesReader implements TraceReader {
    private final LineReader lines;

    JsonLinesReader(Path path) {
        this.lines = new LineReader(path);
    }

    /** Builds the record of one parsed row; {@code loc} is {@code file:line}. */
    abstract TraceRecord parse(JsonNode row, String loc, String source, long line);

    @Override
    public final TraceRecord next() {
        String s = lines.next();
        if (s == null) {
            return null;
        }
        String loc = lines.source() + ":" + lines.line();
        return parse(JsonRows.parse(s, loc), loc, lines.source(), lines.line());
    }

    @Override
    public final void close() {
        lines.close();
    }

    private static final JsonFactory STREAMING = JsonFactory.builder().build();

    /**
     * How many rows each hash id appears in, for a JSONL trace whose rows carry {@code hash_ids}: one streamed pass
     * that reads only each row's top-level {@code hash_ids} array with Jackson's streaming parser, no row tree and no
     * record (the replay's own reading of the rows builds both). A line that is not a JSON object, or whose
     * {@code hash_ids} holds anything but integers, is skipped, as the replay skips or rejects it; a row the replay
     * rejects for another reason is still counted, which can only make an id look shared (its blocks are then indexed,
     * never wrongly private). Null when the first row read has no {@code hash_ids} or more than {@code maxRows} rows
     * have them.
     */
    static Long2IntOpenHashMap countHashIds(Path path, int maxRows) {
        Long2IntOpenHashMap counts = new Long2IntOpenHashMap();
        LongArrayList ids = new LongArrayList();
        try (LineReader lines = new LineReader(path)) {
            int rows = 0;
            while (true) {
                String s;
                try {
                    s = lines.next();
                } catch (TraceFormatException e) {
                    continue; // a line that is not UTF-8: skipped by the replay too; a failed read ends the file
                }
                if (s == null) {
                    return counts;
                }
                int found = hashIds(s, ids);
                if (found < 0) {
                    continue;
                }
                if (found == 0) {
                    if (rows == 0) {
                        return null; // not a hash-id trace
                    }
                    continue;
                }
                if (++rows > maxRows) {
                    return null;
                }
                for (int i = 0; i < ids.size(); i++) {
                    counts.addTo(ids.getLong(i), 1);
                }
            }
        }
    }

    /** Reads one row's top-level {@code hash_ids} into {@code out}: 1 when present, 0 when absent, -1 when malformed. */
    static int hashIds(String line, LongArrayList out) {
        int scanned = scanHashIds(line, out);
        return scanned != UNSURE ? scanned : parseHashIds(line, out);
    }

    /** {@link #scanHashIds}'s answer for a line it leaves to the JSON parser. */
    static final int UNSURE = -2;

    /*
     * Why a scanner beside Jackson: the count pass reads every row of the trace before the replay starts, while the
     * JVM is cold, and Jackson's tokenizer runs interpreted for most of it (a cold pass over the 3 MB Mooncake
     * conversation trace took about 450 ms, a warm one 30 ms; docs/performance.md). One small loop over the line's
     * characters is compiled almost at once. It answers only the common, unambiguous shape and leaves every other
     * line to Jackson (parseHashIds), so the count stays a superset of what the replay accepts (HashIdCountProperties).
     */

    /**
     * {@link #hashIds} for the common shape of a row, without a JSON parser: a line without backslashes (so no escaped
     * key or string can hide a key), a top-level object whose one top-level {@code hash_ids} key holds a flat array of
     * plain integers (an optional minus sign and at most 18 digits), JSON whitespace anywhere a parser allows it. Only
     * bracket depth and string boundaries are tracked, which is exact on such a line when it is valid JSON, so there
     * the ids are the ones the streaming parser reads. Returns 1 with the ids in {@code out}, or {@link #UNSURE} for
     * anything else (a backslash, no or a repeated top-level key, another kind of value or number, an unclosed object).
     * On an invalid line it may return ids the replay will reject, which only makes an id look shared.
     */
    static int scanHashIds(String s, LongArrayList out) {
        out.clear();
        int n = s.length();
        if (s.indexOf('\\') >= 0) {
            return UNSURE;
        }
        int i = skipWhitespace(s, 0);
        if (i >= n || s.charAt(i) != '{') {
            return UNSURE;
        }
        int depth = 0;
        boolean found = false;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '"') {
                int end = s.indexOf('"', i + 1);
                if (end < 0) {
                    return UNSURE;
                }
                int after = skipWhitespace(s, end + 1);
                if (depth == 1
                        && after < n
                        && s.charAt(after) == ':'
                        && end - i - 1 == HASH_IDS.length()
                        && s.startsWith(HASH_IDS, i + 1)) {
                    if (found) {
                        return UNSURE; // a repeated key: the parser decides what the row holds
                    }
                    int open = skipWhitespace(s, after + 1);
                    if (open >= n || s.charAt(open) != '[') {
                        return UNSURE;
                    }
                    i = scanIds(s, open + 1, out);
                    if (i < 0) {
                        return UNSURE;
                    }
                    found = true;
                    continue;
                }
                i = end + 1;
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
                if (depth == 0) {
                    return found ? 1 : UNSURE; // what follows the object is not read (nor by the streaming parser)
                }
            }
            i++;
        }
        return UNSURE;
    }

    private static final String HASH_IDS = "hash_ids";

    /** Reads plain integers up to the array's {@code ]}; the index after it, or -1 for anything else. */
    private static int scanIds(String s, int from, LongArrayList out) {
        int n = s.length();
        int i = skipWhitespace(s, from);
        if (i < n && s.charAt(i) == ']') {
            return i + 1;
        }
        while (i < n) {
            boolean negative = s.charAt(i) == '-';
            if (negative) {
                i++;
            }
            int start = i;
            long v = 0;
            char c;
            while (i < n && (c = s.charAt(i)) >= '0' && c <= '9') {
                v = v * 10 + (c - '0');
                i++;
            }
            if (i == start || i - start > 18) {
                return -1;
            }
            out.add(negative ? -v : v);
            i = skipWhitespace(s, i);
            if (i >= n) {
                return -1;
            }
            c = s.charAt(i);
            if (c == ']') {
                return i + 1;
            }
            if (c != ',') {
                return -1; // a fraction, an exponent or anything else: the parser decides
            }
            i = skipWhitespace(s, i + 1);
        }
        return -1;
    }

    private static int skipWhitespace(String s, int from) {
        int i = from;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                break;
            }
            i++;
        }
        return i;
    }

    /** {@link #hashIds} by Jackson's streaming parser: any line. */
    static int parseHashIds(String line, LongArrayList out) {
        out.clear();
        try (JsonParser p = STREAMING.createParser(ObjectReadContext.empty(), line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return -1;
            }
            int found = 0;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.PROPERTY_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (value == JsonToken.START_ARRAY && "hash_ids".equals(name)) {
                    while ((t = p.nextToken()) == JsonToken.VALUE_NUMBER_INT) {
                        out.add(p.getLongValue());
                    }
                    if (t != JsonToken.END_ARRAY) {
                        return -1; // a non-integer id: the replay rejects the row
                    }
                    found = 1;
                } else {
                    p.skipChildren();
                }
            }
            return t == JsonToken.END_OBJECT ? found : -1;
        } catch (JacksonException e) {
            return -1;
        }
    }
}
