package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.report.ReportWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ReplayCommandTest {
    private static final int REQUESTS = 50;

    /** A small, fast config: 50 synthetic requests on 2 workers with fixed step times. */
    private static final String SMALL = """
            workload:
              seed: 11
              type: synthetic
              synthetic:
                requests: %d
                input_tokens: {type: uniform, min: 32, max: 96}
                output_tokens: {type: fixed, value: 8}
                shared_prefix_tokens: 32
              arrival:
                type: poisson
                rate: 200.0
            cluster:
              workers: 2
              router:
                policy: least_loaded
            engine:
              kv_cache:
                num_gpu_blocks: 512
            timing:
              type: fixed
              fixed:
                prefill_ms: 5.0
                decode_ms: 2.0
            """.formatted(REQUESTS);

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path tmp;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    private Path writeConfig(String name, String yaml) throws IOException {
        Path f = tmp.resolve(name);
        Files.writeString(f, yaml, StandardCharsets.UTF_8);
        return f;
    }

    private Path smallConfig() throws IOException {
        return writeConfig("small.yaml", SMALL);
    }

    private CliRun replay(Path config, Path out, String... extra) {
        List<String> args = new ArrayList<>(List.of("replay", config.toString(), "--out", out.toString()));
        args.addAll(Arrays.asList(extra));
        return run(args.toArray(String[]::new));
    }

    // ---- successful runs -----------------------------------------------------------------------------------

    @Test
    void replay_exitsZeroAndWritesAllThreeReports() throws IOException {
        Path out = tmp.resolve("out");

        CliRun r = replay(smallConfig(), out);

        assertThat(r.exit()).as("stderr: %s", r.err()).isEqualTo(Main.OK);
        assertThat(r.err()).isEmpty();
        assertThat(out.resolve("summary.json")).isRegularFile();
        assertThat(out.resolve("requests.csv")).isRegularFile();
        assertThat(out.resolve("canonical.json")).isRegularFile();
        assertThat(r.out())
                .contains("servesim replay: 2 worker(s)")
                .contains("ttft_ms")
                .contains("reports in");
    }

    @Test
    void requestsCsvColumns_includeEveryDocumentedColumn() {
        assertThat(ReportWriter.REQUEST_COLUMNS)
                .contains(
                        "request_id",
                        "session_id",
                        "turn",
                        "worker",
                        "rank",
                        "arrival_ms",
                        "first_token_ms",
                        "last_token_ms",
                        "ttft_ms",
                        "tpot_ms",
                        "e2e_ms",
                        "input_tokens",
                        "output_tokens",
                        "cached_tokens",
                        "preemptions",
                        "status")
                .startsWith("request_id", "session_id", "turn", "worker", "rank", "arrival_ms")
                .doesNotHaveDuplicates();
    }

    @Test
    void requestsCsv_hasTheHeaderAndOneRowPerRequest() throws IOException {
        Path out = tmp.resolve("out");
        assertThat(replay(smallConfig(), out).exit()).isEqualTo(Main.OK);

        List<String> lines = Files.readAllLines(out.resolve("requests.csv"), StandardCharsets.UTF_8);

        assertThat(lines).hasSize(REQUESTS + 1);
        assertThat(lines.get(0)).isEqualTo(String.join(",", ReportWriter.REQUEST_COLUMNS));
        assertThat(lines.get(0)).startsWith("request_id,session_id,turn,worker,rank,arrival_ms,");
        int columns = ReportWriter.REQUEST_COLUMNS.size();
        int workerCol = ReportWriter.REQUEST_COLUMNS.indexOf("worker");
        int statusCol = ReportWriter.REQUEST_COLUMNS.indexOf("status");
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            assertThat(cells).as(line).hasSize(columns);
            assertThat(cells[workerCol]).as(line).isIn("0", "1");
            assertThat(cells[statusCol]).as(line).isNotBlank();
        }
        assertThat(lines.subList(1, lines.size()))
                .as("both workers receive traffic")
                .anySatisfy(l -> assertThat(l.split(",", -1)[workerCol]).isEqualTo("0"))
                .anySatisfy(l -> assertThat(l.split(",", -1)[workerCol]).isEqualTo("1"));
    }

    @Test
    void summaryJson_hasTheDocumentedKeysAndStatistics() throws IOException {
        Path out = tmp.resolve("out");
        assertThat(replay(smallConfig(), out).exit()).isEqualTo(Main.OK);

        JsonNode s = JSON.readTree(Files.readString(out.resolve("summary.json"), StandardCharsets.UTF_8));

        assertThat(s.isObject()).isTrue();
        for (String key : List.of(
                "requests",
                "completed",
                "duration_ms",
                "request_throughput_rps",
                "output_throughput_tok_s",
                "prefix_reuse_ratio",
                "first_admission_prefix_reuse_ratio",
                "preemptions")) {
            assertThat(s.has(key)).as("summary.json has %s", key).isTrue();
            assertThat(s.get(key).isNumber()).as("%s is a number", key).isTrue();
        }
        for (String stat : List.of("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")) {
            JsonNode o = s.get(stat);
            assertThat(o).as(stat).isNotNull();
            assertThat(o.isObject()).as("%s is an object", stat).isTrue();
            for (String k : List.of("mean", "min", "max", "p50", "p90", "p95", "p99")) {
                assertThat(o.has(k)).as("%s.%s", stat, k).isTrue();
                assertThat(o.get(k).isNumber()).as("%s.%s is a number", stat, k).isTrue();
            }
            assertThat(o.get("min").asDouble())
                    .as(stat)
                    .isLessThanOrEqualTo(o.get("p50").asDouble());
            assertThat(o.get("p50").asDouble())
                    .as(stat)
                    .isLessThanOrEqualTo(o.get("p99").asDouble());
            assertThat(o.get("p99").asDouble())
                    .as(stat)
                    .isLessThanOrEqualTo(o.get("max").asDouble());
        }
        assertThat(s.get("requests").asLong()).isEqualTo(REQUESTS);
        assertThat(s.get("completed").asLong()).isEqualTo(REQUESTS);
        assertThat(s.get("duration_ms").asDouble()).isPositive();
        assertThat(s.get("output_throughput_tok_s").asDouble()).isPositive();
        // fixed timing: the first token cannot come before one prefill step
        assertThat(s.get("ttft_ms").get("min").asDouble()).isGreaterThanOrEqualTo(5.0);
        assertThat(s.get("prefix_reuse_ratio").asDouble()).isBetween(0.0, 1.0);
    }

    @Test
    void aClientFrontend_addsTheClientsView_toSummaryJsonAndTheConsole_andLeavesTheEnginesAlone() throws IOException {
        Path plain = tmp.resolve("plain");
        Path client = tmp.resolve("client");
        assertThat(replay(smallConfig(), plain).exit()).isEqualTo(Main.OK);
        CliRun r = replay(smallConfig(), client, "--set", "output.client_frontend={overhead_ms: 3.5}");
        assertThat(r.exit()).as("stderr: %s", r.err()).isEqualTo(Main.OK);

        JsonNode p = JSON.readTree(Files.readString(plain.resolve("summary.json"), StandardCharsets.UTF_8));
        JsonNode c = JSON.readTree(Files.readString(client.resolve("summary.json"), StandardCharsets.UTF_8));
        assertThat(p.has("client")).as("no view unless asked for").isFalse();
        assertThat(r.out())
                .contains("client_ttft_ms")
                .contains("client_tpot_ms")
                .contains("client_e2e_ms");
        for (String stat : List.of("ttft_ms", "tpot_ms", "e2e_ms")) {
            assertThat(c.get(stat)).as("the engine's %s is unchanged", stat).isEqualTo(p.get(stat));
        }
        // a constant frontend moves every first and last token by 3.5 ms, so TTFT and E2E by 3.5 ms and TPOT not
        JsonNode view = c.get("client");
        assertThat(view.get("overhead_ms").asDouble()).isEqualTo(3.5);
        assertThat(view.get("per_request_us").asDouble()).isZero();
        for (String k : List.of("mean", "min", "max", "p50", "p99")) {
            assertThat(view.path("ttft_ms").get(k).asDouble())
                    .as("ttft_ms.%s", k)
                    .isCloseTo(p.path("ttft_ms").get(k).asDouble() + 3.5, org.assertj.core.data.Offset.offset(2e-6));
            assertThat(view.path("e2e_ms").get(k).asDouble())
                    .as("e2e_ms.%s", k)
                    .isCloseTo(p.path("e2e_ms").get(k).asDouble() + 3.5, org.assertj.core.data.Offset.offset(2e-6));
            assertThat(view.path("tpot_ms").get(k).asDouble())
                    .as("tpot_ms.%s", k)
                    .isCloseTo(p.path("tpot_ms").get(k).asDouble(), org.assertj.core.data.Offset.offset(2e-6));
        }
        assertThat(view.path("ttft_ms").get("count").asLong()).isEqualTo(REQUESTS);

        // requests.csv: the engine's columns as before, then the client's, row by row
        List<String> plainRows = Files.readAllLines(plain.resolve("requests.csv"));
        List<String> clientRows = Files.readAllLines(client.resolve("requests.csv"));
        assertThat(clientRows.get(0)).isEqualTo(plainRows.get(0) + "," + String.join(",", ReportWriter.CLIENT_COLUMNS));
        List<String> header = List.of(clientRows.get(0).split(",", -1));
        for (int row = 1; row <= REQUESTS; row++) {
            String[] cells = clientRows.get(row).split(",", -1);
            assertThat(clientRows.get(row)).startsWith(plainRows.get(row));
            double ttft = Double.parseDouble(cells[header.indexOf("ttft_ms")]);
            double e2e = Double.parseDouble(cells[header.indexOf("e2e_ms")]);
            assertThat(Double.parseDouble(cells[header.indexOf("client_ttft_ms")]))
                    .isCloseTo(ttft + 3.5, org.assertj.core.data.Offset.offset(1e-6));
            assertThat(Double.parseDouble(cells[header.indexOf("client_e2e_ms")]))
                    .isCloseTo(e2e + 3.5, org.assertj.core.data.Offset.offset(1e-6));
            assertThat(Integer.parseInt(cells[header.indexOf("requests_in_first_token_step")]))
                    .as("the request itself is in its first token's step")
                    .isPositive();
        }
    }

    @Test
    void canonicalJson_isValidJsonRecordingTheConfigAndEveryRequest() throws IOException {
        Path out = tmp.resolve("out");
        assertThat(replay(smallConfig(), out).exit()).isEqualTo(Main.OK);

        JsonNode c = JSON.readTree(Files.readString(out.resolve("canonical.json"), StandardCharsets.UTF_8));

        assertThat(c.get("schema").asString()).isEqualTo(ReportWriter.CANONICAL_SCHEMA);
        assertThat(c.get("requests").size()).isEqualTo(REQUESTS);
        assertThat(c.path("config").path("cluster").path("workers").asInt()).isEqualTo(2);
        assertThat(c.path("summary").path("requests").asLong()).isEqualTo(REQUESTS);
    }

    @Test
    void sameConfigTwice_givesByteIdenticalCanonicalJson() throws IOException {
        Path cfg = smallConfig();
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");

        assertThat(replay(cfg, a).exit()).isEqualTo(Main.OK);
        assertThat(replay(cfg, b).exit()).isEqualTo(Main.OK);

        byte[] first = Files.readAllBytes(a.resolve("canonical.json"));
        assertThat(first).isNotEmpty();
        assertThat(Files.readAllBytes(b.resolve("canonical.json"))).isEqualTo(first);
    }

    @Test
    void differentSeed_changesCanonicalJson() throws IOException {
        Path cfg = smallConfig();
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");

        assertThat(replay(cfg, a).exit()).isEqualTo(Main.OK);
        assertThat(replay(cfg, b, "--set", "workload.seed=12").exit()).isEqualTo(Main.OK);

        assertThat(Files.readAllBytes(b.resolve("canonical.json")))
                .isNotEqualTo(Files.readAllBytes(a.resolve("canonical.json")));
    }

    @Test
    void setOverrides_reachTheRun() throws IOException {
        Path out = tmp.resolve("out");

        CliRun r = replay(smallConfig(), out, "--set", "workload.synthetic.requests=7", "--set", "cluster.workers=3");

        assertThat(r.exit()).as("stderr: %s", r.err()).isEqualTo(Main.OK);
        assertThat(Files.readAllLines(out.resolve("requests.csv"))).hasSize(7 + 1);
        assertThat(r.out()).contains("3 worker(s)");
    }

    @Test
    void deprecatedKeyName_stillWorks_withOneWarningLineOnStderr() throws IOException {
        Path cfg = writeConfig("old.yaml", SMALL.replace("engine:\n", "engine:\n  kvcr:\n    bandwidth_gbps: 400\n"));
        Path oldOut = tmp.resolve("old");
        Path newOut = tmp.resolve("new");

        CliRun old = replay(cfg, oldOut, "--set", "engine.kvcr.fabric_gbps=200");
        CliRun current = replay(
                smallConfig(),
                newOut,
                "--set",
                "engine.kvcr.bandwidth_gbytes_per_s=400",
                "--set",
                "engine.kvcr.fabric_gbytes_per_s=200");

        assertThat(old.exit()).as("stderr: %s", old.err()).isEqualTo(Main.OK);
        assertThat(old.err().lines().filter(l -> l.contains("warning")).toList())
                .containsExactly(
                        "servesim: warning: engine.kvcr.bandwidth_gbps is deprecated: use"
                                + " engine.kvcr.bandwidth_gbytes_per_s (GB/s)",
                        "servesim: warning: engine.kvcr.fabric_gbps is deprecated: use"
                                + " engine.kvcr.fabric_gbytes_per_s (GB/s)");
        assertThat(current.exit()).isEqualTo(Main.OK);
        assertThat(current.err()).doesNotContain("warning");
        assertThat(Files.readAllBytes(oldOut.resolve("canonical.json")))
                .isEqualTo(Files.readAllBytes(newOut.resolve("canonical.json")));
    }

    @Test
    void bothNamesOfARenamedKey_exitTwoNamingBoth() throws IOException {
        CliRun r = replay(
                smallConfig(),
                tmp.resolve("out"),
                "--set",
                "engine.kvcr.bandwidth_gbps=1",
                "--set",
                "engine.kvcr.bandwidth_gbytes_per_s=2");

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("config error")
                .contains("engine.kvcr.bandwidth_gbps")
                .contains("engine.kvcr.bandwidth_gbytes_per_s");
    }

    @Test
    void requestsCsvDisabled_isNotWritten() throws IOException {
        Path out = tmp.resolve("out");

        CliRun r = replay(smallConfig(), out, "--set", "output.requests_csv=false");

        assertThat(r.exit()).isEqualTo(Main.OK);
        assertThat(out.resolve("requests.csv")).doesNotExist();
        assertThat(out.resolve("summary.json")).isRegularFile();
    }

    @Test
    void sessionsWorkload_writesOneRowPerTurnWithSessionIds() throws IOException {
        Path cfg = writeConfig("sessions.yaml", """
                workload:
                  type: sessions
                  sessions:
                    sessions: 5
                    turns: 3
                    first_input_tokens: {type: fixed, value: 64}
                    new_input_tokens: {type: fixed, value: 16}
                    output_tokens: {type: fixed, value: 4}
                  arrival: {type: concurrency, concurrency: 2}
                cluster:
                  workers: 2
                  router: {policy: session_affinity}
                engine:
                  kv_cache: {num_gpu_blocks: 256}
                """);
        Path out = tmp.resolve("out");

        CliRun r = replay(cfg, out);

        assertThat(r.exit()).as("stderr: %s", r.err()).isEqualTo(Main.OK);
        List<String> lines = Files.readAllLines(out.resolve("requests.csv"), StandardCharsets.UTF_8);
        assertThat(lines).hasSize(5 * 3 + 1);
        int sessionCol = ReportWriter.REQUEST_COLUMNS.indexOf("session_id");
        assertThat(lines.subList(1, lines.size()))
                .allSatisfy(l -> assertThat(l.split(",", -1)[sessionCol]).matches("[0-4]"));
        JsonNode s = JSON.readTree(Files.readString(out.resolve("summary.json"), StandardCharsets.UTF_8));
        assertThat(s.get("prefix_reuse_ratio").asDouble())
                .as("later turns extend earlier prompts, so they hit the prefix cache")
                .isPositive();
    }

    @Test
    void unwritableOutputDirectory_exitsOne() throws IOException {
        Path notADir = writeConfig("occupied", "a regular file, not a directory\n");

        CliRun r = replay(smallConfig(), notADir);

        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.err()).contains("error:").contains("occupied");
    }

    // ---- configuration and usage errors --------------------------------------------------------------------

    @Test
    void unknownKey_exitsTwoNamingTheKey() throws IOException {
        Path cfg = writeConfig("bad.yaml", SMALL + "output:\n  request_csv: true\n");
        Path out = tmp.resolve("out");

        CliRun r = replay(cfg, out);

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("config error")
                .contains("output.request_csv")
                .contains("requests_csv");
        assertThat(out).doesNotExist();
    }

    @Test
    void negativeRate_exitsTwoNamingTheField() throws IOException {
        CliRun r = replay(smallConfig(), tmp.resolve("out"), "--set", "workload.arrival.rate=-5");

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("workload.arrival.rate");
    }

    @Test
    void negativeRateInTheFile_exitsTwoNamingTheField() throws IOException {
        Path cfg = writeConfig("bad.yaml", SMALL.replace("rate: 200.0", "rate: -200.0"));

        CliRun r = replay(cfg, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("workload.arrival.rate");
    }

    @Test
    void wrongType_exitsTwoNamingTheField() throws IOException {
        Path cfg = writeConfig("bad.yaml", SMALL.replace("workers: 2", "workers: two"));

        CliRun r = replay(cfg, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("cluster.workers");
    }

    @Test
    void unknownRouterPolicy_exitsTwoNamingTheFieldAndTheKnownRouters() throws IOException {
        Path cfg = writeConfig("bad.yaml", SMALL.replace("policy: least_loaded", "policy: random_walk"));

        CliRun r = replay(cfg, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("cluster.router.policy")
                .contains("random_walk")
                .contains("round_robin");
    }

    @Test
    void unknownTimingType_exitsTwoNamingTheField() throws IOException {
        Path cfg = writeConfig("bad.yaml", SMALL.replace("type: fixed\n  fixed:", "type: lookup\n  fixed:"));
        assertThat(Files.readString(cfg)).contains("lookup");

        CliRun r = replay(cfg, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("timing.type")
                .contains("lookup")
                .contains("roofline")
                .contains("polynomial");
    }

    @Test
    void rooflineWithoutModelAndGpu_exitsTwoSayingWhatIsMissing() throws IOException {
        Path cfg = writeConfig("bad.yaml", SMALL.replace("type: fixed\n  fixed:", "type: roofline\n  fixed:"));

        CliRun r = replay(cfg, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("timing.type: roofline needs timing.model and timing.gpu");
    }

    @Test
    void missingConfigFile_exitsTwo() {
        Path missing = tmp.resolve("does-not-exist.yaml");

        CliRun r = replay(missing, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("not found").contains("does-not-exist.yaml");
    }

    @Test
    void malformedYaml_exitsTwoNamingTheFile() throws IOException {
        Path cfg = writeConfig("broken.yaml", "cluster:\n  workers: [2\n");

        CliRun r = replay(cfg, tmp.resolve("out"));

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("broken.yaml").contains("malformed YAML");
    }

    @Test
    void noArguments_exitsTwo() {
        CliRun r = run();

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("missing subcommand");
    }

    @Test
    void replayWithoutConfig_exitsTwo() {
        CliRun r = run("replay");

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("CONFIG");
    }

    @Test
    void unknownOption_exitsTwo() throws IOException {
        CliRun r = run("replay", smallConfig().toString(), "--bogus");

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("--bogus");
    }

    @Test
    void help_exitsZeroAndPrintsUsage() {
        CliRun r = run("replay", "--help");

        assertThat(r.exit()).isEqualTo(Main.OK);
        assertThat(r.out()).contains("replay").contains("--set").contains("--out");
    }

    @Test
    void anOutPathThatCannotHoldARun_isRefusedBeforeSimulating_withTheReason() throws IOException {
        Path cfg = writeConfig("o.yaml", SMALL);
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        CliRun r = run("replay", cfg.toString(), "--out", file.toString());
        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.err()).contains("--out " + file + ": exists and is not a directory");
        assertThat(r.out()).doesNotContain("requests"); // nothing was simulated
        CliRun under =
                run("replay", cfg.toString(), "--out", file.resolve("sub").toString());
        assertThat(under.exit()).isEqualTo(Main.FAILURE);
        assertThat(under.err()).contains("cannot write there");
        assertThat(Files.readString(file)).isEqualTo("x"); // untouched
    }

    @Test
    void ioFailures_carryTheOperatingSystemsReason() {
        assertThat(Main.describe(new java.io.UncheckedIOException(new java.nio.file.AccessDeniedException("/x/y"))))
                .isEqualTo("permission denied: /x/y");
        assertThat(Main.describe(new java.nio.file.FileSystemException("/d/f", null, "No space left on device")))
                .isEqualTo("No space left on device: /d/f");
    }

    @Test
    void anEmptyOutPath_isAUsageError_notTheCurrentDirectory() throws IOException {
        Path cfg = writeConfig("e.yaml", SMALL);
        CliRun r = run("replay", cfg.toString(), "--out=");
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("--out").contains("an empty path");
        CliRun report = run("report", "");
        assertThat(report.exit()).isEqualTo(Main.USAGE);
        assertThat(report.err()).contains("an empty path");
    }

    @Test
    void everyCommandsHelp_printsWithoutPicocliWarnings() {
        // picocli formats descriptions with String.format: a bare '%' makes it warn on stderr and print the raw text
        List<picocli.CommandLine> commands = new ArrayList<>();
        commands.add(new picocli.CommandLine(new Main()));
        for (int i = 0; i < commands.size(); i++) {
            commands.addAll(commands.get(i).getSubcommands().values());
        }
        assertThat(commands).hasSizeGreaterThan(8);
        java.io.PrintStream saved = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        StringBuilder help = new StringBuilder();
        try {
            System.setErr(new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
            for (picocli.CommandLine c : commands) {
                help.append(c.getUsageMessage());
            }
        } finally {
            System.setErr(saved);
        }
        assertThat(help.toString()).contains("Largest |mean error| in %, e.g.");
        assertThat(err.toString(StandardCharsets.UTF_8)).doesNotContain("WARN");
    }

    @Test
    void executeWithoutWriters_stillReturnsTheExitCode() {
        assertThat(Main.execute("--version")).isEqualTo(Main.OK);
    }

    @Test
    void progressAlways_drawsABarOnStderr_andNeverChangesResults() throws IOException {
        Path cfg = writeConfig("p.yaml", SMALL);
        CliRun quiet = replay(cfg, tmp.resolve("quiet"), "--progress", "never");
        CliRun bar = replay(cfg, tmp.resolve("bar"), "--progress", "always", "--progress-delay-ms", "0");
        assertThat(bar.exit()).isZero();
        assertThat(bar.err()).contains("replay").contains("req");
        assertThat(quiet.err()).doesNotContain("replay");
        assertThat(Files.readString(tmp.resolve("bar/canonical.json")))
                .isEqualTo(Files.readString(tmp.resolve("quiet/canonical.json")));
        CliRun bad = replay(cfg, tmp.resolve("x"), "--progress", "sometimes");
        assertThat(bad.exit()).isEqualTo(Main.USAGE);
    }

    @Test
    void replay_writesReportHtmlAndTimeseries_unlessNoHtml() throws IOException {
        Path cfg = writeConfig("h.yaml", SMALL);
        CliRun r = replay(cfg, tmp.resolve("h"));
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(Files.readString(tmp.resolve("h/report.html"))).contains("<svg id='chart-ttft-cdf'");
        assertThat(Files.readString(tmp.resolve("h/timeseries.csv"))).startsWith("t_s,worker,running,waiting");
        CliRun none = replay(cfg, tmp.resolve("h"), "--no-html");
        assertThat(none.exit()).isZero();
        assertThat(tmp.resolve("h/report.html")).doesNotExist(); // no stale report next to new results
        CliRun report = run("report", tmp.resolve("h").toString());
        assertThat(report.exit()).as(report.err()).isZero();
        assertThat(tmp.resolve("h/report.html")).exists();
        CliRun compare =
                run("compare", tmp.resolve("h").toString(), tmp.resolve("h").toString(), "--out", tmp.toString());
        assertThat(compare.exit()).as(compare.err()).isZero();
        assertThat(compare.out()).contains("TTFT p99 (ms)").contains("+0.0%");
        assertThat(tmp.resolve("compare.html")).exists();
        CliRun byDefault =
                run("compare", tmp.resolve("h").toString(), tmp.resolve("h").toString());
        assertThat(byDefault.exit()).as(byDefault.err()).isZero();
        // without --out, compare.html goes beside the first run (it used to land in the current directory)
        assertThat(byDefault.out())
                .contains("wrote " + tmp.resolve("h/compare.html").toAbsolutePath());
        assertThat(tmp.resolve("h/compare.html")).exists();
        assertThat(run("report", tmp.resolve("nothing-here").toString()).exit()).isEqualTo(Main.USAGE);
    }

    @Test
    void aRunDirectory_isOneCompleteRunExactlyWhenItsManifestMatches_andReadersRefuseAMixedOne() throws IOException {
        Path cfg = writeConfig("m.yaml", SMALL);
        Path d = tmp.resolve("m");
        assertThat(replay(cfg, d).exit()).isZero();
        assertThat(io.servesim.report.RunDirectory.RUN.verify(d)).isNull();
        assertThat(Files.readString(d.resolve("manifest.json")))
                .contains("\"name\" : \"report.html\"", "\"name\" : \"summary.json\"", "\"sha256\"");
        assertThat(run("report", d.toString()).exit()).isZero(); // re-rendering keeps the manifest true
        assertThat(io.servesim.report.RunDirectory.RUN.verify(d)).isNull();

        // a second run into the directory, killed after its first file: no manifest, and readers say so
        io.servesim.report.RunDirectory.RUN.begin(d);
        Files.writeString(
                d.resolve("summary.json"),
                Files.readString(d.resolve("summary.json")).replace("2", "3"));
        CliRun report = run("report", d.toString());
        assertThat(report.exit()).isEqualTo(Main.USAGE);
        assertThat(report.err()).contains("is not a complete run: it has no manifest.json");
        CliRun compare = run("compare", d.toString(), d.toString());
        assertThat(compare.exit()).isEqualTo(Main.USAGE);
        assertThat(compare.err()).contains("manifest.json");

        // files from two runs under one manifest (written outside servesim, or by an older one): named
        assertThat(replay(cfg, d).exit()).isZero();
        Files.writeString(d.resolve("report.html"), "<html>another run</html>\n");
        assertThat(io.servesim.report.RunDirectory.RUN.verify(d)).contains("mixes two runs: report.html differs");
        assertThat(replay(cfg, d, "--no-html").exit()).isZero(); // the stale report is deleted, not listed
        assertThat(d.resolve("report.html")).doesNotExist();
        Files.writeString(d.resolve("report.html"), "<html>left over</html>\n");
        assertThat(io.servesim.report.RunDirectory.RUN.verify(d)).contains("report.html is not part of the run");
        Files.delete(d.resolve("workers.csv"));
        assertThat(io.servesim.report.RunDirectory.RUN.verify(d)).contains("workers.csv is missing");
    }

    @Test
    void theNextRunIntoADirectory_deletesTheTemporaryFilesAKilledWriteLeft_andOnlyThose() throws IOException {
        Path cfg = writeConfig("t.yaml", SMALL);
        Path d = tmp.resolve("t");
        Files.createDirectories(d);
        Files.writeString(d.resolve(".requests.csv.4711.tmp"), "half a file");
        Files.writeString(d.resolve(".manifest.json.99.tmp"), "{");
        Files.writeString(d.resolve(".notes.txt.1.tmp"), "the user's own");
        assertThat(replay(cfg, d).exit()).isZero();
        assertThat(d.resolve(".requests.csv.4711.tmp")).doesNotExist();
        assertThat(d.resolve(".manifest.json.99.tmp")).doesNotExist();
        assertThat(d.resolve(".notes.txt.1.tmp")).exists();
        assertThat(io.servesim.report.RunDirectory.RUN.verify(d)).isNull();
    }
}
