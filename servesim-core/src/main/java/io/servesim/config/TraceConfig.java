package io.servesim.config;

import java.util.List;

/**
 * A trace replay: which file and format, and how to replay it.
 *
 * @param format one of {@link #FORMATS}
 * @param path the trace file (relative paths are resolved against the working directory); {@code .gz} and
 *     {@code .zst} are decompressed
 * @param traceBlockSize tokens per Mooncake hash id
 * @param speedup divides inter-arrival times and session delays
 * @param startMs keep rows arriving at or after this trace time (ms after the first row), or null
 * @param endMs keep rows arriving before this trace time, or null
 * @param limit replay at most this many rows (requests), or null
 * @param arrival {@code trace} (authored timestamps) or {@code concurrency} (ignore timestamps)
 * @param concurrency requests, or active sessions, kept in flight with {@code arrival: concurrency}
 * @param outputTokensOverride replace every row's output length, or null
 * @param outputTokensCap cap every row's output length, or null
 * @param skipBadLines count and skip malformed rows (listed in summary.json) instead of failing
 */
public record TraceConfig(
        String format,
        String path,
        int traceBlockSize,
        double speedup,
        Double startMs,
        Double endMs,
        Long limit,
        String arrival,
        Integer concurrency,
        Integer outputTokensOverride,
        Integer outputTokensCap,
        boolean skipBadLines) {
    /** Trace formats. */
    public static final List<String> FORMATS = List.of("mooncake", "azure", "vllm_bench", "servesim");

    /** Arrival modes. */
    public static final List<String> ARRIVALS = List.of("trace", "concurrency");

    /** Validates every option. */
    public TraceConfig {
        Check.oneOf("format", format, FORMATS);
        Check.atLeast("trace_block_size", traceBlockSize, 1);
        Check.positive("speedup", speedup);
        if (startMs != null) {
            Check.atLeast("start_ms", startMs, 0.0);
        }
        if (endMs != null) {
            Check.atLeast("end_ms", endMs, startMs == null ? 0.0 : startMs);
        }
        if (limit != null) {
            Check.atLeast("limit", limit, 1);
            if (limit > Integer.MAX_VALUE) {
                throw new ConfigException("limit", "must be <= " + Integer.MAX_VALUE + ", got " + limit);
            }
        }
        Check.oneOf("arrival", arrival, ARRIVALS);
        if (arrival.equals("concurrency")) {
            Check.atLeast("concurrency", Check.present("concurrency", concurrency), 1);
        }
        if (outputTokensOverride != null) {
            Check.atLeast("output_tokens_override", outputTokensOverride, 1);
        }
        if (outputTokensCap != null) {
            Check.atLeast("output_tokens_cap", outputTokensCap, 1);
        }
    }
}
