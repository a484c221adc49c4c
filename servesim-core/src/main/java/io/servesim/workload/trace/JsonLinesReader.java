package io.servesim.workload.trace;

import java.nio.file.Path;
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
}
