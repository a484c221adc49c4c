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
 *   <li>CSV {@code request_id,ttft_ms,tpot_ms,e2e_ms} (an empty tpot_ms for single-token outputs).
 * </ul>
 *
 * @param ttftMs TTFT per request
 * @param tpotMs TPOT per request with at least 2 output tokens
 * @param e2eMs E2E per request
 * @param durationS first queued to last token (JSONL), or NaN (CSV)
 * @param outputTokens output tokens in total (JSONL), or -1
 */
@SuppressWarnings("ArrayRecordComponent") // sample arrays, never compared with equals
public record MeasuredRun(double[] ttftMs, double[] tpotMs, double[] e2eMs, double durationS, long outputTokens) {

    /** Reads a measured run, choosing the format by extension ({@code .csv}, else JSONL). */
    public static MeasuredRun read(Path path) {
        try {
            return path.toString().endsWith(".csv") ? readCsv(path) : readJsonl(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    private static MeasuredRun readJsonl(Path path) throws IOException {
        JsonMapper json = JsonMapper.builder().build();
        var ttft = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        var tpot = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        var e2e = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        double first = Double.POSITIVE_INFINITY;
        double last = Double.NEGATIVE_INFINITY;
        long outputs = 0;
        try (BufferedReader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                String loc = path + ":" + n;
                JsonNode row;
                try {
                    row = json.readTree(line);
                } catch (JacksonException e) {
                    throw new TraceFormatException(loc + ": not a JSON object: " + e.getOriginalMessage());
                }
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
                first = Math.min(first, queued);
                last = Math.max(last, lastToken);
                outputs += out;
            }
        }
        if (ttft.isEmpty()) {
            throw new TraceFormatException(path + ": no requests");
        }
        return new MeasuredRun(ttft.toDoubleArray(), tpot.toDoubleArray(), e2e.toDoubleArray(), last - first, outputs);
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
