package io.servesim.workload.trace;

import com.github.luben.zstd.ZstdInputStream;
import com.github.luben.zstd.ZstdOutputStream;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/** Opens trace files, decompressing {@code .gz} and {@code .zst} transparently. */
public final class TraceFiles {
    private TraceFiles() {}

    /**
     * Opens a trace's bytes, decompressed ({@code .gz}, {@code .zst}); the caller decodes them strictly, line by line
     * ({@code LineReader}). A missing file is a {@link TraceFormatException} naming it.
     */
    static InputStream openStream(Path path) {
        try {
            InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16);
            String name = path.getFileName().toString();
            if (name.endsWith(".gz")) {
                in = new GZIPInputStream(in, 1 << 16);
            } else if (name.endsWith(".zst")) {
                in = new ZstdInputStream(in);
            }
            return in;
        } catch (NoSuchFileException e) {
            throw new TraceFormatException("trace file not found: " + path);
        } catch (IOException e) {
            throw new TraceFormatException("cannot read trace file " + path + ": " + e.getMessage());
        }
    }

    /** Wraps an output stream so that {@code .gz} / {@code .zst} targets are compressed. */
    public static OutputStream compressFor(Path target, OutputStream raw) {
        try {
            String name = target.getFileName().toString();
            if (name.endsWith(".gz")) {
                return new GZIPOutputStream(raw, 1 << 16);
            }
            if (name.endsWith(".zst")) {
                return new ZstdOutputStream(raw);
            }
            return raw;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
