package io.servesim.html;

import com.github.luben.zstd.ZstdInputStream;
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
            JsonNode summary = json.readTree(summaryFile.toFile());
            String canonical = Files.readString(require(dir.resolve("canonical.json")));
            int end = canonical.indexOf(",\n\"requests\"");
            String configJson = canonical.substring("{\"config\":".length(), end);
            JsonNode config = json.readTree(configJson);
            String sha = java.util.HexFormat.of()
                    .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                            .digest(configJson.getBytes(StandardCharsets.UTF_8)));
            RunData d = new RunData(dir, summary, config, sha);
            try {
                d.readRequests();
                d.readTimeSeries();
                d.readWorkers();
            } catch (NumberFormatException | ArrayIndexOutOfBoundsException | NullPointerException e) {
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
            List<String> cols = List.of(header.split(","));
            int arrival = cols.indexOf("arrival_ms");
            int ttft = cols.indexOf("ttft_ms");
            int tpot = cols.indexOf("tpot_ms");
            int e2e = cols.indexOf("e2e_ms");
            int status = cols.indexOf("status");
            int input = cols.indexOf("input_tokens");
            int g1 = cols.indexOf("g1_tokens");
            int g2 = cols.indexOf("g2_tokens");
            int remote = cols.indexOf("remote_tokens");
            int pull = cols.indexOf("pull_ms");
            String line;
            while ((line = r.readLine()) != null) {
                String[] f = line.split(",", -1);
                if (!f[status].equals("completed")) {
                    continue;
                }
                arrivalMs.add(Double.parseDouble(f[arrival]));
                ttftMs.add(Double.parseDouble(f[ttft]));
                if (!f[tpot].isEmpty()) {
                    tpotMs.add(Double.parseDouble(f[tpot]));
                }
                e2eMs.add(Double.parseDouble(f[e2e]));
                inputTokens += Long.parseLong(f[input]);
                g1Tokens += Long.parseLong(f[g1]);
                g2Tokens += Long.parseLong(f[g2]);
                remoteTokens += Long.parseLong(f[remote]);
                if (!f[pull].isEmpty()) {
                    pullMs.add(Double.parseDouble(f[pull]));
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
