package io.servesim.workload.trace;

import java.io.Closeable;

/** Streams the rows of one trace file, in file order; never loads the whole file. */
public interface TraceReader extends Closeable {
    /**
     * The next row, or null at the end of the file.
     *
     * @throws TraceFormatException for a malformed row (the reader stays usable: the next call reads the next row)
     */
    TraceRecord next();

    /** Closes the file. */
    @Override
    void close();
}
