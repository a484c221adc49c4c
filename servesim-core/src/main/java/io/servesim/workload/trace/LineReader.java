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

    /** The next non-blank line, or null at the end. */
    String next() {
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
        } catch (IOException e) {
            throw new TraceFormatException(source + ":" + line + ": cannot read: " + e.getMessage());
        } catch (UncheckedIOException e) {
            throw new TraceFormatException(source + ":" + line + ": cannot read: " + e.getMessage());
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
