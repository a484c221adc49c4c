package io.servesim.metrics;

import com.github.luben.zstd.ZstdOutputStream;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Streams requests.csv rows to a zstd-compressed file as requests end, instead of keeping them: rows are written in
 * request-id order (the same bytes as an in-memory run's requests.csv, compressed), through a reorder buffer that
 * holds only the rows of requests that ended before a lower-id one. The file is written to a temporary name and
 * renamed into place by {@link #close()}; the SHA-256 of the uncompressed bytes is kept for canonical.json.
 */
public final class RequestStream implements AutoCloseable {
    private final Path target;
    private final Path tmp;
    private final OutputStream out;
    private final MessageDigest sha;
    private final Int2ObjectOpenHashMap<byte[]> pending = new Int2ObjectOpenHashMap<>();
    private final StringBuilder row = new StringBuilder(256);
    private final String[] poolByWorker;
    private int nextId;
    private long rows;
    private int peakPending;
    private String digest;

    /** Opens a stream to {@code target} (e.g. {@code requests.csv.zst}) and writes the header. */
    public RequestStream(Path target) {
        this(target, false);
    }

    /** Opens a stream to {@code target} with the header of a run, disaggregated (P/D columns) or not. */
    public RequestStream(Path target, boolean disaggregated) {
        this(target, disaggregated, null);
    }

    /**
     * Opens a stream to {@code target} with the header of a run, disaggregated (P/D columns) or not, and with the
     * {@code pool} column when {@code poolByWorker} (each worker's pool name) is not null.
     */
    public RequestStream(Path target, boolean disaggregated, String[] poolByWorker) {
        this.target = target;
        this.poolByWorker = poolByWorker == null ? null : poolByWorker.clone();
        try {
            Path dir = target.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            this.tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
            this.out = new BufferedOutputStream(new ZstdOutputStream(Files.newOutputStream(tmp), 3), 1 << 16);
            this.sha = MessageDigest.getInstance("SHA-256");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        emit(RequestColumns.csvHeader(disaggregated, this.poolByWorker != null).getBytes(StandardCharsets.UTF_8));
    }

    /** Adds the row of one finished request. */
    public void add(RequestRecord record) {
        row.setLength(0);
        RequestColumns.appendCsv(record, poolByWorker, row);
        byte[] bytes = row.toString().getBytes(StandardCharsets.UTF_8);
        int id = record.requestId();
        if (id != nextId) {
            pending.put(id, bytes);
            peakPending = Math.max(peakPending, pending.size());
            return;
        }
        emit(bytes);
        nextId++;
        while (!pending.isEmpty()) {
            byte[] next = pending.remove(nextId);
            if (next == null) {
                break;
            }
            emit(next);
            nextId++;
        }
    }

    private void emit(byte[] bytes) {
        try {
            out.write(bytes);
            sha.update(bytes);
            rows++;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        }
    }

    /** Rows written so far, header included. */
    public long rowsWritten() {
        return rows;
    }

    /** The most rows held back at once waiting for a lower id. */
    public int peakPending() {
        return peakPending;
    }

    /** SHA-256 of the uncompressed CSV (available after {@link #close()}). */
    public String sha256() {
        return digest;
    }

    /** Writes any rows still held (ids with gaps before them, in id order), finishes the file and renames it. */
    @Override
    public void close() {
        if (digest != null) {
            return;
        }
        int[] ids = pending.keySet().toIntArray();
        java.util.Arrays.sort(ids);
        for (int id : ids) {
            emit(pending.get(id));
        }
        pending.clear();
        try {
            out.close();
            if (tmp.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.setPosixFilePermissions(
                        tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        }
        digest = HexFormat.of().formatHex(sha.digest());
    }
}
