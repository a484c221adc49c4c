package io.servesim.html;

import io.servesim.report.AtomicFiles;
import io.servesim.sweep.PointResult;
import io.servesim.sweep.SweepOutput;
import io.servesim.sweep.SweepSpec;
import io.servesim.sweep.Sweeps;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** {@code sweep.html}: the Pareto chart, the capacity curves (bisect) and the top-10 table. */
public final class SweepHtml {
    private SweepHtml() {}

    /** Writes sweep.html into {@code dir}. */
    public static Path write(SweepSpec spec, Sweeps.Outcome outcome, Path dir) {
        List<PointResult> ok = new ArrayList<>();
        for (PointResult r : outcome.results()) {
            if (r.error() == null) {
                ok.add(r);
            }
        }
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>servesim sweep</title>");
        h.append("<style>body{font-family:system-ui,sans-serif;max-width:1220px;margin:24px auto;padding:0 16px}"
                + "table{border-collapse:collapse}th,td{padding:3px 8px;border-bottom:1px solid #e3e3e3;"
                + "font-size:13px;text-align:right}.chart svg{max-width:100%;height:auto}</style></head><body>\n");
        h.append("<h1>servesim sweep</h1>\n<p>")
                .append(outcome.results().size())
                .append(" points, search ")
                .append(spec.search())
                .append(", objective ")
                .append(spec.objective())
                .append(", SLO ");
        for (SweepSpec.Slo s : spec.slos()) {
            h.append(s.key()).append(" ≤ ").append(s.thresholdMs()).append(' ');
        }
        h.append("</p>\n");
        List<PointResult> front = SweepOutput.pareto(spec, ok);
        double[][] all = xy(spec, ok);
        double[][] pf = xy(spec, front);
        h.append("<div class=\"chart\">")
                .append(Charts.svg(
                        Charts.scatter(
                                "Pareto: " + spec.paretoY() + " vs " + spec.paretoX(),
                                spec.paretoX(),
                                spec.paretoY(),
                                List.of(
                                        new Charts.Line("all points", all[0], all[1]),
                                        new Charts.Line("Pareto front", pf[0], pf[1]))),
                        "chart-pareto"))
                .append("</div>\n");
        if (!outcome.capacities().isEmpty()) {
            List<Charts.Line> curves = new ArrayList<>();
            for (Sweeps.Capacity c : outcome.capacities()) {
                List<PointResult> pts = new ArrayList<>();
                for (PointResult r : ok) {
                    if (r.deployment() == c.deployment()) {
                        pts.add(r);
                    }
                }
                pts.sort(Comparator.comparingDouble(r -> load(r)));
                double[] x = new double[pts.size()];
                double[] y = new double[pts.size()];
                for (int i = 0; i < pts.size(); i++) {
                    x[i] = load(pts.get(i));
                    y[i] = pts.get(i).ttftP90Ms();
                }
                curves.add(new Charts.Line(String.join(" ", c.settings()) + " (d" + c.deployment() + ")", x, y));
            }
            h.append("<div class=\"chart\">")
                    .append(Charts.svg(
                            Charts.lines(
                                    "Capacity: TTFT p90 vs load per deployment",
                                    spec.loadPath(),
                                    "TTFT p90 (ms)",
                                    curves),
                            "chart-capacity"))
                    .append("</div>\n");
        }
        List<PointResult> top = new ArrayList<>(ok);
        boolean minimise = spec.objective().equals("cost_per_million_tokens");
        top.sort((a, b) -> {
            if (a.sloPass() != b.sloPass()) {
                return a.sloPass() ? -1 : 1;
            }
            int c = Double.compare(a.objective(), b.objective());
            return c != 0 ? (minimise ? c : -c) : Integer.compare(a.pointId(), b.pointId());
        });
        h.append("<h2>Top 10</h2>\n<table><tr><th>point</th><th>settings</th><th>SLO</th><th>")
                .append(spec.objective())
                .append("</th><th>TTFT p90 ms</th><th>TPOT p90 ms</th><th>E2E p99 ms</th><th>tok/s/GPU</th></tr>\n");
        for (PointResult r : top.subList(0, Math.min(10, top.size()))) {
            h.append(String.format(
                    Locale.ROOT,
                    "<tr><td>%d</td><td style=\"text-align:left\">%s</td><td>%s</td><td>%.4f</td><td>%.1f</td>"
                            + "<td>%.2f</td><td>%.1f</td><td>%.1f</td></tr>%n",
                    r.pointId(),
                    HtmlReport.esc(String.join(
                            " ", r.overrides().subList(2, r.overrides().size()))),
                    r.sloPass() ? "met" : "missed",
                    r.objective(),
                    r.ttftP90Ms(),
                    r.tpotP90Ms(),
                    r.e2eP99Ms(),
                    r.throughputPerGpu()));
        }
        h.append("</table>\n</body></html>\n");
        Path file = dir.resolve("sweep.html");
        AtomicFiles.writeString(file, h.toString());
        return file;
    }

    private static double load(PointResult r) {
        String last = r.overrides().get(r.overrides().size() - 1);
        return Double.parseDouble(last.substring(last.indexOf('=') + 1));
    }

    private static double[][] xy(SweepSpec spec, List<PointResult> rs) {
        double[] x = new double[rs.size()];
        double[] y = new double[rs.size()];
        for (int i = 0; i < rs.size(); i++) {
            x[i] = rs.get(i).metric(spec.paretoX());
            y[i] = rs.get(i).metric(spec.paretoY());
        }
        return new double[][] {x, y};
    }
}
