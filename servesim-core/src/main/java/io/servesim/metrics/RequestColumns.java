package io.servesim.metrics;

import java.util.Comparator;
import java.util.List;

/**
 * The per-request columns, declared once: name, unit, meaning, and how each is written to {@code requests.csv}
 * and (for stored facts) to {@code canonical.json}. Derived latencies (queue, TTFT, TPOT, E2E) come from
 * {@link RequestRecord}'s methods, so every output computes them the same way. docs/metrics.md lists the same table.
 */
public final class RequestColumns {
    /** Writes one cell of a record. */
    @FunctionalInterface
    public interface Cell {
        /** Appends the cell's text (no separator). */
        void append(RequestRecord r, StringBuilder sb);
    }

    /**
     * One column.
     *
     * @param csvName the requests.csv header name
     * @param canonicalName the canonical.json key, or null when the column is derived (not stored there)
     * @param unit the unit ({@code ms}, {@code tokens}, {@code id}, …)
     * @param meaning how it is computed
     * @param csv the requests.csv cell
     * @param canonical the canonical.json value (JSON text), or null
     */
    public record Column(String csvName, String canonicalName, String unit, String meaning, Cell csv, Cell canonical) {}

    /** Every column in requests.csv order. */
    public static final List<Column> ALL = List.of(
            stored("request_id", "request_id", "id", "dense id in creation order", (r, sb) -> sb.append(r.requestId())),
            new Column(
                    "session_id",
                    "session_id",
                    "id",
                    "session id (empty / -1 for a standalone request)",
                    (r, sb) -> optional(r.sessionId(), sb),
                    (r, sb) -> sb.append(r.sessionId())),
            stored(
                    "turn",
                    "turn",
                    "index",
                    "turn within the session (0 for standalone)",
                    (r, sb) -> sb.append(r.turn())),
            stored("worker", "worker", "id", "worker that served it last (-1: none)", (r, sb) -> sb.append(r.worker())),
            stored(
                    "rank",
                    "rank",
                    "index",
                    "attention-DP rank within the worker (-1: none)",
                    (r, sb) -> sb.append(r.rank())),
            time("arrival", "arrival time", RequestRecord::arrivalNanos),
            time("first_scheduled", "first admission (empty: never)", RequestRecord::firstScheduledNanos),
            time("first_token", "first output token (empty: none)", RequestRecord::firstTokenNanos),
            time("last_token", "last output token (empty: none)", RequestRecord::lastTokenNanos),
            derived(
                    "queue_ms",
                    "ms",
                    "first_scheduled − arrival",
                    (r, sb) -> sb.append(Numbers.nanosAsMillis(r.queueNanos()))),
            derived(
                    "ttft_ms",
                    "ms",
                    "first_token − arrival",
                    (r, sb) -> sb.append(Numbers.nanosAsMillis(r.ttftNanos()))),
            derived(
                    "tpot_ms",
                    "ms",
                    "(last_token − first_token) / (output_tokens − 1), to the picosecond; empty below 2 tokens",
                    (r, sb) -> sb.append(Numbers.picosAsMillis(r.tpotPicos()))),
            derived("e2e_ms", "ms", "last_token − arrival", (r, sb) -> sb.append(Numbers.nanosAsMillis(r.e2eNanos()))),
            stored("input_tokens", "input_tokens", "tokens", "prompt tokens", (r, sb) -> sb.append(r.inputTokens())),
            stored(
                    "output_tokens",
                    "output_tokens",
                    "tokens",
                    "output tokens generated",
                    (r, sb) -> sb.append(r.outputTokens())),
            stored(
                    "cached_tokens",
                    "cached_tokens",
                    "tokens",
                    "prompt tokens not computed at first admission (G1 + G2 + remote)",
                    (r, sb) -> sb.append(r.cachedTokens())),
            stored(
                    "reported_cached_tokens",
                    "reported_cached_tokens",
                    "tokens",
                    "vLLM's num_cached_tokens: the hit of the last prefix lookup before the first token",
                    (r, sb) -> sb.append(r.reportedCachedTokens())),
            derived(
                    "g1_tokens",
                    "tokens",
                    "cached_tokens − g2_tokens − remote_tokens",
                    (r, sb) -> sb.append(r.g1Tokens())),
            stored(
                    "g2_tokens",
                    "g2_tokens",
                    "tokens",
                    "loaded from the G2 host tier",
                    (r, sb) -> sb.append(r.g2Tokens())),
            stored(
                    "remote_tokens",
                    "remote_tokens",
                    "tokens",
                    "pulled from another worker (KVCR)",
                    (r, sb) -> sb.append(r.remoteTokens())),
            stored("preemptions", "preemptions", "count", "times preempted", (r, sb) -> sb.append(r.preemptions())),
            new Column(
                    "status",
                    "status",
                    "enum",
                    "completed, rejected, incomplete, abandoned or timed_out",
                    (r, sb) -> sb.append(r.status().status()),
                    (r, sb) -> sb.append('"').append(r.status().status()).append('"')),
            new Column(
                    "finish_reason",
                    "finish_reason",
                    "enum",
                    "stop, max_model_len, prompt_too_long, no_worker, time_limit",
                    (r, sb) -> sb.append(r.status().reason()),
                    (r, sb) -> sb.append('"').append(r.status().reason()).append('"')),
            new Column(
                    "hint_worker",
                    "hint_worker",
                    "id",
                    "the session's previous worker when routed elsewhere (empty / -1: no hint)",
                    (r, sb) -> optional(r.hintWorker(), sb),
                    (r, sb) -> sb.append(r.hintWorker())),
            new Column(
                    "hint_rank",
                    "hint_rank",
                    "index",
                    "the hint's rank (empty / -1: no hint)",
                    (r, sb) -> optional(r.hintRank(), sb),
                    (r, sb) -> sb.append(r.hintRank())),
            stored(
                    "hint_blocks",
                    "hint_blocks",
                    "blocks",
                    "leading prompt blocks the hinted rank held",
                    (r, sb) -> sb.append(r.hintBlocks())),
            stored(
                    "migrated",
                    "migrated",
                    "bool",
                    "sent away from the session's previous worker on purpose",
                    (r, sb) -> sb.append(r.migrated())),
            new Column(
                    "pull_ms",
                    "pull_ns",
                    "ms",
                    "KVCR pull, staging to landing (empty / -1: none)",
                    (r, sb) -> sb.append(Numbers.nanosAsMillis(r.pullNanos())),
                    (r, sb) -> sb.append(r.pullNanos())),
            new Column(
                    "pull_source",
                    "pull_source",
                    "id",
                    "worker pulled from (empty / -1: none)",
                    (r, sb) -> optional(r.pullSource(), sb),
                    (r, sb) -> sb.append(r.pullSource())),
            stored(
                    "restarts",
                    "restarts",
                    "count",
                    "restarts from scratch after a worker failure",
                    (r, sb) -> sb.append(r.restarts())));

