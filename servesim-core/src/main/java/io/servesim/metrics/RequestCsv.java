package io.servesim.metrics;

import java.util.List;

/** The requests.csv format: its columns and one row per request (Locale.ROOT numbers, ms with 6 decimals). */
public final class RequestCsv {
    /** Columns, in order. */
    public static final List<String> COLUMNS = List.of(
            "request_id",
            "session_id",
            "turn",
            "worker",
            "rank",
            "arrival_ms",
            "first_scheduled_ms",
            "first_token_ms",
            "last_token_ms",
            "queue_ms",
            "ttft_ms",
            "tpot_ms",
            "e2e_ms",
            "input_tokens",
            "output_tokens",
            "cached_tokens",
            "g1_tokens",
            "g2_tokens",
            "remote_tokens",
            "preemptions",
            "status",
            "finish_reason",
            "hint_worker",
            "hint_rank",
            "hint_blocks",
            "migrated",
            "pull_ms",
            "pull_source",
            "restarts");

    /** The header line, with its newline. */
    public static final String HEADER = String.join(",", COLUMNS) + "\n";

    private RequestCsv() {}

    /** Appends record {@code i} of {@code log} as one CSV line (with its newline). */
    public static void appendRow(RequestLog log, int i, StringBuilder sb) {
        long arrival = log.arrivalNanos(i);
        long first = log.firstTokenNanos(i);
        long last = log.lastTokenNanos(i);
        long sched = log.firstScheduledNanos(i);
        int out = log.outputTokens(i);
        RequestStatus st = log.status(i);
        sb.append(log.requestId(i)).append(',');
        if (log.sessionId(i) >= 0) {
            sb.append(log.sessionId(i));
        }
        sb.append(',').append(log.turn(i));
        sb.append(',').append(log.worker(i));
        sb.append(',').append(log.rank(i));
        sb.append(',').append(Numbers.nanosAsMillis(arrival));
        sb.append(',').append(Numbers.nanosAsMillis(sched));
        sb.append(',').append(Numbers.nanosAsMillis(first));
        sb.append(',').append(Numbers.nanosAsMillis(last));
        sb.append(',').append(sched < 0 ? "" : Numbers.nanosAsMillis(sched - arrival));
        sb.append(',').append(first < 0 ? "" : Numbers.nanosAsMillis(first - arrival));
        sb.append(',');
        if (out >= 2 && first >= 0) {
            long gaps = out - 1L;
            sb.append(Numbers.nanosAsMillis(((last - first) * 2 + gaps) / (2 * gaps))); // rounded to the ns
        }
        sb.append(',').append(last < 0 ? "" : Numbers.nanosAsMillis(last - arrival));
        sb.append(',').append(log.inputTokens(i));
        sb.append(',').append(out);
        sb.append(',').append(log.cachedTokens(i));
        sb.append(',').append(log.cachedTokens(i) - log.g2Tokens(i) - log.remoteTokens(i));
        sb.append(',').append(log.g2Tokens(i));
        sb.append(',').append(log.remoteTokens(i));
        sb.append(',').append(log.preemptions(i));
        sb.append(',').append(st.status());
        sb.append(',').append(st.reason());
        sb.append(',');
        if (log.hintWorker(i) >= 0) {
            sb.append(log.hintWorker(i));
        }
        sb.append(',');
        if (log.hintRank(i) >= 0) {
            sb.append(log.hintRank(i));
        }
        sb.append(',').append(log.hintBlocks(i));
        sb.append(',').append(log.migrated(i));
        sb.append(',').append(Numbers.nanosAsMillis(log.pullNanos(i)));
        sb.append(',');
        if (log.pullSource(i) >= 0) {
            sb.append(log.pullSource(i));
        }
        sb.append(',').append(log.restarts(i));
        sb.append('\n');
    }
}
