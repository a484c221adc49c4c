package io.servesim.validate;

import io.servesim.workload.trace.TraceFormatException;
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
 * Per-request latencies of a measured serving run, in ms. Two inputs:
 *
 * <ul>
 *   <li>vLLM / LLMServingSim JSONL ({@code request_id, input_toks, output_toks, queued_ts, first_token_ts,
 *       last_token_ts}, seconds): TTFT = first_token − queued, TPOT = (last − first) / (n − 1) for n ≥ 2 output
 *       tokens, E2E = last − queued (the definitions of that benchmark's {@code summary.txt});
 *   <li>CSV {@code request_id,ttft_ms,tpot_ms,e2e_ms} (an empty tpot_ms for single-token outputs);
 *   <li>a measured-run folder's {@code measured.jsonl} ({@code request_id, ttft_ms, tpot_ms, e2e_ms, error}, ms;
 *       chosen when the first row carries {@code ttft_ms}): rows with {@code "error": true} are skipped and counted,
 *       a null {@code tpot_ms} (single-token outputs) leaves the request out of TPOT only.
 * </ul>
 *
 * @param ttftMs TTFT per request
 * @param tpotMs TPOT per request with at least 2 output tokens
 * @param e2eMs E2E per request
 * @param durationS first queued to last token (vLLM JSONL; a run folder with its workload), or NaN
 * @param outputTokens output tokens in total (vLLM JSONL; a run folder with its workload), or -1
 * @param failedRequests requests the measurement marks failed, left out of every sample
 */
