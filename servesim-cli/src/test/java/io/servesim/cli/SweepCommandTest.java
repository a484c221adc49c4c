package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** servesim sweep: outputs, sweep.html, engines and errors. */
class SweepCommandTest {
    @TempDir
    Path tmp;

    private Path spec(String rest) throws IOException {
        Path f = tmp.resolve("sweep.yaml");
        Files.writeString(f, """
                base:
                  workload: {type: synthetic, synthetic: {requests: 100}, arrival: {rate: 30}}
                  timing: {type: polynomial}
                """ + rest);
        return f;
    }

    @Test
    void sweep_writesResultsParetoBestAndHtml_identicallyWithOneOrTwoThreads() throws IOException {
        Path f = spec("""
                space:
                  cluster.workers: [1, 2]
                  workload.seed: [1, 2]
                slo: {ttft_p90_ms: 2000}
                """);
        CliRun one = CliRun.of(
                "sweep",
                f.toString(),
                "--parallel",
                "1",
                "--out",
                tmp.resolve("a").toString());
        CliRun two = CliRun.of(
                "sweep",
                f.toString(),
                "--parallel",
                "2",
                "--out",
                tmp.resolve("b").toString());
        assertThat(one.exit()).as(one.err()).isZero();
        assertThat(two.exit()).isZero();
        for (String file : new String[] {"results.csv", "pareto.csv", "best.yaml", "sweep.html"}) {
            assertThat(tmp.resolve("a").resolve(file)).exists();
        }
        assertThat(Files.readString(tmp.resolve("b/results.csv")))
                .isEqualTo(Files.readString(tmp.resolve("a/results.csv")));
        assertThat(Files.readString(tmp.resolve("a/sweep.html")))
                .contains("<svg id='chart-pareto'")
                .contains("Top 10");
        assertThat(one.out()).contains("sweep: 4 points (0 failed)");
        // one sweep per directory, as for runs: the manifest lists what this sweep wrote, and only that
        assertThat(io.servesim.report.RunDirectory.SWEEP.verify(tmp.resolve("a")))
                .isNull();
        assertThat(Files.readString(tmp.resolve("a/manifest.json")))
                .contains("\"kind\" : \"sweep\"", "\"name\" : \"results.csv\"", "\"name\" : \"sweep.html\"")
                .doesNotContain("capacity.csv");
        Files.writeString(tmp.resolve("a/pareto.csv"), "another sweep's front\n");
        assertThat(io.servesim.report.RunDirectory.SWEEP.verify(tmp.resolve("a")))
                .contains("mixes two sweeps: pareto.csv differs");
        assertThat(io.servesim.report.RunDirectory.RUN.verify(tmp.resolve("a")))
                .contains("not the manifest of a run directory");
        CliRun replay = CliRun.of(
                "replay",
                tmp.resolve("a/best.yaml").toString(),
                "--out",
                tmp.resolve("r").toString());
        assertThat(replay.exit()).as(replay.err()).isZero(); // best.yaml is runnable
    }

    @Test
    void badSpecAndMissingSparkModule_areUsageErrors() throws IOException {
        CliRun bad = CliRun.of(
                "sweep",
                spec("objective: speed\n").toString(),
                "--out",
                tmp.resolve("x").toString());
        assertThat(bad.exit()).isEqualTo(Main.USAGE);
        assertThat(bad.err()).contains("config error: objective");
        CliRun spark = CliRun.of(
                "sweep",
                spec("space: {cluster.workers: [1]}\n").toString(),
                "--engine",
                "spark",
                "--out",
                tmp.resolve("y").toString());
        assertThat(spark.exit()).isEqualTo(Main.USAGE);
        assertThat(spark.err()).contains("servesim-spark");
    }

    @Test
    void anOutPathThatIsAFile_isRefusedBeforeAnyPointRuns() throws IOException {
        Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");
        CliRun r = CliRun.of("sweep", spec("space: {cluster.workers: [1, 2]}\n").toString(), "--out", file.toString());
        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.err()).contains("--out " + file + ": exists and is not a directory");
        assertThat(r.out()).doesNotContain("time:"); // no point ran
        assertThat(Files.readString(file)).isEqualTo("x");
    }
}