    /** The columns a disaggregated run's records add after {@link #ALL} (docs/pd.md). */
    public static final List<Column> PD = List.of(
            new Column(
                    "prefill_worker",
                    "prefill_worker",
                    "id",
                    "worker that ran the prompt (its decode worker for a local prefill; empty / -1: none)",
                    (r, sb) -> optional(r.pd().prefillWorker(), sb),
                    (r, sb) -> sb.append(r.pd().prefillWorker())),
            new Column(
                    "prefill_local",
                    "prefill_local",
                    "bool",
                    "the prompt ran on the decode worker (conditional disaggregation)",
                    (r, sb) -> sb.append(r.pd().localPrefill()),
                    (r, sb) -> sb.append(r.pd().localPrefill())),
            time(
                    "prefill_done",
                    "prefill step sampled its token; handed to the decode worker",
                    r -> r.pd().prefillDoneNanos()),
            time("transfer_start", "decode worker staged the KV pull", r -> r.pd().transferStartNanos()),
            time("transfer_end", "pulled KV landed on the decode worker", r -> r.pd().transferEndNanos()),
            derived(
                    "transfer_ms",
                    "ms",
                    "transfer_end − transfer_start",
                    (r, sb) -> sb.append(Numbers.nanosAsMillis(r.pd().transferNanos()))),
            stored(
                    "transfer_bytes",
                    "transfer_bytes",
                    "bytes",
                    "bytes the transfer charged",
                    (r, sb) -> sb.append(r.pd().transferBytes())),
            stored(
                    "transfer_tokens",
                    "transfer_tokens",
                    "tokens",
                    "prompt tokens the transfer moved",
                    (r, sb) -> sb.append(r.pd().transferTokens())),
            stored(
                    "reprefilled",
                    "reprefilled",
                    "bool",
                    "recomputed on the decode worker because the prefill worker failed",
                    (r, sb) -> sb.append(r.pd().reprefilled())));

