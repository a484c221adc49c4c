package io.servesim.report;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Writes output files atomically: to a temporary file in the same directory, then renamed over the target. */
public final class AtomicFiles {
    /** Writes text to a writer; may throw IOException. */
    @FunctionalInterface
    public interface Body {
        /** Writes the content. */
        void write(Writer out) throws IOException;
    }

    private AtomicFiles() {}

    /** Writes {@code target} atomically with UTF-8 text produced by {@code body}. */
    public static void write(Path target, Body body) {
        writeStream(target, out -> {
            BufferedWriter w = new BufferedWriter(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8));
            body.write(w);
            w.flush();
        });
    }

    /** Writes bytes to a stream; may throw IOException. */
    @FunctionalInterface
    public interface StreamBody {
        /** Writes the content. */
        void write(java.io.OutputStream out) throws IOException;
    }

    /** Writes {@code target} atomically with bytes produced by {@code body}. */
    public static void writeStream(Path target, StreamBody body) {
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
            try (java.io.OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16)) {
                body.write(out);
            }
            readable(tmp);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: the failure above is what matters
                }
            }
        }
    }

    /** Temporary files are created owner-only; a report is an ordinary file: rw-r--r-- where POSIX applies. */
    public static void readable(Path file) throws IOException {
        if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        }
    }

    /** Deletes a file if it exists. */
    public static void delete(Path target) {
        try {
            Files.deleteIfExists(target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + target + ": " + e.getMessage(), e);
        }
    }

    /** Writes a string atomically. */
    public static void writeString(Path target, String content) {
        write(target, w -> w.write(content));
    }
}
