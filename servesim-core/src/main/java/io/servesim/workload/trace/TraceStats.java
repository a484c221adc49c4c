package io.servesim.workload.trace;

import io.servesim.config.TraceFormat;
import io.servesim.kv.BlockHasher;
import io.servesim.metrics.LatencyDistribution;
import io.servesim.metrics.Stats;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

/**
 * Statistics of a trace file, streamed in one pass (memory grows with distinct lengths, sessions and blocks, not
 * rows).
 *
 * <p>Prefix-block reuse under an infinite cache: per row, the leading run of its blocks already seen in earlier
 * rows, summed over rows, divided by all blocks. Blocks are the row's hash ids (Mooncake, at the trace's block
 * size, last block possibly partial), or the chained hashes of the full blocks of its token ids at
 * {@code blockSize} (vLLM-bench), or {@code ceil(input / blockSize)} never-seen blocks for rows without prefix
 * information (Azure).
 *
 * @param rows rows read
 * @param firstTimestampNanos earliest timestamp, or -1 when no row has one
 * @param lastTimestampNanos latest timestamp, or -1
 * @param input prompt length statistics (tokens)
 * @param output output length statistics (tokens)
 * @param sessions distinct session ids
 * @param sessionRows rows that belong to a session
 * @param blocks blocks counted for reuse
 * @param reusedBlocks blocks in leading runs of already-seen blocks
 * @param blockSize the block size reuse was measured at (tokens)
 */
public record TraceStats(
        long rows,
        long firstTimestampNanos,
        long lastTimestampNanos,
        Stats input,
        Stats output,
        long sessions,
        long sessionRows,
        long blocks,
        long reusedBlocks,
        int blockSize) {

    /** Time from the first to the last arrival, in seconds. */
    public double spanSeconds() {
        return firstTimestampNanos < 0 ? 0 : (lastTimestampNanos - firstTimestampNanos) / 1e9;
    }

    /** Rows per second over the span (0 for a zero span). */
    public double arrivalRatePerSecond() {
        double s = spanSeconds();
        return s > 0 ? rows / s : 0;
    }

    /** Reused blocks / blocks. */
    public double prefixReuseRatio() {
        return blocks == 0 ? 0 : (double) reusedBlocks / blocks;
    }

    /**
     * Reads a whole trace.
     *
     * @param format the trace format
     * @param path the file
     * @param traceBlockSize tokens per Mooncake hash id
     * @param tokenBlockSize block size for token-id and prefix-less traces
     */
    public static TraceStats of(TraceFormat format, Path path, int traceBlockSize, int tokenBlockSize) {
        LatencyDistribution in = new LatencyDistribution().exactLimit(Long.MAX_VALUE); // few distinct lengths
        LatencyDistribution out = new LatencyDistribution().exactLimit(Long.MAX_VALUE);
        Set<String> sessions = new HashSet<>();
        LongOpenHashSet seen = new LongOpenHashSet();
        long rows = 0;
        long sessionRows = 0;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        long blocks = 0;
        long reused = 0;
        int measuredAt = format.usesTraceBlockSize() ? traceBlockSize : tokenBlockSize;
        TraceOrder order = new TraceOrder();
        try (TraceReader reader = TraceFormats.open(format, path, traceBlockSize)) {
            for (TraceRecord r = reader.next(); r != null; r = reader.next()) {
                order.check(r); // what a replay refuses, stats refuses too
                rows++;
                in.record(r.inputLength());
                out.record(r.outputLength());
                if (r.timestampNanos() >= 0) {
                    first = Math.min(first, r.timestampNanos());
                    last = Math.max(last, r.timestampNanos());
                }
                if (r.sessionId() != null) {
                    sessions.add(r.sessionId());
                    sessionRows++;
                }
                long[] ids = blockKeys(r, tokenBlockSize);
                if (ids == null) {
                    blocks += (r.inputLength() + (long) tokenBlockSize - 1) / tokenBlockSize;
                    continue;
                }
                blocks += ids.length;
                boolean leading = true;
                for (long id : ids) {
                    boolean wasSeen = !seen.add(id);
                    if (leading && wasSeen) {
                        reused++;
                    } else {
                        leading = false;
                    }
                }
            }
        }
        return new TraceStats(
                rows,
                first == Long.MAX_VALUE ? -1 : first,
                last == Long.MIN_VALUE ? -1 : last,
                in.stats(1.0),
                out.stats(1.0),
                sessions.size(),
                sessionRows,
                blocks,
                reused,
                measuredAt);
    }

    private static long[] blockKeys(TraceRecord r, int tokenBlockSize) {
        if (r.hashIds() != null) {
            return r.hashIds();
        }
        int[] t = r.inputTokenIds();
        if (t == null) {
            return null;
        }
        long[] keys = new long[t.length / tokenBlockSize];
        long parent = BlockHasher.ROOT;
        for (int b = 0; b < keys.length; b++) {
            parent = BlockHasher.hashBlock(parent, t, b * tokenBlockSize, tokenBlockSize);
            keys[b] = parent;
        }
        return keys;
    }
}