    /** The columns stored in canonical.json, in key order. */
    public static final List<Column> CANONICAL = ALL.stream()
            .filter(c -> c.canonicalName() != null)
            .sorted(Comparator.comparing(Column::canonicalName))
            .toList();

    /** The columns stored in canonical.json for a disaggregated run's records, in key order. */
    public static final List<Column> CANONICAL_PD = java.util.stream.Stream.concat(ALL.stream(), PD.stream())
            .filter(c -> c.canonicalName() != null)
            .sorted(Comparator.comparing(Column::canonicalName))
            .toList();

    /** requests.csv header names, in order. */
    public static final List<String> CSV_NAMES =
            ALL.stream().map(Column::csvName).toList();

    /** The requests.csv header line, with its newline. */
    public static final String CSV_HEADER = String.join(",", CSV_NAMES) + "\n";

    /** requests.csv header names of a disaggregated run, in order. */
    public static final List<String> CSV_NAMES_PD = java.util.stream.Stream.concat(ALL.stream(), PD.stream())
            .map(Column::csvName)
            .toList();

    /** The requests.csv header line (with its newline) of a run, disaggregated or not. */
    public static String csvHeader(boolean disaggregated) {
        return disaggregated ? String.join(",", CSV_NAMES_PD) + "\n" : CSV_HEADER;
    }

    /**
     * The last requests.csv column of a run with aggregated {@code cluster.pools}: the name of the pool of the
     * request's {@code worker} (empty when it has none). Derived from {@code worker}, so not in canonical.json.
     */
    public static final String POOL = "pool";

    /** The requests.csv header line of a run, with the {@link #POOL} column when {@code pools}. */
    public static String csvHeader(boolean disaggregated, boolean pools) {
        String h = csvHeader(disaggregated);
        return pools ? h.substring(0, h.length() - 1) + "," + POOL + "\n" : h;
    }

    private RequestColumns() {}

    private static Column stored(String csv, String canonical, String unit, String meaning, Cell cell) {
        return new Column(csv, canonical, unit, meaning, cell, cell);
    }

    private static Column derived(String csv, String unit, String meaning, Cell cell) {
        return new Column(csv, null, unit, meaning, cell, null);
    }

    /** A time column: ms with 6 decimals in requests.csv (empty for -1), integer ns in canonical.json. */
    private static Column time(String name, String meaning, java.util.function.ToLongFunction<RequestRecord> nanos) {
        return new Column(
                name + "_ms",
                name + "_ns",
                "ms",
                meaning,
                (r, sb) -> sb.append(Numbers.nanosAsMillis(nanos.applyAsLong(r))),
                (r, sb) -> sb.append(nanos.applyAsLong(r)));
    }

    private static void optional(long id, StringBuilder sb) {
        if (id >= 0) {
            sb.append(id);
        }
    }

    /**
     * Appends one requests.csv line (with its newline), ending in the {@link #POOL} column when {@code poolByWorker}
     * (each worker's pool name) is not null.
     */
    public static void appendCsv(RequestRecord r, String[] poolByWorker, StringBuilder sb) {
        appendCsv(r, sb);
        if (poolByWorker != null) {
            sb.setLength(sb.length() - 1);
            sb.append(',');
            if (r.worker() >= 0) {
                sb.append(poolByWorker[r.worker()]);
            }
            sb.append('\n');
        }
    }

    /** Appends one requests.csv line (with its newline). */
    public static void appendCsv(RequestRecord r, StringBuilder sb) {
        for (int i = 0, n = ALL.size(); i < n; i++) {
            if (i > 0) {
                sb.append(',');
            }
            ALL.get(i).csv().append(r, sb);
        }
        if (r.pd() != null) {
            for (int i = 0, n = PD.size(); i < n; i++) {
                sb.append(',');
                PD.get(i).csv().append(r, sb);
            }
        }
        sb.append('\n');
    }

