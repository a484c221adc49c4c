package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A trace replay: which file and format, and how to replay it.
 *
 * @param format the {@link TraceFormat}
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
 * @param sharedPrefix an approximate shared system prompt for rows without token or hash ids, or null (left out of
 *     written configs while null, so configs and canonical.json recorded before the key existed are unchanged)
 */
public record TraceConfig(
        TraceFormat format,
        String path,
        int traceBlockSize,
        double speedup,
        Double startMs,
        Double endMs,
        Long limit,
        Arrival arrival,
        Integer concurrency,
        Integer outputTokensOverride,
        Integer outputTokensCap,
        boolean skipBadLines,
        @JsonInclude(JsonInclude.Include.NON_NULL) SharedPrefixConfig sharedPrefix) {
    /** When first turns arrive ({@code workload.trace.arrival}). */
    public enum Arrival implements Named {
        /** Authored timestamps. */
        TRACE("trace", "at their authored timestamps (divided by speedup)"),
        /** Closed loop. */
        CONCURRENCY("concurrency", "ignore timestamps; keep concurrency requests or sessions in flight");

        private final String configName;
        private final String description;

        Arrival(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Arrival of(String name) {
            return Named.parse(Arrival.class, name);
        }

        @Override
        public String configName() {
            return configName;
        }

        @Override
        public String description() {
            return description;
        }
    }

    /** Validates every option. */
    public TraceConfig {
        Check.present("format", format);
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
        Check.present("arrival", arrival);
        if (arrival == Arrival.CONCURRENCY) {
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