@SuppressWarnings("ArrayRecordComponent") // sample arrays, never compared with equals
public record MeasuredRun(
        double[] ttftMs, double[] tpotMs, double[] e2eMs, double durationS, long outputTokens, int failedRequests) {

    /** A measured run without failed requests. */
    public MeasuredRun(double[] ttftMs, double[] tpotMs, double[] e2eMs, double durationS, long outputTokens) {
        this(ttftMs, tpotMs, e2eMs, durationS, outputTokens, 0);
    }

    /**
     * Reads a measured run, choosing the format by extension ({@code .csv}, else JSONL: a run folder's
     * {@code measured.jsonl} when the first row carries {@code ttft_ms}, else vLLM's timestamps).
     */
    public static MeasuredRun read(Path path) {
        try {
            if (path.toString().endsWith(".csv")) {
                return readCsv(path);
            }
            return carriesLatencies(path) ? readRunLayout(path, null, "") : readJsonl(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    private static boolean carriesLatencies(Path path) throws IOException {
        try (BufferedReader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    try {
                        return JSON.readTree(line).has("ttft_ms");
                    } catch (JacksonException e) {
                        return false; // the chosen reader reports it with its line
                    }
                }
            }
        }
        return false;
    }

    /**
     * Reads a measured-run folder's {@code measured.jsonl}; with its {@code workload.jsonl} (same rows, same order)
     * also the output throughput terms: output tokens of the successful requests over first arrival (the row's
     * {@code queued_s} when given, else the workload's {@code arrival_s}) to last token.
     *
     * @param measured the measured.jsonl
     * @param workload the run's workload.jsonl, or null
     * @param prefix what error locations start with, before the file name (e.g. {@code run x: }); empty for the
     *     files' full paths
     */
    public static MeasuredRun readRunLayout(Path measured, Path workload, String prefix) {
        try {
            return new LayoutReader(measured, workload, prefix).read();
        } catch (IOException e) {
            throw new UncheckedIOException(prefix + "cannot read " + measured + ": " + e.getMessage(), e);
        }
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The run-layout reader: one measured row per line, joined with the workload row in the same position. */
    private static final class LayoutReader {
        private final Path measured;
        private final Path workload;
        private final String prefix;

        LayoutReader(Path measured, Path workload, String prefix) {
            this.measured = measured;
            this.workload = workload;
            this.prefix = prefix;
        }

        private String where(Path file, int line) {
            return (prefix.isEmpty() ? file.toString() : prefix + file.getFileName()) + ":" + line;
        }

        MeasuredRun read() throws IOException {
            var ttft = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
            var tpot = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
            var e2e = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
            int failed = 0;
            double first = Double.POSITIVE_INFINITY;
            double last = Double.NEGATIVE_INFINITY;
            long outputs = 0;
            BufferedReader w = workload == null ? null : Files.newBufferedReader(workload, StandardCharsets.UTF_8);
            try (BufferedReader r = Files.newBufferedReader(measured, StandardCharsets.UTF_8)) {
                String line;
                int n = 0;
                int[] wn = {0};
                while ((line = r.readLine()) != null) {
                    n++;
                    if (line.isBlank()) {
                        continue;
                    }
                    String loc = where(measured, n);
                    JsonNode row = object(line, loc);
                    JsonNode work = null;
                    String workLoc = null;
                    if (w != null) {
                        String wl = nextRow(w, wn);
                        if (wl == null) {
                            throw new TraceFormatException(
                                    loc + ": no matching row in " + workload.getFileName() + " (it has fewer rows)");
                        }
                        workLoc = where(workload, wn[0]);
                        work = object(wl, workLoc);
                        JsonNode id = row.get("request_id");
                        JsonNode workId = work.get("request_id");
                        if (id != null && workId != null && !id.equals(workId)) {
                            throw TraceFormatException.field(
                                    loc,
                                    "request_id",
                                    "is " + id + " but " + workload.getFileName() + ":" + wn[0] + " has " + workId);
                        }
                    }
                    JsonNode error = row.get("error");
                    if (error != null && !error.isNull() && !error.isBoolean()) {
                        throw TraceFormatException.field(loc, "error", "expected true or false, got " + error);
                    }
                    if (error != null && error.asBoolean(false)) {
                        failed++;
                        continue;
                    }
                    double t = latency(row, "ttft_ms", loc);
                    double e = latency(row, "e2e_ms", loc);
                    JsonNode tp = row.get("tpot_ms");
                    if (tp != null && !tp.isNull()) {
                        tpot.add(latency(row, "tpot_ms", loc));
                    }
                    ttft.add(t);
                    e2e.add(e);
                    if (work != null) {
                        JsonNode queued = row.get("queued_s");
                        double arrival = queued != null && queued.isNumber()
                                ? queued.asDouble()
                                : latency(work, "arrival_s", workLoc);
                        JsonNode out = work.get("output_tokens");
                        if (out == null || !out.isIntegralNumber() || out.asLong() < 1) {
                            throw TraceFormatException.field(
                                    workLoc, "output_tokens", "expected a positive integer, got " + out);
                        }
                        first = Math.min(first, arrival);
                        last = Math.max(last, arrival + e / 1e3);
                        outputs += out.asLong();
                    }
                }
                if (w != null) {
                    if (nextRow(w, wn) != null) {
                        throw new TraceFormatException(where(workload, wn[0]) + ": no matching row in "
                                + measured.getFileName() + " (it has fewer rows)");
                    }
                }
            } finally {
                if (w != null) {
                    w.close();
                }
            }
            if (ttft.isEmpty()) {
                throw new TraceFormatException(
                        (prefix.isEmpty() ? measured.toString() : prefix + measured.getFileName())
                                + ": no successful requests" + (failed > 0 ? " (" + failed + " failed)" : ""));
            }
            boolean joined = workload != null && last > first;
            return new MeasuredRun(
                    ttft.toDoubleArray(),
                    tpot.toDoubleArray(),
                    e2e.toDoubleArray(),
                    joined ? last - first : Double.NaN,
                    joined ? outputs : -1,
                    failed);
        }

        private static JsonNode object(String line, String loc) {
            JsonNode row;
            try {
                row = JSON.readTree(line);
            } catch (JacksonException e) {
                throw new TraceFormatException(loc + ": not a JSON object: " + e.getOriginalMessage());
            }
            if (row == null || !row.isObject()) {
                throw new TraceFormatException(loc + ": expected a JSON object per line");
            }
            return row;
        }

        private static double latency(JsonNode row, String key, String loc) {
            JsonNode v = row.get(key);
            if (v == null || !v.isNumber()) {
                throw TraceFormatException.field(loc, key, "expected a number" + (v == null ? "" : ", got " + v));
            }
            double d = v.asDouble();
            if (!(d >= 0) || Double.isInfinite(d)) {
                throw TraceFormatException.field(loc, key, "expected a number >= 0, got " + v);
            }
            return d;
        }
    }

    /** The next non-blank line of {@code r} (or null at its end), counting every line read in {@code lineNo[0]}. */
    private static String nextRow(BufferedReader r, int[] lineNo) throws IOException {
        String line;
        do {
            line = r.readLine();
            lineNo[0]++;
        } while (line != null && line.isBlank());
        return line;
    }

    private static MeasuredRun readJsonl(Path path) {
        var ttft = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        var tpot = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        var e2e = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        double[] span = {Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}; // first queued, last token
        long[] outputs = {0};
        LayoutRows.forEachRow(path, (row, loc) -> {
            double queued = number(row, "queued_ts", loc);
            double firstToken = number(row, "first_token_ts", loc);
            double lastToken = number(row, "last_token_ts", loc);
            long out = (long) number(row, "output_toks", loc);
            if (firstToken < queued || lastToken < firstToken || out < 1) {
                throw new TraceFormatException(
                        loc + ": expected queued_ts <= first_token_ts <= last_token_ts and output_toks >= 1");
            }
            ttft.add((firstToken - queued) * 1e3);
            e2e.add((lastToken - queued) * 1e3);
            if (out >= 2) {
                tpot.add((lastToken - firstToken) * 1e3 / (out - 1));
            }
            span[0] = Math.min(span[0], queued);
            span[1] = Math.max(span[1], lastToken);
            outputs[0] += out;
        });
        if (ttft.isEmpty()) {
            throw new TraceFormatException(path + ": no requests");
        }
        return new MeasuredRun(
                ttft.toDoubleArray(), tpot.toDoubleArray(), e2e.toDoubleArray(), span[1] - span[0], outputs[0]);
    }

    private static double number(JsonNode row, String key, String loc) {
        JsonNode v = row.get(key);
        if (v == null || !v.isNumber()) {
            throw new TraceFormatException(loc + ": " + key + ": expected a number");
        }
        return v.asDouble();
    }

    private static MeasuredRun readCsv(Path path) throws IOException {
        var ttft = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        var tpot = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        var e2e = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        try (BufferedReader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String header = r.readLine();
            if (header == null || !header.strip().equals("request_id,ttft_ms,tpot_ms,e2e_ms")) {
                throw new TraceFormatException(path + ":1: expected the header request_id,ttft_ms,tpot_ms,e2e_ms");
            }
            String line;
            int n = 1;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.split(",", -1);
                if (f.length != 4) {
                    throw new TraceFormatException(path + ":" + n + ": expected 4 fields, got " + f.length);
                }
                ttft.add(parse(f[1], "ttft_ms", path, n));
                if (!f[2].isBlank()) {
                    tpot.add(parse(f[2], "tpot_ms", path, n));
                }
                e2e.add(parse(f[3], "e2e_ms", path, n));
            }
        }
        if (ttft.isEmpty()) {
            throw new TraceFormatException(path + ": no requests");
        }
        return new MeasuredRun(ttft.toDoubleArray(), tpot.toDoubleArray(), e2e.toDoubleArray(), Double.NaN, -1);
    }

    private static double parse(String s, String field, Path path, int line) {
        try {
            double v = Double.parseDouble(s.strip());
            if (!(v >= 0) || Double.isInfinite(v)) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new TraceFormatException(
                    path + ":" + line + ": " + field + ": expected a number >= 0, got '" + s + "'");
        }
    }
}
