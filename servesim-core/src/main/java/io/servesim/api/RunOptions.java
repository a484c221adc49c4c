package io.servesim.api;

import io.servesim.run.Simulation;
import java.nio.file.Path;

/**
 * How to run a config: where per-request rows go when they are streamed instead of kept, and who watches progress.
 * Immutable; each {@code with…} returns a copy.
 *
 * @param requestsFile file the rows are streamed to ({@code requests.csv.zst}), or null to keep them in memory
 * @param progress called every {@code progressEveryEvents} events, or null
 * @param progressEveryEvents events between progress calls
 */
public record RunOptions(Path requestsFile, Simulation.ProgressListener progress, long progressEveryEvents) {
    /** Rows kept in memory, no progress. */
    public static RunOptions defaults() {
        return new RunOptions(null, null, 1 << 16);
    }

    /**
     * Streams per-request rows to {@code file} (zstd CSV, request-id order) as requests end, so memory does not grow
     * with the request count; {@link Result#requests()} is then empty.
     */
    public RunOptions streamRequestsTo(Path file) {
        return new RunOptions(file, progress, progressEveryEvents);
    }

    /** Calls {@code listener} every {@code everyEvents} events (it only reads; results do not depend on it). */
    public RunOptions progress(Simulation.ProgressListener listener, long everyEvents) {
        return new RunOptions(requestsFile, listener, Math.max(1, everyEvents));
    }
}
