package io.servesim.cli.bench;

import io.servesim.cli.Main;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.ReportWriter;
import io.servesim.report.Summaries;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code servesim bench replay}: one config replayed several times in one warm JVM (after warm-up runs), printing
 * each run's replay time and the minimum and median with µs per request, the bytes the replay allocated, and the
 * canonical output's SHA-256, which must be the same on every run. In-JVM minima move less with machine noise than
 * cold single runs do, so small changes show; {@code scripts/bench-ab.sh} remains the interleaved before/after
 * comparison. The allocation (the simulation thread's, from the JVM's per-thread counter) hardly moves between runs
 * or machines, so a change that allocates less shows there even when the wall clock cannot tell.
 */
@Command(
        name = "replay",
        mixinStandardHelpOptions = true,
        description = "Replay one config several times in a warm JVM; print replay times (min, median, us/request)"
                + " and the canonical digest.")
public final class ReplayBenchCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "CONFIG", description = "The config to replay.")
    Path config;

    @Option(names = "--set", paramLabel = "PATH=VALUE", description = "Override a config value (repeatable).")
    List<String> sets = new ArrayList<>();

    @Option(names = "--repeat", defaultValue = "5", description = "Measured runs (default: ${DEFAULT-VALUE}).")
    int repeat;

    @Option(names = "--warmup", defaultValue = "1", description = "Unmeasured runs first (default: ${DEFAULT-VALUE}).")
    int warmup;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException, NoSuchAlgorithmException {
        PrintWriter o = spec.commandLine().getOut();
        if (repeat < 1 || warmup < 0) {
            spec.commandLine().getErr().println("error: --repeat must be >= 1 and --warmup >= 0");
            return Main.USAGE;
        }
        SimConfig cfg = ConfigLoader.load(config, sets);
        long[] millis = new long[repeat];
        long[] allocated = new long[repeat];
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        String digest = null;
        long requests = 0;
        for (int i = 0; i < warmup + repeat; i++) {
            long bytes0 = threads.getCurrentThreadAllocatedBytes();
            long t0 = System.nanoTime();
            RunResult r = new Simulation(cfg).run();
            long nanos = System.nanoTime() - t0;
            long bytes = threads.getCurrentThreadAllocatedBytes() - bytes0;
            requests = r.log().size();
            String d = canonicalSha256(r);
            if (digest != null && !digest.equals(d)) {
                o.println("bench replay: canonical output differs between runs (" + digest + " vs " + d + ")");
                o.flush();
                return Main.FAILURE;
            }
            digest = d;
            if (i >= warmup) {
                millis[i - warmup] = nanos / 1_000_000;
                allocated[i - warmup] = bytes;
                o.printf(
                        Locale.ROOT,
                        "run %d: replay %d ms, allocated %.1f MB%n",
                        i - warmup + 1,
                        millis[i - warmup],
                        bytes / 1e6);
            }
        }
        long[] sorted = millis.clone();
        Arrays.sort(sorted);
        double median = sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2.0;
        o.printf(
                Locale.ROOT,
                "bench replay: %s, %d requests, %d runs after %d warm-up: min %d ms (%.1f us/request), median %.0f ms,"
                        + " max %d ms; allocated %.1f MB per replay (least); canonical sha256 %s%n",
                config,
                requests,
                repeat,
                warmup,
                sorted[0],
                requests == 0 ? 0.0 : sorted[0] * 1e3 / requests,
                median,
                sorted[sorted.length - 1],
                Arrays.stream(allocated).min().orElse(0) / 1e6,
                digest);
        o.flush();
        return Main.OK;
    }

    private static String canonicalSha256(RunResult r) throws IOException, NoSuchAlgorithmException {
        StringWriter w = new StringWriter();
        ReportWriter.writeCanonical(r, Summaries.of(r), w);
        return HexFormat.of()
                .formatHex(
                        MessageDigest.getInstance("SHA-256").digest(w.toString().getBytes(StandardCharsets.UTF_8)));
    }
}
