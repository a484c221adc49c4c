package io.servesim.cli;

import io.servesim.api.Result;
import io.servesim.api.RunOptions;
import io.servesim.api.Servesim;
import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.Summary;
import io.servesim.workload.trace.TraceFormatException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code servesim replay CONFIG [--set k=v]... [--out DIR]}: runs one simulation and writes its reports. */
@Command(
        name = "replay",
        mixinStandardHelpOptions = true,
        description = "Replay a workload through a simulated cluster and write summary.json, requests.csv and"
                + " canonical.json.")
public final class ReplayCommand implements Callable<Integer> {
    @CommandLine.Mixin
    ConfigArgs args = new ConfigArgs();

    @Option(
            names = "--out",
            paramLabel = "DIR",
            description = "Output directory (default: out/<config file name without extension>).")
    Path out;

    @Option(
            names = "--skip-bad-lines",
            description = "Skip malformed trace rows instead of failing; they are counted and listed in summary.json.")
    boolean skipBadLines;

    @Option(names = "--no-html", description = "Do not write report.html.")
    boolean noHtml;

    @Option(names = "--per-worker", description = "Add one timeseries.csv row per worker at every tick.")
    boolean perWorker;

    @Option(
            names = "--progress",
            defaultValue = "auto",
            paramLabel = "WHEN",
            description = "Progress bar on stderr: auto (when stderr is a terminal and the run lasts over ~2 s),"
                    + " always, never (default: ${DEFAULT-VALUE}).")
    String progress;

    @Option(names = "--progress-delay-ms", hidden = true, defaultValue = "2000")
    long progressDelayMs;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter outWriter = spec.commandLine().getOut();
        preloadPresets();
        SimConfig cfg;
        try {
            List<String> all = new ArrayList<>(args.overrides);
            if (skipBadLines) {
                all.add("workload.trace.skip_bad_lines=true");
            }
            if (perWorker) {
                all.add("output.timeseries_per_worker=true");
            }
            if (!List.of("auto", "always", "never").contains(progress)) {
                err.println("error: --progress must be auto, always or never, got '" + progress + "'");
                return Main.USAGE;
            }
            ConfigLoader.Loaded loaded = ConfigLoader.loadWithWarnings(args.config, all);
            Main.warn(err, loaded.warnings());
            cfg = loaded.config();
        } catch (ConfigException e) {
            err.println("config error: " + e.getMessage());
            return Main.USAGE;
        }
        Path dir = out != null ? out : Path.of("out", stem(args.config));
        String unusable = Main.unusableOutputDirectory(dir);
        if (unusable != null) {
            err.println("error: --out " + unusable); // found before simulating, not after
            return Main.FAILURE;
        }
        try {
            RunOptions options = RunOptions.defaults();
            if (cfg.output().streamRequests()) {
                // the stream replaces requests.csv.zst when the run ends: the directory stops claiming to be
                // the earlier run before that
                io.servesim.report.RunDirectory.RUN.begin(dir);
                options = options.streamRequestsTo(dir.resolve("requests.csv.zst")); // rows go to disk as they end
            }
            long t0 = System.nanoTime();
            Result run;
            try (Progress bar = Progress.of(progress, cfg, err, progressDelayMs)) {
                run = Servesim.run(cfg, options.progress(bar, 1 << 16));
            }
            long t1 = System.nanoTime();
            Summary summary = run.summary();
            // manifest.json last: a kill or a full disk from here on leaves a directory that says it is incomplete
            io.servesim.report.RunDirectory.RUN.begin(dir);
            List<String> written = new java.util.ArrayList<>(run.writeFilesTo(dir));
            if (!noHtml) {
                io.servesim.html.HtmlReport.write(dir);
                written.add("report.html");
            }
            io.servesim.report.RunDirectory.RUN.finish(dir, written); // deletes a stale report.html with --no-html
            long t2 = System.nanoTime();
            if (summary.badLinesSkipped() > 0) {
                err.printf(
                        java.util.Locale.ROOT,
                        "warning: skipped %d malformed trace rows (listed in summary.json), first: %s%n",
                        summary.badLinesSkipped(),
                        summary.badLineSamples().get(0));
                err.flush();
            }
            outWriter.print(ConsoleTable.render(summary, cfg));
            outWriter.printf(
                    java.util.Locale.ROOT,
                    "wall time: replay %d ms (%.1f us/request), reports %d ms; reports in %s%n",
                    (t1 - t0) / 1_000_000,
                    summary.requests() == 0 ? 0.0 : (t1 - t0) / 1e3 / summary.requests(),
                    (t2 - t1) / 1_000_000,
                    dir.toAbsolutePath().normalize());
            outWriter.flush();
            return Main.OK;
        } catch (ConfigException e) {
            err.println("config error: " + e.getMessage()); // found while building the cluster (model, GPU, trace)
            return Main.USAGE;
        } catch (TraceFormatException e) {
            err.println("input error: " + e.getMessage());
            err.println("(use --skip-bad-lines to skip and count malformed rows)");
            return Main.USAGE;
        } catch (UncheckedIOException e) {
            err.println("error: " + Main.describe(e));
            return Main.FAILURE;
        } catch (IllegalStateException e) {
            err.println("simulation failed: " + e.getMessage());
            return Main.FAILURE;
        }
    }

    private static String stem(Path p) {
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }

    /**
     * Starts reading the bundled model and GPU presets on a daemon thread while this one loads the config: in a
     * cold JVM parsing them took 50-85 ms of the replay (docs/performance.md, "JVM start-up"). Class initialisation
     * is thread-safe: a simulation that reaches the presets first waits for this read rather than repeating it. A
     * failure here is left to that first use, which reports it.
     */
    private static void preloadPresets() {
        Thread.ofPlatform().daemon().name("servesim-presets").start(() -> {
            try {
                io.servesim.timing.Specs.preload();
            } catch (Throwable e) {
                // left to the first use on the main thread, which reports it (see the Javadoc)
            }
        });
    }
}
