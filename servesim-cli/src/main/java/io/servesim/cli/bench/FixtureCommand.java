package io.servesim.cli.bench;

import io.servesim.cli.Main;
import io.servesim.report.AtomicFiles;
import io.servesim.report.RunDirectory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code servesim bench fixture}: the KVCR fixture table (docs/performance.md). Each cell runs in a fresh JVM by
 * default (so "cold" is the first replay in a JVM and the whole-process time is real); {@code --no-fork} runs the
 * cells in this JVM (quick checks, tests).
 */
@Command(
        name = "fixture",
        mixinStandardHelpOptions = true,
        description = "Replay the KVCR fixture for every (workers, dp, arm) cell and print µs per request, heap and"
                + " canonical digests; writes fixture.csv and fixture.json to --out.")
public final class FixtureCommand implements Callable<Integer> {
    @Option(
            names = "--workers",
            split = ",",
            defaultValue = "8,32,128,512,2048",
            description = "Worker counts (default: ${DEFAULT-VALUE}).")
    List<Integer> workers;

    @Option(
            names = "--dp",
            split = ",",
            defaultValue = "1,8",
            description = "Attention-DP sizes (default: ${DEFAULT-VALUE}).")
    List<Integer> dps;

    @Option(
            names = "--arm",
            split = ",",
            defaultValue = "g2-only,kvcr-off,kvcr-idle,kvcr-hinted",
            description = "Arms (default: ${DEFAULT-VALUE}).")
    List<String> arms;

    @Option(names = "--repeat", defaultValue = "5", description = "Timed replays per cell (default: ${DEFAULT-VALUE}).")
    int repeat;

    @Option(
            names = "--warmup",
            defaultValue = "1",
            description = "Discarded replays per cell (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(
            names = "--out",
            defaultValue = "out/bench-fixture",
            description = "Output directory (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--no-fork", description = "Run every cell in this JVM instead of one JVM per cell.")
    boolean noFork;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        for (String arm : arms) {
            if (!Fixture.ARMS.contains(arm)) {
                err.println("error: unknown arm '" + arm + "' (known: " + String.join(", ", Fixture.ARMS) + ")");
                return Main.USAGE;
            }
        }
        for (int w : workers) {
            if (w < 1) {
                err.println("error: --workers must be >= 1, got " + w);
                return Main.USAGE;
            }
        }
        for (int d : dps) {
            if (d < 1) {
                err.println("error: --dp must be >= 1, got " + d);
                return Main.USAGE;
            }
        }
        if (repeat < 1 || warmup < 0) {
            err.println("error: --repeat must be >= 1 and --warmup >= 0");
            return Main.USAGE;
        }
        out.printf(
                Locale.ROOT,
                "%7s %3s %-12s %9s %10s %10s %9s %9s %10s %8s  %-16s %7s %9s%n",
                "workers",
                "dp",
                "arm",
                "requests",
                "virtual_ms",
                "replay_ms",
                "us/req_c",
                "us/req_w",
                "process_ms",
                "heap_mb",
                "sha256",
                "pulls",
                "alloc_mb");
        out.flush();
        List<FixtureCell> cells = new ArrayList<>();
        for (int w : workers) {
            for (int d : dps) {
                for (String arm : arms) {
                    FixtureCell c = noFork ? FixtureCell.measure(w, d, arm, warmup, repeat) : fork(w, d, arm, err);
                    if (c == null) {
                        return Main.FAILURE;
                    }
                    cells.add(c);
                    out.printf(
                            Locale.ROOT,
                            "%7d %3d %-12s %9d %10.1f %10.1f %9.1f %9.1f %10s %8.0f  %-16s %7d %9.1f%n",
                            c.workers(),
                            c.dp(),
                            c.arm(),
                            c.requests(),
                            c.virtualMs(),
                            c.replayMsWarm(),
                            c.usPerRequestCold(),
                            c.usPerRequestWarm(),
                            c.processMs() < 0 ? "-" : String.format(Locale.ROOT, "%.0f", c.processMs()),
                            c.peakHeapMb(),
                            c.canonicalSha256().substring(0, 16),
                            c.kvcrStaged(),
                            c.allocatedMbWarm());
                    out.flush();
                    write(cells); // after every cell: an interrupted table keeps what it measured
                }
            }
        }
        out.print(FixtureRatios.render(cells));
        out.println("wrote fixture.csv and fixture.json to "
                + this.out.toAbsolutePath().normalize());
        out.flush();
        return Main.OK;
    }

    private void write(List<FixtureCell> cells) {
        StringBuilder csv = new StringBuilder(FixtureCell.CSV_HEADER).append('\n');
        for (FixtureCell c : cells) {
            csv.append(c.csvRow()).append('\n');
        }
        // the manifest (report.RunDirectory) goes first and comes back last: a kill in between leaves a table that
        // says it is incomplete, not a csv and a json of different cells
        RunDirectory.BENCH_FIXTURE.begin(out);
        AtomicFiles.writeString(out.resolve("fixture.csv"), csv.toString());
        AtomicFiles.writeString(
                out.resolve("fixture.json"),
                JsonMapper.builder()
                                .enable(SerializationFeature.INDENT_OUTPUT)
                                .build()
                                .writeValueAsString(cells)
                        + "\n");
        RunDirectory.BENCH_FIXTURE.finish(out, List.of("fixture.csv", "fixture.json"));
    }

    /** Runs one cell in a fresh JVM with this JVM's heap and GC flags; null (reported) when it fails. */
    private FixtureCell fork(int w, int d, String arm, PrintWriter err) throws IOException, InterruptedException {
        List<String> cmd = ChildJvm.command(
                List.of(),
                true,
                List.of(
                        "bench",
                        "fixture-cell",
                        "--workers=" + w,
                        "--dp=" + d,
                        "--arm=" + arm,
                        "--repeat=" + repeat,
                        "--warmup=" + warmup));
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String line;
        String result = null;
        StringBuilder log = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            while ((line = r.readLine()) != null) {
                if (line.startsWith(FixtureCellCommand.PREFIX)) {
                    result = line.substring(FixtureCellCommand.PREFIX.length());
                } else {
                    log.append(line).append('\n');
                }
            }
        }
        int rc = p.waitFor();
        double ms = (System.nanoTime() - t0) / 1e6;
        if (rc != 0 || result == null) {
            err.println("error: cell workers=" + w + " dp=" + d + " arm=" + arm + " failed (exit " + rc + "):");
            err.print(log);
            err.flush();
            return null;
        }
        return JsonMapper.builder().build().readValue(result, FixtureCell.class).withProcessMs(ms);
    }
}
