package io.servesim.workload.trace;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A line source with 1-based line numbers, skipping blank lines, shared by the text readers. Lines end at
 * {@code \n} (a {@code \r} before it is dropped: CRLF files read the same) and are decoded strictly as UTF-8: a line
 * with bytes that are not UTF-8 is an error naming its line (skippable like any malformed row), never silently
 * replaced by U+FFFD — two session ids that differ only in invalid bytes would otherwise become one session. A
 * byte order mark before the first line is skipped; a line longer than {@link #MAX_LINE_BYTES} is an error.
 */
final class LineReader implements AutoCloseable {
    private final InputStream in;
    private final String source;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private final byte[] buf = new byte[1 << 16];
    private int pos;
    private int limit;
    private byte[] line = new byte[256];
    private long lineNumber;
    /** A read failed (truncated or corrupt file): the file ends there, whoever asks again. */
    private boolean broken;

    private boolean eof;

    /** The longest line read (bytes): a row of 10,000,000 token ids is about 80 MiB. */
    static final int MAX_LINE_BYTES = 128 << 20;

    LineReader(Path path) {
        this.in = TraceFiles.openStream(path);
        this.source = path.getFileName().toString();
    }

    String source() {
        return source;
    }

    long line() {
        return lineNumber;
    }

    /**
     * The next non-blank line, or null at the end. A read that fails (a truncated or corrupt compressed file, an I/O
     * error) throws once, naming the first line it could not read; after that the file has ended, so a caller that
     * skips bad lines stops there instead of failing on the same position forever.
     */
    String next() {
        if (broken) {
            return null;
        }
        try {
            while (true) {
                int n = readLine();
                if (n < 0) {
                    lineNumber++;
                    return null;
                }
                lineNumber++;
                // a UTF-8 byte order mark (Windows tools write one) before the first line is not part of it
                int from = lineNumber == 1
                                && n >= 3
                                && line[0] == (byte) 0xEF
                                && line[1] == (byte) 0xBB
                                && line[2] == (byte) 0xBF
                        ? 3
                        : 0;
                String s;
                try {
                    s = decode(from, n);
                } catch (CharacterCodingException e) {
                    throw new TraceFormatException(source + ":" + lineNumber + ": not valid UTF-8 (byte 0x"
                            + String.format(java.util.Locale.ROOT, "%02X", line[firstInvalid(n)] & 0xFF) + " at byte "
                            + (firstInvalid(n) + 1)
                            + " of the line)");
                }
                if (!s.isBlank()) {
                    return s;
                }
            }
        } catch (IOException | UncheckedIOException e) {
            broken = true;
            throw new TraceFormatException(
                    source + ":" + (lineNumber + 1) + ": cannot read (truncated or corrupt file?): " + e.getMessage());
        }
    }

    /**
     * The line's bytes {@code [from, n)} as text: an ASCII line (every row of the traces this project reads) is copied
     * as it is, since its bytes are its characters; a line with any other byte goes through the strict UTF-8 decoder,
     * which reports bytes that are not UTF-8.
     */
    private String decode(int from, int n) throws CharacterCodingException {
        for (int i = from; i < n; i++) {
            if (line[i] < 0) {
                return utf8.decode(ByteBuffer.wrap(line, from, n - from)).toString();
            }
        }
        return new String(line, from, n - from, StandardCharsets.ISO_8859_1); // equal to UTF-8 on ASCII bytes
    }

    /** Reads the next line's bytes (without its terminator) into {@link #line}; its length, or -1 at the end. */
    private int readLine() throws IOException {
        int n = 0;
        while (true) {
            if (pos == limit) {
                if (eof) {
                    return n == 0 ? -1 : trimCr(n);
                }
                limit = in.read(buf, 0, buf.length);
                pos = 0;
                if (limit <= 0) {
                    limit = 0;
                    eof = true;
                    continue;
                }
            }
            int start = pos;
            while (pos < limit && buf[pos] != '\n') {
                pos++;
            }
            int len = pos - start;
            if (n + len > MAX_LINE_BYTES) {
                broken = true;
                throw new TraceFormatException(source + ":" + (lineNumber + 1) + ": line longer than "
                        + (MAX_LINE_BYTES >> 20) + " MiB (not a trace row; a row of 10 M token ids is about 80 MiB)");
            }
            if (n + len > line.length) {
                line = java.util.Arrays.copyOf(line, Math.max(line.length * 2, n + len));
            }
            System.arraycopy(buf, start, line, n, len);
            n += len;
            if (pos < limit) {
                pos++; // the '\n'
                return trimCr(n);
            }
        }
    }

    private int trimCr(int n) {
        return n > 0 && line[n - 1] == '\r' ? n - 1 : n;
    }

    /** Index of the first byte of the line that starts an invalid UTF-8 sequence (for the message). */
    private int firstInvalid(int n) {
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder();
        for (int end = 1; end <= n; end++) {
            try {
                d.reset().decode(ByteBuffer.wrap(line, 0, end));
            } catch (CharacterCodingException e) {
                // the prefix up to end fails: the bad byte is the last one, or an incomplete sequence before it
                int i = end - 1;
                while (i > 0 && (line[i] & 0xC0) == 0x80) {
                    i--;
                }
                return i;
            }
        }
        return Math.max(0, n - 1);
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