    /** Appends one canonical.json request object (sorted keys, no trailing separator). */
    public static void appendCanonical(RequestRecord r, StringBuilder sb) {
        sb.append('{');
        List<Column> columns = r.pd() == null ? CANONICAL : CANONICAL_PD;
        for (int i = 0, n = columns.size(); i < n; i++) {
            Column c = columns.get(i);
            if (i > 0) {
                sb.append(',');
            }
            sb.append('"').append(c.canonicalName()).append("\":");
            c.canonical().append(r, sb);
        }
        sb.append('}');
    }

    /**
     * Reads requests.csv rows back into records (the HTML report and {@code servesim report} read run directories
     * this way): columns are found by header name, so a row written by {@link #appendCsv} round-trips exactly.
     */
    public static final class CsvReader {
        private final int[] at;
        private final int[] pdAt;

        /** Prepares for rows under {@code header} (the first line of requests.csv); fails naming a missing column. */
        public CsvReader(String header) {
            List<String> names = List.of(header.split(",", -1));
            String[] needed = {
                "request_id",
                "session_id",
                "turn",
                "worker",
                "rank",
                "arrival_ms",
                "first_scheduled_ms",
                "first_token_ms",
                "last_token_ms",
                "input_tokens",
                "output_tokens",
                "cached_tokens",
                "reported_cached_tokens",
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
                "restarts"
            };
            at = new int[needed.length];
            for (int i = 0; i < needed.length; i++) {
                at[i] = names.indexOf(needed[i]);
                if (at[i] < 0) {
                    throw new IllegalArgumentException("requests.csv has no column '" + needed[i] + "'");
                }
            }
            String[] pdNeeded = {
                "prefill_worker",
                "prefill_local",
                "prefill_done_ms",
                "transfer_start_ms",
                "transfer_end_ms",
                "transfer_bytes",
                "transfer_tokens",
                "reprefilled"
            };
            int[] found = new int[pdNeeded.length];
            boolean any = false;
            for (int i = 0; i < pdNeeded.length; i++) {
                found[i] = names.indexOf(pdNeeded[i]);
                any |= found[i] >= 0;
            }
            for (int i = 0; i < pdNeeded.length && any; i++) {
                if (found[i] < 0) {
                    throw new IllegalArgumentException("requests.csv has no column '" + pdNeeded[i] + "'");
                }
            }
            pdAt = any ? found : null; // a disaggregated run's file
        }

        /** Parses one data row. */
        public RequestRecord parse(String line) {
            String[] f = line.split(",", -1);
            return new RequestRecord(
                    Integer.parseInt(f[at[0]]),
                    optionalLong(f[at[1]]),
                    Integer.parseInt(f[at[2]]),
                    Integer.parseInt(f[at[3]]),
                    Integer.parseInt(f[at[4]]),
                    Numbers.millisAsNanos(f[at[5]]),
                    Numbers.millisAsNanos(f[at[6]]),
                    Numbers.millisAsNanos(f[at[7]]),
                    Numbers.millisAsNanos(f[at[8]]),
                    Integer.parseInt(f[at[9]]),
                    Integer.parseInt(f[at[10]]),
                    Integer.parseInt(f[at[11]]),
                    Integer.parseInt(f[at[12]]),
                    Integer.parseInt(f[at[13]]),
                    Integer.parseInt(f[at[14]]),
                    Integer.parseInt(f[at[15]]),
                    RequestStatus.of(f[at[16]], f[at[17]]),
                    (int) optionalLong(f[at[18]]),
                    (int) optionalLong(f[at[19]]),
                    Integer.parseInt(f[at[20]]),
                    Boolean.parseBoolean(f[at[21]]),
                    Numbers.millisAsNanos(f[at[22]]),
                    (int) optionalLong(f[at[23]]),
                    Integer.parseInt(f[at[24]]),
                    pdAt == null
                            ? null
                            : new PdFacts(
                                    (int) optionalLong(f[pdAt[0]]),
                                    Boolean.parseBoolean(f[pdAt[1]]),
                                    Numbers.millisAsNanos(f[pdAt[2]]),
                                    Numbers.millisAsNanos(f[pdAt[3]]),
                                    Numbers.millisAsNanos(f[pdAt[4]]),
                                    Long.parseLong(f[pdAt[5]]),
                                    Integer.parseInt(f[pdAt[6]]),
                                    Boolean.parseBoolean(f[pdAt[7]])));
        }

        private static long optionalLong(String s) {
            return s.isEmpty() ? -1 : Long.parseLong(s);
        }
    }
}
