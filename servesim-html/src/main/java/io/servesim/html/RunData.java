package io.servesim.html;

import com.github.luben.zstd.ZstdInputStream;
import io.servesim.metrics.RequestColumns;
import io.servesim.metrics.RequestRecord;
import it.unimi.dsi.fastutil.doubles.DoubleArrayList;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a report needs from a finished run's output directory: summary.json, the effective config (from
 * canonical.json), per-request columns from requests.csv or requests.csv.zst, timeseries.csv and workers.csv.
 * Reading the files (not the in-memory result) lets {@code servesim report RUN_DIR} redraw any run.
 */
public final class RunData {
    final Path dir;
    final JsonNode summary;
    final JsonNode config;
    final String configSha256;
    final DoubleArrayList arrivalMs = new DoubleArrayList();
    final DoubleArrayList ttftMs = new DoubleArrayList();
    final DoubleArrayList tpotMs = new DoubleArrayList();
    final DoubleArrayList e2eMs = new DoubleArrayList();
    final DoubleArrayList pullMs = new DoubleArrayList();
    /** Disaggregated runs: arrival → prefill end, transfer time, landing → first token, of completed requests. */
    final DoubleArrayList pdPrefillMs = new DoubleArrayList();

    final DoubleArrayList pdTransferMs = new DoubleArrayList();
    final DoubleArrayList pdDecodeFirstTokenMs = new DoubleArrayList();
    long inputTokens;
    long g1Tokens;
    long g2Tokens;
    long remoteTokens;
    final Map<String, DoubleArrayList> timeseries = new HashMap<>();
    final DoubleArrayList workerBusyFraction = new DoubleArrayList();
    final DoubleArrayList workerRequests = new DoubleArrayList();

    private RunData(Path dir, JsonNode summary, JsonNode config, String configSha256) {
        this.dir = dir;
        this.summary = summary;
        this.config = config;
        this.configSha256 = configSha256;
    }

