package io.servesim.workload.trace;

import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.time.temporal.TemporalAccessor;
import java.util.Locale;

/**
 * Azure LLM inference trace CSV (2023 and 2024 layouts): a header naming {@code TIMESTAMP}, {@code ContextTokens}
 * and {@code GeneratedTokens} (any column order, UTF-8 BOM allowed), timestamps {@code yyyy-MM-dd HH:mm:ss} with up
 * to 9 fractional digits and an optional UTC offset. No prefix information: prompts are unique tokens.
 */
final class AzureReader implements TraceReader {
    private static final DateTimeFormatter TIME = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd HH:mm:ss")
            .optionalStart()
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .optionalEnd()
            .optionalStart()
            .appendOffset("+HH:MM", "Z")
            .optionalEnd()
            .toFormatter(Locale.ROOT);

    private final LineReader lines;
    private int timeCol = -1;
    private int contextCol = -1;
    private int generatedCol = -1;
    private int columns;

    AzureReader(Path path) {
        this.lines = new LineReader(path);
        String header = lines.next();
        if (header == null) {
            throw new TraceFormatException(lines.source() + ": empty file (expected a header row)");
        }
        if (!header.isEmpty() && header.charAt(0) == '\uFEFF') {
            header = header.substring(1);
        }
        String[] names = header.trim().split(",", -1);
        columns = names.length;
        for (int i = 0; i < names.length; i++) {
            switch (names[i].trim()) {
                case "TIMESTAMP" -> timeCol = i;
                case "ContextTokens" -> contextCol = i;
                case "GeneratedTokens" -> generatedCol = i;
                default -> {
                    // other columns are ignored
                }
            }
        }
        if (timeCol < 0 || contextCol < 0 || generatedCol < 0) {
            throw new TraceFormatException(lines.source() + ":" + lines.line()
                    + ": header must name TIMESTAMP, ContextTokens and GeneratedTokens, got '" + header.trim() + "'");
        }
    }

    @Override
    public TraceRecord next() {
        String s = lines.next();
        if (s == null) {
            return null;
        }
        String loc = lines.source() + ":" + lines.line();
        String[] f = s.trim().split(",", -1);
        if (f.length != columns) {
            throw new TraceFormatException(loc + ": expected " + columns + " columns, got " + f.length);
        }
        long ts = parseTime(f[timeCol].trim(), loc);
        int input = positive(f[contextCol].trim(), loc, "ContextTokens");
        int output = positive(f[generatedCol].trim(), loc, "GeneratedTokens");
        return new TraceRecord(lines.source(), lines.line(), ts, null, -1, input, output, null, 0, null, null, -1);
    }

    static long parseTime(String text, String loc) {
        try {
            // one parse, the offset read if present (UTC if not): parseBest would try an OffsetDateTime first and
            // throw and catch an exception on every row without one (the common case), which cost most of the read
            TemporalAccessor t = TIME.parse(text);
            ZoneOffset offset = t.isSupported(ChronoField.OFFSET_SECONDS)
                    ? ZoneOffset.ofTotalSeconds(t.get(ChronoField.OFFSET_SECONDS))
                    : ZoneOffset.UTC;
            OffsetDateTime odt = LocalDateTime.from(t).atOffset(offset);
            return Math.addExact(Math.multiplyExact(odt.toEpochSecond(), 1_000_000_000L), odt.getNano());
        } catch (DateTimeException | ArithmeticException e) {
            throw TraceFormatException.field(
                    loc, "TIMESTAMP", "expected 'yyyy-MM-dd HH:mm:ss[.fffffff][+HH:MM]', got '" + text + "'");
        }
    }

    private static int positive(String text, String loc, String field) {
        try {
            int v = Integer.parseInt(text);
            if (v < 1) {
                throw TraceFormatException.field(loc, field, "expected a positive integer, got " + text);
            }
            return v;
        } catch (NumberFormatException e) {
            throw TraceFormatException.field(loc, field, "expected a positive integer, got '" + text + "'");
        }
    }

    @Override
    public void close() {
        lines.close();
    }
}
