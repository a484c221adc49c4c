package io.servesim.html;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.report.ReportWriter;
import io.servesim.report.Summaries;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** report.html's structure: every chart present as inline SVG, summary cells equal to summary.json. */
class HtmlReportTest {
    static {
        System.setProperty("java.awt.headless", "true");
    }

    @TempDir
    Path tmp;

    static Path run(Path dir, String... sets) {
        List<String> all = new java.util.ArrayList<>(List.of(
                "workload.type=sessions",
                "workload.sessions.sessions=60",
                "workload.sessions.turns=3",
                "workload.sessions.migrate_fraction=0.3",
                "workload.arrival.rate=20",
                "cluster.workers=4",
                "cluster.router.policy=session_affinity",
                "engine.kv_cache.host_offload.num_host_blocks=2000",
                "engine.kvcr.enabled=true",
                "timing.type=polynomial"));
        all.addAll(List.of(sets));
        RunResult r = Simulation.run(ConfigLoader.fromYaml("", "t", all));
        ReportWriter.writeAll(r, Summaries.of(r), dir);
        return dir;
    }

    @Test
    void aDisaggregatedRun_addsTheTransferLinkAndThePdPhases_andNamesThePools() throws IOException {
        Path dir = tmp.resolve("pd");
        RunResult r = Simulation.run(ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "workload.type=sessions",
                        "workload.sessions.sessions=40",
                        "workload.sessions.turns=2",
                        "workload.arrival.rate=20",
                        "timing.type=polynomial",
                        "cluster.mode=disaggregated",
                        "cluster.prefill={workers: 1}",
                        "cluster.decode={workers: 3, router: {policy: least_loaded}}",
                        "output.timeseries_tick_s=0.5")));
        ReportWriter.writeAll(r, Summaries.of(r), dir);
        assertThat(Files.readAllLines(dir.resolve("timeseries.csv")).get(0)).endsWith(",pd_moving,pd_bytes_per_s");
        String html = Files.readString(HtmlReport.write(dir));
        for (String id : List.of("chart-pd-moving", "chart-pd-bytes", "chart-pd-phases", "chart-workers")) {
            assertThat(html).as(id).contains("<svg id='" + id + "'");
        }
        assertThat(html).contains("pools prefill 0–0 decode 1–3").contains("decode pool: landing → first token");
    }

    @Test
    void aTruncatedSummary_isAOneLineErrorNamingTheFile_notAJacksonStackTrace() throws IOException {
        Path dir = run(tmp.resolve("t"));
        Path summary = dir.resolve("summary.json");
        Files.writeString(summary, Files.readString(summary).substring(0, 200));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> HtmlReport.write(dir))
                .isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining("summary.json: not valid JSON (truncated?)");
    }

    @Test
    void report_hasEveryChartAsInlineSvg_andNoScriptOrNetwork() throws IOException {
        Path dir = run(tmp.resolve("a"));
        String html = Files.readString(HtmlReport.write(dir));
        for (String id : List.of(
                "chart-ttft-cdf",
                "chart-tpot-cdf",
                "chart-e2e-cdf",
                "chart-ttft-time",
                "chart-e2e-time",
                "chart-queue",
                "chart-kv",
                "chart-throughput",
                "chart-workers",
                "chart-workers-requests",
                "chart-reuse",
                "chart-kvcr-pull")) {
            assertThat(html).as(id).contains("<svg id='" + id + "'");
        }
        assertThat(html).doesNotContain("<script").doesNotContain("http://cdn").doesNotContain("https://");
        assertThat(html).contains("TTFT (ms)").contains("virtual time (s)"); // axis labels with units
        assertThat(html).startsWith("<!DOCTYPE html>").endsWith("</html>\n");
    }

    @Test
    void summaryCells_equalSummaryJson_theClientsViewIncluded() throws IOException {
        Path dir = run(tmp.resolve("b"), "output.client_frontend={overhead_ms: 2, per_request_us: 50}");
        String html = Files.readString(HtmlReport.write(dir));
        JsonNode s = JsonMapper.builder()
                .build()
                .readTree(dir.resolve("summary.json").toFile());
        Matcher m = Pattern.compile("data-key=\"([a-z_.0-9]+)\" data-value=\"([^\"]*)\">([^<]*)<")
                .matcher(html);
        int checked = 0;
        while (m.find()) {
            JsonNode n = s;
            for (String k : m.group(1).split("\\.", -1)) {
                n = n.get(k);
            }
            assertThat(m.group(2)).as(m.group(1)).isEqualTo(n.asString()); // the exact value
            if (n.isIntegralNumber() || !n.isNumber()) {
                assertThat(m.group(3)).as(m.group(1)).isEqualTo(n.asString());
            } else { // shown to three decimals, no more
                assertThat(m.group(3))
                        .as(m.group(1))
                        .isEqualTo(String.format(java.util.Locale.ROOT, "%.3f", n.doubleValue()));
            }
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(30 + 11 + 18); // the client's TTFT, TPOT and E2E rows too
        assertThat(html).contains("client TTFT").contains("data-key=\"client.e2e_ms.p99\"");
    }

    @Test
    void aRunWithClientTimeouts_showsHowManyTimedOut_asSummaryJsonCountsThem() throws IOException {
        Path dir = run(
                tmp.resolve("to"),
                "engine.kvcr.enabled=false",
                "engine.kv_cache.host_offload.num_host_blocks=0",
                "workload.client_timeout_s=0.5");
        String html = Files.readString(HtmlReport.write(dir));
        JsonNode s = JsonMapper.builder()
                .build()
                .readTree(dir.resolve("summary.json").toFile());
        assertThat(s.get("timed_out").asLong()).isPositive();
        assertThat(html)
                .contains("data-key=\"timed_out\" data-value=\""
                        + s.get("timed_out").asString() + "\"");
        // without the key in the config, neither summary.json nor the report has the row
        String plain = Files.readString(HtmlReport.write(run(tmp.resolve("plain"))));
        assertThat(plain).doesNotContain("data-key=\"timed_out\"");
    }

    @Test
    void reportIsReproducible_andWorksFromAStreamedRun() throws IOException {
        Path a = run(tmp.resolve("c"));
        String first = Files.readString(HtmlReport.write(a));
        String second = Files.readString(HtmlReport.write(a));
        assertThat(second).isEqualTo(first);
        Path dir = tmp.resolve("streamed");
        RunResult r = new Simulation(ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of("workload.synthetic.requests=200", "cluster.workers=2", "output.stream_requests=true")))
                .streamRequestsTo(dir.resolve("requests.csv.zst"))
                .run();
        ReportWriter.writeAll(r, Summaries.of(r), dir);
        assertThat(Files.readString(HtmlReport.write(dir))).contains("<svg id='chart-ttft-cdf'");
    }

    @Test
    void compare_tablesDeltasAgainstTheFirstRun_andOverlaysCdfs() throws IOException {
        Path a = run(tmp.resolve("base"));
        Path b = run(tmp.resolve("nokvcr"), "engine.kvcr.enabled=false");
        String table = CompareReport.table(List.of(a, b));
        assertThat(table)
                .contains("TTFT p99 (ms)")
                .contains("%")
                .contains("base")
                .contains("nokvcr");
        // each metric at the precision it warrants: counts whole, ms to the microsecond, ratios in per cent
        assertThat(table)
                .containsPattern("requests completed +[0-9]+ +[0-9]+ ")
                .containsPattern("preemptions +[0-9]+ +[0-9]+ ")
                .containsPattern("TTFT p99 \\(ms\\) +[0-9]+\\.[0-9]{3} ")
                .containsPattern("prefix reuse \\(first admission\\) +[0-9]+\\.[0-9]% ")
                .containsPattern("output tok/s +[0-9]+\\.[0-9] ");
        String html = Files.readString(CompareReport.write(List.of(a, b), tmp));
        assertThat(html).contains("<svg id='chart-ttft-cdf'").contains("<svg id='chart-e2e-cdf'");
        assertThat(html).contains("base").contains("nokvcr");
        assertThat(table).as("no client rows unless every run has the view").doesNotContain("client TTFT");
    }

    @Test
    void compare_addsTheClientsView_whenEveryRunHasOne() throws IOException {
        Path a = run(tmp.resolve("c2"), "output.client_frontend={overhead_ms: 2}");
        Path b = run(tmp.resolve("c5"), "output.client_frontend={overhead_ms: 5}");
        String table = CompareReport.table(List.of(a, b));
        // the same engine run, its tokens 3 ms later at the client: the engine's TTFT does not move, the client's does
        assertThat(table).containsPattern("TTFT mean \\(ms\\) +([0-9.]+) +\\1 +\\+0\\.0%");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("client TTFT mean \\(ms\\) +([0-9.]+) +([0-9.]+) ")
                .matcher(table);
        assertThat(m.find()).isTrue();
        assertThat(Double.parseDouble(m.group(2)) - Double.parseDouble(m.group(1)))
                .isCloseTo(3, org.assertj.core.data.Offset.offset(0.002));
        assertThat(CompareReport.table(List.of(a, run(tmp.resolve("none"))))).doesNotContain("client TTFT");
    }
}