    /** Reads a run directory; fails naming the missing file. */
    public static RunData read(Path dir) {
        try {
            JsonMapper json = JsonMapper.builder().build();
            Path summaryFile = require(dir.resolve("summary.json"));
            JsonNode summary;
            try {
                summary = json.readTree(summaryFile.toFile());
            } catch (tools.jackson.core.JacksonException e) {
                throw new IOException(summaryFile + ": not valid JSON (truncated?): " + e.getOriginalMessage(), e);
            }
            JsonNode config = readConfig(require(dir.resolve("canonical.json")));
            String sha = java.util.HexFormat.of()
                    .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                            .digest(CONFIG_JSON.writeValueAsString(config).getBytes(StandardCharsets.UTF_8)));
            RunData d = new RunData(dir, summary, config, sha);
            try {
                d.readRequests();
                d.readTimeSeries();
                d.readWorkers();
            } catch (IllegalArgumentException
                    | ArithmeticException
                    | ArrayIndexOutOfBoundsException
                    | NullPointerException e) {
                throw new IOException(
                        "a file in " + dir + " is not a servesim output of this version (" + e.getMessage() + ")", e);
            }
            return d;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read run directory " + dir + ": " + e.getMessage(), e);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final JsonMapper CONFIG_JSON = JsonMapper.builder()
            .enable(tools.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(tools.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS) // the members after config
            .enable(tools.jackson.core.StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    /**
     * The {@code config} member of canonical.json, read with a streaming parser that stops after it (the requests
     * that follow may be millions of lines). Decimals keep their written form, so the config's digest is stable.
     */
    private static JsonNode readConfig(Path canonical) throws IOException {
        try (tools.jackson.core.JsonParser p = CONFIG_JSON.createParser(canonical.toFile())) {
            if (p.nextToken() != tools.jackson.core.JsonToken.START_OBJECT) {
                throw new IOException(canonical + ": not a JSON object");
            }
            while (p.nextToken() == tools.jackson.core.JsonToken.PROPERTY_NAME) {
                String name = p.currentName();
                p.nextToken();
                if (name.equals("config")) {
                    return CONFIG_JSON.readTree(p);
                }
                p.skipChildren();
            }
            throw new IOException(canonical + ": no \"config\" member");
        } catch (tools.jackson.core.JacksonException e) {
            throw new IOException(canonical + ": " + e.getOriginalMessage(), e);
        }
    }

    /** Reads only summary.json of a run directory. */
    public static JsonNode readSummary(Path dir) {
        try {
            return JsonMapper.builder()
                    .build()
                    .readTree(require(dir.resolve("summary.json")).toFile());
        } catch (tools.jackson.core.JacksonException e) {
            throw new UncheckedIOException(
                    new IOException(dir.resolve("summary.json") + ": " + e.getOriginalMessage()));
        }
    }

    private static Path require(Path p) {
        if (!Files.isRegularFile(p)) {
            throw new UncheckedIOException(new java.io.FileNotFoundException(
                    p + " is missing (is this a servesim run directory written by 'servesim replay'?)"));
        }
        return p;
    }

    /** The run directory. */
    public Path dir() {
        return dir;
    }

    /** summary.json. */
    public JsonNode summary() {
        return summary;
    }

    /** TTFT of completed requests (ms). */
    public double[] ttftMs() {
        return ttftMs.toDoubleArray();
    }

    /** TPOT of completed requests with at least 2 output tokens (ms). */
    public double[] tpotMs() {
        return tpotMs.toDoubleArray();
    }

    /** E2E of completed requests (ms). */
    public double[] e2eMs() {
        return e2eMs.toDoubleArray();
    }

    private void readRequests() throws IOException {
        Path csv = dir.resolve("requests.csv");
        Path zst = dir.resolve("requests.csv.zst");
        InputStream in;
        if (Files.isRegularFile(csv)) {
            in = Files.newInputStream(csv);
        } else if (Files.isRegularFile(zst)) {
            in = new ZstdInputStream(Files.newInputStream(zst));
        } else {
            return; // output.requests_csv: false: the per-request charts are left out
        }
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16)) {
            String header = r.readLine();
            if (header == null) {
                return;
            }
            RequestColumns.CsvReader rows = new RequestColumns.CsvReader(header);
            String line;
            while ((line = r.readLine()) != null) {
                RequestRecord q = rows.parse(line);
                if (!q.completed()) {
                    continue;
                }
                arrivalMs.add(q.arrivalNanos() / 1e6);
                ttftMs.add(q.ttftNanos() / 1e6);
                if (q.tpotPicos() >= 0) {
                    tpotMs.add(q.tpotMs());
                }
                e2eMs.add(q.e2eNanos() / 1e6);
                inputTokens += q.inputTokens();
                g1Tokens += q.g1Tokens();
                g2Tokens += q.g2Tokens();
                remoteTokens += q.remoteTokens();
                if (q.pullNanos() >= 0) {
                    pullMs.add(q.pullNanos() / 1e6);
                }
                if (q.pd() != null && q.pd().transferEndNanos() >= 0) {
                    pdPrefillMs.add((q.pd().prefillDoneNanos() - q.arrivalNanos()) / 1e6);
                    pdTransferMs.add(q.pd().transferNanos() / 1e6);
                    pdDecodeFirstTokenMs.add((q.firstTokenNanos() - q.pd().transferEndNanos()) / 1e6);
                }
            }
        }
    }

    private void readTimeSeries() throws IOException {
        Path p = dir.resolve("timeseries.csv");
        if (!Files.isRegularFile(p)) {
            return;
        }
        try (BufferedReader r = Files.newBufferedReader(p, StandardCharsets.UTF_8)) {
            String[] cols = r.readLine().split(",", -1);
            for (String c : cols) {
                timeseries.put(c, new DoubleArrayList());
            }
            String line;
            while ((line = r.readLine()) != null) {
                String[] f = line.split(",", -1);
                if (!f[1].equals("-1")) {
                    continue; // cluster rows only
                }
                for (int i = 0; i < cols.length; i++) {
                    timeseries.get(cols[i]).add(Double.parseDouble(f[i]));
                }
            }
        }
    }

    private void readWorkers() throws IOException {
        Path p = dir.resolve("workers.csv");
        if (!Files.isRegularFile(p)) {
            return;
        }
        List<String> lines = new ArrayList<>(Files.readAllLines(p, StandardCharsets.UTF_8));
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",", -1);
            workerRequests.add(Double.parseDouble(f[1]));
            workerBusyFraction.add(Double.parseDouble(f[3]));
        }
    }
}
