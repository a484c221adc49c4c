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
