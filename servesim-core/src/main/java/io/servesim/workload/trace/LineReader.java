package io.servesim.workload.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** A line source with 1-based line numbers, skipping blank lines, shared by the text readers. */
final class LineReader implements AutoCloseable {
    private final BufferedReader in;
    private final String source;
    private long line;
    /** A read failed (truncated or corrupt file): the file ends there, whoever asks again. */
    private boolean broken;

    LineReader(Path path) {
        this.in = TraceFiles.open(path);
        this.source = path.getFileName().toString();
    }

    String source() {
        return source;
    }

    long line() {
        return line;
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
                String s = in.readLine();
                line++;
                if (s == null) {
                    return null;
                }
                if (!s.isBlank()) {
                    return s;
                }
            }
        } catch (IOException | UncheckedIOException e) {
            broken = true;
            throw new TraceFormatException(
                    source + ":" + (line + 1) + ": cannot read (truncated or corrupt file?): " + e.getMessage());
        }
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
