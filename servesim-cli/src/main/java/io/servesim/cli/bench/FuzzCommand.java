package io.servesim.cli.bench;

import io.servesim.cli.Main;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code servesim bench fuzz}: {@link Fuzz} tries per target (the config loader and every trace format), counted by
 * outcome, with the first few inputs that crashed or gave an unclear error; exit 1 when any did.
 */
@Command(
        name = "fuzz",
        mixinStandardHelpOptions = true,
        description = "Feed mutated configs and trace rows to servesim: count clear errors, unclear errors and crashes"
                + " per target.")
public final class FuzzCommand implements Callable<Integer> {
    @Option(names = "--tries", defaultValue = "100000", description = "Tries per target (default: ${DEFAULT-VALUE}).")
    long tries;

    @Option(
            names = "--targets",
            split = ",",
            description = "Targets (default: all: config, servesim, mooncake, azure, vllm_bench, measured).")
    List<String> targets;

    @Option(names = "--seed", defaultValue = "1", description = "First seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<String> chosen = targets == null ? Fuzz.TARGETS : targets;
        for (String t : chosen) {
            if (!Fuzz.TARGETS.contains(t)) {
                err.println("error: --targets: unknown target '" + t + "' (known: " + String.join(", ", Fuzz.TARGETS)
                        + ")");
                return Main.USAGE;
            }
        }
        if (tries < 1) {
            err.println("error: --tries must be >= 1");
            return Main.USAGE;
        }
        Path scratch;
        try {
            scratch = Files.createTempDirectory("servesim-fuzz");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean bad = false;
        o.printf(
                Locale.ROOT,
                "%-11s %10s %10s %12s %14s %7s %9s%n",
                "target",
                "tries",
                "ok",
                "clear error",
                "unclear error",
                "crash",
                "wall s");
        try {
            for (String t : chosen) {
                Map<Fuzz.Kind, Long> counts = new EnumMap<>(Fuzz.Kind.class);
                List<String> samples = new ArrayList<>();
                long t0 = System.nanoTime();
                for (long i = 0; i < tries; i++) {
                    Fuzz.Outcome r = Fuzz.run(t, seed + i, scratch);
                    counts.merge(r.kind(), 1L, Long::sum);
                    if ((r.kind() == Fuzz.Kind.CRASH || r.kind() == Fuzz.Kind.UNCLEAR_ERROR) && samples.size() < 5) {
                        samples.add("  " + t + " seed " + (seed + i) + ": " + r.kind() + ": " + r.detail());
                    }
                }
                double wall = (System.nanoTime() - t0) / 1e9;
                o.printf(
                        Locale.ROOT,
                        "%-11s %10d %10d %12d %14d %7d %9.1f%n",
                        t,
                        tries,
                        counts.getOrDefault(Fuzz.Kind.OK, 0L),
                        counts.getOrDefault(Fuzz.Kind.CLEAR_ERROR, 0L),
                        counts.getOrDefault(Fuzz.Kind.UNCLEAR_ERROR, 0L),
                        counts.getOrDefault(Fuzz.Kind.CRASH, 0L),
                        wall);
                o.flush();
                for (String s : samples) {
                    o.println(s);
                }
                bad |= !samples.isEmpty();
            }
        } finally {
            try (var files = Files.list(scratch)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
                Files.deleteIfExists(scratch);
            } catch (IOException ignored) {
                // a temporary directory: best effort
            }
        }
        o.flush();
        return bad ? Main.FAILURE : Main.OK;
    }
}
