package io.servesim.html;

import io.servesim.report.AtomicFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/**
 * {@code servesim compare RUN_A RUN_B ...}: key metrics side by side with deltas against the first run, and
 * {@code compare.html} overlaying the runs' TTFT, TPOT and E2E CDFs.
 */
public final class CompareReport {
    /** Label, summary.json path and how the value is printed: count, ms (to the microsecond), rate, or ratio (%). */
    static final String[][] METRICS = {
        {"requests completed", "completed", "count"},
        {"TTFT mean (ms)", "ttft_ms.mean", "ms"},
        {"TTFT p90 (ms)", "ttft_ms.p90", "ms"},
        {"TTFT p99 (ms)", "ttft_ms.p99", "ms"},
        {"TPOT mean (ms)", "tpot_ms.mean", "ms"},
        {"TPOT p99 (ms)", "tpot_ms.p99", "ms"},
        {"ITL p99 (ms)", "itl_ms.p99", "ms"},
        {"E2E mean (ms)", "e2e_ms.mean", "ms"},
        {"E2E p99 (ms)", "e2e_ms.p99", "ms"},
        {"output tok/s", "output_throughput_tok_s", "rate"},
        {"request/s", "request_throughput_rps", "rate"},
        {"prefix reuse (first admission)", "first_admission_prefix_reuse_ratio", "ratio"},
        {"preemptions", "preemptions", "count"}
    };

    /** Rows added when every run reports the client's view ({@code output.client_frontend}; docs/metrics.md). */
    static final String[][] CLIENT_METRICS = {
        {"client TTFT mean (ms)", "client.ttft_ms.mean", "ms"},
        {"client TTFT p99 (ms)", "client.ttft_ms.p99", "ms"},
        {"client TPOT mean (ms)", "client.tpot_ms.mean", "ms"},
        {"client E2E mean (ms)", "client.e2e_ms.mean", "ms"}
    };

    /** A value as the console table prints it: the precision its metric warrants (summary.json keeps them all). */
    static String cell(double v, String kind) {
        return switch (kind) {
            case "count" -> String.format(Locale.ROOT, "%d", Math.round(v));
            case "rate" -> String.format(Locale.ROOT, "%.1f", v);
            case "ratio" -> String.format(Locale.ROOT, "%.1f%%", v * 100);
            default -> String.format(Locale.ROOT, "%.3f", v);
        };
    }

    private CompareReport() {}

    static double value(JsonNode summary, String path) {
        JsonNode n = summary;
        for (String k : path.split("\\.", -1)) {
            n = n.get(k);
        }
        return n.asDouble();
    }

    /**
     * The console table: one column per run, with % deltas against the first; the client's view too when every run
     * has one.
     */
    public static String table(List<Path> runs) {
        List<JsonNode> s = new ArrayList<>();
        for (Path r : runs) {
            s.add(RunData.readSummary(r));
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-32s", "metric"));
        for (int i = 0; i < runs.size(); i++) {
            sb.append(String.format(Locale.ROOT, " %14s", label(runs.get(i))));
            if (i > 0) {
                sb.append(String.format(Locale.ROOT, " %9s", "delta"));
            }
        }
        sb.append('\n');
        List<String[]> rows = new ArrayList<>(List.of(METRICS));
        if (s.stream().allMatch(x -> x.has("client"))) {
            rows.addAll(List.of(CLIENT_METRICS));
        }
        for (String[] m : rows) {
            sb.append(String.format(Locale.ROOT, "%-32s", m[0]));
            double base = value(s.get(0), m[1]);
            for (int i = 0; i < runs.size(); i++) {
                double v = value(s.get(i), m[1]);
                sb.append(String.format(Locale.ROOT, " %14s", cell(v, m[2])));
                if (i > 0) {
                    sb.append(
                            base == 0
                                    ? String.format(Locale.ROOT, " %9s", "-")
                                    : String.format(Locale.ROOT, " %+8.1f%%", (v - base) / base * 100));
                }
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static String label(Path run) {
        String name = run.toAbsolutePath().normalize().getFileName().toString();
        return name.length() > 14 ? name.substring(0, 14) : name;
    }

    /** Writes compare.html into {@code out}: the table and the overlaid CDFs. */
    public static Path write(List<Path> runs, Path out) {
        List<RunData> data = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Path r : runs) {
            data.add(RunData.read(r));
            String name = r.toAbsolutePath().normalize().getFileName().toString();
            String unique = name;
            for (int k = 2; names.contains(unique); k++) {
                unique = name + " (" + k + ")"; // the same directory twice, or two runs named alike
            }
            names.add(unique);
        }
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>servesim compare</title>");
        h.append("<style>body{font-family:system-ui,sans-serif;max-width:1220px;margin:24px auto;padding:0 16px}"
                + "pre{font-size:13px}.chart svg{max-width:100%;height:auto}</style></head><body>\n");
        h.append("<h1>servesim compare</h1>\n<pre>")
                .append(HtmlReport.esc(table(runs)))
                .append("</pre>\n");
        String[][] charts = {{"TTFT", "TTFT (ms)"}, {"TPOT", "TPOT (ms)"}, {"E2E", "E2E (ms)"}};
        for (String[] c : charts) {
            List<double[]> samples = new ArrayList<>();
            for (RunData d : data) {
                samples.add(
                        switch (c[0]) {
                            case "TTFT" -> d.ttftMs();
                            case "TPOT" -> d.tpotMs();
                            default -> d.e2eMs();
                        });
            }
            h.append("<div class=\"chart\">")
                    .append(Charts.svg(
                            Charts.cdf(c[0] + " distribution", c[1], names, samples),
                            "chart-" + c[0].toLowerCase(Locale.ROOT) + "-cdf"))
                    .append("</div>\n");
        }
        h.append("</body></html>\n");
        Path file = out.resolve("compare.html");
        AtomicFiles.writeString(file, h.toString());
        return file;
    }
}
