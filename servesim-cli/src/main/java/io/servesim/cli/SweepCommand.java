package io.servesim.cli;

import io.servesim.config.ConfigException;
import io.servesim.html.SweepHtml;
import io.servesim.sweep.LocalEngine;
import io.servesim.sweep.PointResult;
import io.servesim.sweep.SweepEngine;
import io.servesim.sweep.SweepOutput;
import io.servesim.sweep.SweepSpec;
import io.servesim.sweep.Sweeps;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code servesim sweep SWEEP.yaml}: runs a deployment search locally (threads) or on Apache Spark. */
@Command(
        name = "sweep",
        mixinStandardHelpOptions = true,
        description = "Search deployments under SLOs (docs/sweep.md): grid, random or bisect on load; writes"
                + " results.csv, pareto.csv, best.yaml and sweep.html.")
public final class SweepCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "SWEEP", description = "Sweep spec (YAML).")
    Path file;

    @Option(
            names = "--engine",
            defaultValue = "local",
            description = "local (threads) or spark (default: ${DEFAULT-VALUE}).")
    String engine;

    @Option(
            names = "--parallel",
            description = "Simulations at once with --engine local (default: the machine's cores).")
    Integer parallel;

    @Option(names = "--master", defaultValue = "local[*]", description = "Spark master (default: ${DEFAULT-VALUE}).")
    String master;

    @Option(names = "--out", defaultValue = "out/sweep", description = "Output directory (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--fail-fast", description = "Stop at the first failed point.")
    boolean failFast;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        SweepSpec s;
        try {
            s = SweepSpec.load(file);
            Main.warn(err, Sweeps.configWarnings(s));
        } catch (ConfigException e) {
            err.println("config error: " + e.getMessage());
            return Main.USAGE;
        }
        String unusable = Main.unusableOutputDirectory(out);
        if (unusable != null) {
            err.println("error: --out " + unusable); // before running every point, not after
            return Main.FAILURE;
        }
        long t0 = System.nanoTime();
        List<String> written = new java.util.ArrayList<>();
        Sweeps.Outcome outcome;
        long simNanos;
        int slots;
        try (SweepEngine e = engine()) {
            if (e == null) {
                return Main.USAGE;
            }
            outcome = Sweeps.run(s, e, failFast);
            // manifest.json last: a kill or a full disk from here on leaves a directory that says it is incomplete
            io.servesim.report.RunDirectory.SWEEP.begin(out);
            written.addAll(SweepOutput.writeAll(s, outcome, out));
            written.addAll(e.writeExtras(s, outcome, out));
            simNanos = e.simulationNanos();
            slots = engine.equals("local")
                    ? (parallel != null ? parallel : Runtime.getRuntime().availableProcessors())
                    : Runtime.getRuntime().availableProcessors();
        } catch (ConfigException e) {
            err.println("config error: " + e.getMessage());
            return Main.USAGE;
        } catch (java.io.UncheckedIOException e) {
            err.println("error: " + Main.describe(e));
            return Main.FAILURE;
        }
        long t1 = System.nanoTime();
        try {
            SweepHtml.write(s, outcome, out);
            written.add("sweep.html");
            io.servesim.report.RunDirectory.SWEEP.finish(out, written);
        } catch (java.io.UncheckedIOException e) {
            err.println("error: " + Main.describe(e));
            return Main.FAILURE;
        }
        int failed = 0;
        for (PointResult r : outcome.results()) {
            if (r.error() != null) {
                failed++;
                err.println("point " + r.pointId() + " failed: " + String.join(" ", r.overrides()) + ": " + r.error());
            }
        }
        err.flush();
        PointResult best = SweepOutput.best(s, outcome.results());
        if (simNanos >= 0) {
            o.printf(
                    Locale.ROOT,
                    "time: %.1f s wall x %d slots; %.1f s inside simulations (%.0f%%), the rest orchestration%n",
                    (t1 - t0) / 1e9,
                    slots,
                    simNanos / 1e9,
                    100.0 * simNanos / ((double) (t1 - t0) * slots));
        }
        o.printf(
                Locale.ROOT,
                "sweep: %d points (%d failed) in %.1f s with --engine %s; best: %s%nwrote results.csv, pareto.csv,"
                        + " best.yaml, sweep.html to %s%n",
                outcome.results().size(),
                failed,
                (t1 - t0) / 1e9,
                engine,
                best == null
                        ? "none"
                        : "point " + best.pointId() + " (" + s.objective() + " "
                                + String.format(Locale.ROOT, "%.4f", best.objective()) + ")",
                out.toAbsolutePath().normalize());
        o.flush();
        return failed > 0 && failFast ? Main.FAILURE : Main.OK;
    }

    private SweepEngine engine() {
        PrintWriter err = spec.commandLine().getErr();
        switch (engine) {
            case "local" -> {
                int n = parallel != null ? parallel : Runtime.getRuntime().availableProcessors();
                if (n < 1) {
                    err.println("error: --parallel must be >= 1");
                    return null;
                }
                boolean tty = Terminal.interactive();
                long start = System.nanoTime();
                long[] batchStart = {start};
                return new LocalEngine(n, (done, total) -> {
                    if (tty) {
                        synchronized (err) {
                            // this batch's completed/total (bisect runs one batch per round), rate and ETA
                            long now = System.nanoTime();
                            if (done == 1) {
                                batchStart[0] = now;
                            }
                            double elapsed = Math.max(1e-9, (now - batchStart[0]) / 1e9);
                            double rate = done / elapsed;
                            err.printf(
                                    Locale.ROOT,
                                    "\rsweep: %d/%d points, %.1f points/s, ETA %.0f s   ",
                                    done,
                                    total,
                                    rate,
                                    (total - done) / Math.max(1e-9, rate));
                            if (done == total) {
                                err.println();
                            }
                            err.flush();
                        }
                    }
                });
            }
            case "spark" -> {
                try {
                    Class<?> c = Class.forName("io.servesim.spark.SparkSweepEngine");
                    return (SweepEngine) c.getConstructor(String.class).newInstance(master);
                } catch (ClassNotFoundException e) {
                    err.println("error: --engine spark needs the servesim-spark module on the class path:"
                            + " run scripts/servesim-spark.sh sweep ... (docs/sweep.md)");
                    return null;
                } catch (ReflectiveOperationException e) {
                    err.println("error: cannot start Spark: " + e.getCause());
                    return null;
                }
            }
            default -> {
                err.println("error: --engine must be local or spark, got '" + engine + "'");
                return null;
            }
        }
    }
}
