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
        // the row's fields are those of s.trim().split(",", -1), each trimmed, read without splitting the whole row
        String row = s.trim();
        int fields = 1;
        for (int i = row.indexOf(','); i >= 0; i = row.indexOf(',', i + 1)) {
            fields++;
        }
        if (fields != columns) {
            throw new TraceFormatException(location() + ": expected " + columns + " columns, got " + fields);
        }
        String time = field(row, timeCol);
        long ts = parsePlainUtc(time);
        if (ts < 0) {
            ts = parseWithFormatter(time, location());
        }
        int input = positive(field(row, contextCol), "ContextTokens");
        int output = positive(field(row, generatedCol), "GeneratedTokens");
        return new TraceRecord(lines.source(), lines.line(), ts, null, -1, input, output, null, 0, null, null, -1);
    }

    /** {@code file:line} of the row just read (built only for a message). */
    private String location() {
        return lines.source() + ":" + lines.line();
    }

    /** Field {@code col} of a row of {@code columns} comma-separated fields, trimmed. */
    private static String field(String row, int col) {
        int start = 0;
        for (int c = 0; c < col; c++) {
            start = row.indexOf(',', start) + 1;
        }
        int end = row.indexOf(',', start);
        return row.substring(start, end < 0 ? row.length() : end).trim();
    }

    static long parseTime(String text, String loc) {
        long fast = parsePlainUtc(text);
        return fast >= 0 ? fast : parseWithFormatter(text, loc);
    }

    /** {@link #parseTime} by the formatter alone (every form it accepts, and the error for any other text). */
    static long parseWithFormatter(String text, String loc) {
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

    /**
     * The common form, {@code yyyy-MM-dd HH:mm:ss[.f…]} (up to 9 fraction digits, no offset: UTC), read digit by digit
     * — what every row of the Azure traces has, at a few ns instead of the formatter's microsecond — or -1 for any other
     * text (an offset, an out-of-range field, a malformed row, a year outside 1970–2200), which {@link #parseTime} then
     * parses with the formatter, so values and errors are the formatter's (AzureTimeTest compares the two).
     */
    static long parsePlainUtc(String t) {
        int n = t.length();
        if (n < 19
                || n == 20
                || n > 29
                || t.charAt(4) != '-'
                || t.charAt(7) != '-'
                || t.charAt(10) != ' '
                || t.charAt(13) != ':'
                || t.charAt(16) != ':'
                || (n > 19 && t.charAt(19) != '.')) {
            return -1;
        }
        int year = digits(t, 0, 4);
        int month = digits(t, 5, 7);
        int day = digits(t, 8, 10);
        int hour = digits(t, 11, 13);
        int minute = digits(t, 14, 16);
        int second = digits(t, 17, 19);
        int fraction = n > 19 ? digits(t, 20, n) : 0;
        if ((year | month | day | hour | minute | second | fraction) < 0 // a non-digit
                || year < 1970
                || year > 2200 // nanoseconds since 1970 stay far inside a long
                || month < 1
                || month > 12
                || day < 1
                || (day > 28 && day > lengthOfMonth(year, month))
                || hour > 23
                || minute > 59
                || second > 59) {
            return -1;
        }
        for (int i = n; i < 29; i++) {
            fraction *= 10; // to nanoseconds
        }
        long epochDay = java.time.LocalDate.of(year, month, day).toEpochDay();
        return ((epochDay * 86_400 + hour * 3_600L + minute * 60L + second) * 1_000_000_000L) + fraction;
    }

    /** The decimal value of {@code t[from, to)}, or -1 unless every character is an ASCII digit. */
    private static int digits(String t, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            int d = t.charAt(i) - '0';
            if (d < 0 || d > 9) {
                return -1;
            }
            v = v * 10 + d;
        }
        return v;
    }

    private static int lengthOfMonth(int year, int month) {
        return java.time.YearMonth.of(year, month).lengthOfMonth();
    }

    private int positive(String text, String field) {
        try {
            int v = Integer.parseInt(text);
            if (v < 1) {
                throw TraceFormatException.field(location(), field, "expected a positive integer, got " + text);
            }
            return v;
        } catch (NumberFormatException e) {
            throw TraceFormatException.field(location(), field, "expected a positive integer, got '" + text + "'");
        }
    }

    @Override
    public void close() {
        lines.close();
    }
}
