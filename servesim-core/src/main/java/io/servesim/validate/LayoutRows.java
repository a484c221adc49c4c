package io.servesim.validate;

import io.servesim.workload.trace.TraceFormatException;
import it.unimi.dsi.fastutil.doubles.DoubleArrayList;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The per-request rows of a measured run folder's {@code measured.jsonl} ({@code ttft_ms}, {@code tpot_ms},
 * {@code e2e_ms}, {@code error}), kept in file order so they line up with {@code workload.jsonl}'s arrivals.
 * Failed rows ({@code error: true} or null latencies) are NaN.
 */
final class LayoutRows {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final double[] ttftMs;
    private final double[] tpotMs;
    private final double[] e2eMs;

    private LayoutRows(double[] ttftMs, double[] tpotMs, double[] e2eMs) {
        this.ttftMs = ttftMs;
        this.tpotMs = tpotMs;
        this.e2eMs = e2eMs;
    }

    /** The {@code arrival_s} of every row of a layout {@code workload.jsonl}. */
    static double[] arrivals(Path workload) {
        DoubleArrayList out = new DoubleArrayList();
        forEachRow(workload, (row, loc) -> out.add(number(row, "arrival_s", loc)));
        return out.toDoubleArray();
    }

    /** Reads {@code measured.jsonl}, which must have {@code rows} rows (one per workload row). */
    static LayoutRows read(Path measured, int rows) {
        DoubleArrayList ttft = new DoubleArrayList();
        DoubleArrayList tpot = new DoubleArrayList();
        DoubleArrayList e2e = new DoubleArrayList();
        forEachRow(measured, (row, loc) -> {
            boolean failed = row.has("error") && row.get("error").asBoolean();
            ttft.add(failed ? Double.NaN : optional(row, "ttft_ms", loc));
            tpot.add(failed ? Double.NaN : optional(row, "tpot_ms", loc));
            e2e.add(failed ? Double.NaN : optional(row, "e2e_ms", loc));
        });
        if (ttft.size() != rows) {
            throw new TraceFormatException(measured + ": has " + ttft.size() + " rows but workload.jsonl has " + rows
                    + " (expected one per request)");
        }
        return new LayoutRows(ttft.toDoubleArray(), tpot.toDoubleArray(), e2e.toDoubleArray());
    }

    /**
     * Reads vLLM's per-request timestamps ({@code queued_ts}, {@code first_token_ts}, {@code last_token_ts},
     * {@code output_toks}) into rows, and each row's queued time into {@code arrivalS} (seconds, as written).
     */
    static LayoutRows readTimestamps(Path measured, DoubleArrayList arrivalS) {
        DoubleArrayList ttft = new DoubleArrayList();
        DoubleArrayList tpot = new DoubleArrayList();
        DoubleArrayList e2e = new DoubleArrayList();
        forEachRow(measured, (row, loc) -> {
            double queued = number(row, "queued_ts", loc);
            double first = number(row, "first_token_ts", loc);
            double last = number(row, "last_token_ts", loc);
            double out = number(row, "output_toks", loc);
            arrivalS.add(queued);
            ttft.add((first - queued) * 1e3);
            tpot.add(out >= 2 ? (last - first) * 1e3 / (out - 1) : Double.NaN);
            e2e.add((last - queued) * 1e3);
        });
        return new LayoutRows(ttft.toDoubleArray(), tpot.toDoubleArray(), e2e.toDoubleArray());
    }

    /** Row {@code i}'s measured TTFT, ms (NaN when it failed). */
    double ttftMs(int i) {
        return ttftMs[i];
    }

    /** Row {@code i}'s measured TPOT, ms (NaN when it failed or has one output token). */
    double tpotMs(int i) {
        return tpotMs[i];
    }

    /** Row {@code i}'s measured E2E, ms (NaN when it failed). */
    double e2eMs(int i) {
        return e2eMs[i];
    }

    /** The successful rows whose arrival lies in [{@code fromS}, {@code toS}). */
    MeasuredRun select(double[] arrivalS, double fromS, double toS) {
        DoubleArrayList ttft = new DoubleArrayList();
        DoubleArrayList tpot = new DoubleArrayList();
        DoubleArrayList e2e = new DoubleArrayList();
        for (int i = 0; i < arrivalS.length; i++) {
            if (arrivalS[i] < fromS || arrivalS[i] >= toS || Double.isNaN(ttftMs[i]) || Double.isNaN(e2eMs[i])) {
                continue;
            }
            ttft.add(ttftMs[i]);
            e2e.add(e2eMs[i]);
            if (!Double.isNaN(tpotMs[i])) {
                tpot.add(tpotMs[i]);
            }
        }
        return new MeasuredRun(ttft.toDoubleArray(), tpot.toDoubleArray(), e2e.toDoubleArray(), Double.NaN, -1);
    }

    /** What {@link #forEachRow} hands each row to. */
    interface RowConsumer {
        /** Takes one row and its {@code file:line}. */
        void accept(JsonNode row, String location);
    }

    /** Parses each non-blank line of a JSONL file; a line that is not JSON fails with its {@code file:line}. */
    static void forEachRow(Path file, RowConsumer consumer) {
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                String loc = file + ":" + n;
                JsonNode row;
                try {
                    row = JSON.readTree(line);
                } catch (JacksonException e) {
                    throw new TraceFormatException(loc + ": not a JSON object: " + e.getOriginalMessage());
                }
                consumer.accept(row, loc);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static double number(JsonNode row, String key, String loc) {
        JsonNode v = row.get(key);
        if (v == null || !v.isNumber() || !(v.asDouble() >= 0)) {
            throw new TraceFormatException(loc + ": " + key + ": expected a number >= 0");
        }
        return v.asDouble();
    }

    private static double optional(JsonNode row, String key, String loc) {
        JsonNode v = row.get(key);
        if (v == null || v.isNull()) {
            return Double.NaN;
        }
        if (!v.isNumber() || !(v.asDouble() >= 0)) {
            throw new TraceFormatException(loc + ": " + key + ": expected a number >= 0 or null");
        }
        return v.asDouble();
    }
}
