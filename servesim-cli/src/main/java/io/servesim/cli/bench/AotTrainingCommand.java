package io.servesim.cli.bench;

import io.servesim.cli.Main;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code servesim bench aot-training DIR}: the training run of the launcher's ahead-of-time cache — short replays
 * through the {@code replay} command that cover the paths users run, on generated inputs written into DIR.
 *
 * <p>JDK 25's cache keeps the method profiles of its training run (JEP 515), and the JIT compiles a later run's hot
 * methods from those profiles: a run gains where the training ran the same paths and can lose where it did not. A
 * cache trained on {@code examples/quickstart.yaml} alone (synthetic sessions, polynomial timing) made trace replays
 * 15–30 % slower than no cache at all (docs/performance.md, "JVM start-up"). So the training replays, in one JVM,
 * synthetic sessions (with the HTML report), an Azure-format trace under roofline timing on one and on 16 workers, and
 * a Mooncake-format trace (hash ids, 512-token trace blocks) under {@code least_loaded} and {@code kv_aware} routing.
 * A disaggregated replay was tried as a sixth step and left out: with it the trace replays lost most of their gain.
 * The traces are generated here from a fixed seed in the shapes of the public ones (lengths, rates, shared multi-turn
 * prefixes), so the training needs no file outside the jar and never replays a benchmark's own input.
 */
@Command(
        name = "aot-training",
        mixinStandardHelpOptions = true,
        description = "The launcher's ahead-of-time cache training: short replays of generated workloads covering the"
                + " common paths (sessions, Azure and Mooncake traces, roofline, KV-aware routing), outputs in DIR.")
public final class AotTrainingCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "Directory for the generated inputs and the reports.")
    Path dir;

    @Option(
            names = "--scale",
            defaultValue = "1.0",
            description = "Multiplies every workload's size (default: ${DEFAULT-VALUE}; tests use a small value).")
    double scale;

    @Option(
            names = "--steps",
            split = ",",
            paramLabel = "NAME",
            description = "Only these replays (default: all of sessions, azure-1, azure-16, mooncake-least-loaded,"
                    + " mooncake-kv-aware).")
    List<String> only = new ArrayList<>();

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    static final List<String> STEP_NAMES =
            List.of("sessions", "azure-1", "azure-16", "mooncake-least-loaded", "mooncake-kv-aware");

    /** One training replay: a name, its config (YAML) and extra command-line arguments. */
    private record Step(String name, String yaml, List<String> args) {}

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!(scale > 0 && scale <= 10)) {
            err.println("error: --scale must be in (0, 10], got " + scale);
            return Main.USAGE;
        }
        try {
            Files.createDirectories(dir);
            int azureRows = Math.max(20, (int) Math.round(6_000 * scale));
            int mooncakeSessions = Math.max(10, (int) Math.round(900 * scale));
            int sessions = Math.max(10, (int) Math.round(600 * scale));
            writeAzureTrace(dir.resolve("azure.csv"), azureRows, 11L);
            writeMooncakeTrace(dir.resolve("mooncake.jsonl"), mooncakeSessions, 12L);
            List<Step> all = steps(sessions);
            for (String name : only) {
                if (all.stream().noneMatch(s -> s.name().equals(name))) {
                    err.println("error: --steps: unknown replay '" + name + "' (known: " + String.join(", ", STEP_NAMES)
                            + ")");
                    return Main.USAGE;
                }
            }
            for (Step s : all) {
                if (!only.isEmpty() && !only.contains(s.name())) {
                    continue;
                }
                Path config = dir.resolve(s.name() + ".yaml");
                Files.writeString(config, s.yaml(), StandardCharsets.UTF_8);
                List<String> args = new ArrayList<>(List.of("replay", config.toString(), "--out"));
                args.add(dir.resolve(s.name()).toString());
                args.addAll(s.args());
                StringWriter replayOut = new StringWriter();
                StringWriter replayErr = new StringWriter();
                int rc = Main.execute(
                        new PrintWriter(replayOut), new PrintWriter(replayErr), args.toArray(String[]::new));
                if (rc != Main.OK) {
                    err.println("aot-training: replay of " + s.name() + " failed (exit " + rc + "): " + replayErr);
                    return Main.FAILURE;
                }
                out.println("aot-training: " + s.name() + " replayed");
            }
            out.flush();
            return Main.OK;
        } catch (IOException | UncheckedIOException e) {
            err.println("aot-training: cannot write the training inputs in " + dir + ": " + Main.describe(e));
            return Main.FAILURE;
        }
    }

    private static List<Step> steps(int sessions) {
        String engine = """
                engine:
                  scheduler:
                    max_num_seqs: 256
                    max_num_batched_tokens: 8192
                  kv_cache:
                    block_size: 16
                    num_gpu_blocks: %d
                """;
        String sessionsYaml = String.format(Locale.ROOT, """
                        workload:
                          seed: 7
                          type: sessions
                          sessions:
                            sessions: %d
                            turns: 4
                            shared_prefix_tokens: 512
                            first_input_tokens: {type: uniform, min: 600, max: 1600}
                            new_input_tokens: {type: uniform, min: 64, max: 384}
                            output_tokens: {type: uniform, min: 32, max: 256}
                            think_time_ms: {type: exponential, mean: 2000}
                          arrival:
                            type: poisson
                            rate: 12.0
                        cluster:
                          workers: 4
                          router:
                            policy: session_affinity
                        timing:
                          type: polynomial
                        """, sessions) + String.format(Locale.ROOT, engine, 8192);
        String azure = """
                workload:
                  type: trace
                  trace:
                    format: azure
                    path: azure.csv
                cluster:
                  workers: %d
                  router:
                    policy: round_robin
                engine:
                  max_model_len: 4096
                  scheduler:
                    max_num_seqs: 128
                    max_num_batched_tokens: 4096
                timing:
                  type: roofline
                  model: llama-3.1-8b
                  gpu: a100-sxm-80gb
                """;
        String mooncake = """
                workload:
                  type: trace
                  trace:
                    format: mooncake
                    path: mooncake.jsonl
                    trace_block_size: 512
                cluster:
                  workers: 16
                  router:
                    policy: %s
                timing:
                  type: polynomial
                """ + String.format(Locale.ROOT, engine, 27_500);
        List<String> noHtml = List.of("--no-html");
        return List.of(
                new Step("sessions", sessionsYaml, List.of()),
                new Step("azure-1", String.format(Locale.ROOT, azure, 1), noHtml),
                new Step("azure-16", String.format(Locale.ROOT, azure, 16), noHtml),
                new Step("mooncake-least-loaded", String.format(Locale.ROOT, mooncake, "least_loaded"), noHtml),
                new Step("mooncake-kv-aware", String.format(Locale.ROOT, mooncake, "kv_aware"), noHtml));
    }

    /**
     * An Azure LLM inference 2023 conversation-shaped trace: Poisson arrivals at 5.4 requests/s (19,366 rows over an
     * hour in the public trace), log-normal prompt and output lengths around its means (about 1,150 and 210 tokens).
     */
    static void writeAzureTrace(Path file, int rows, long seed) throws IOException {
        SplittableRandom rnd = new SplittableRandom(seed);
        DateTimeFormatter f = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSSS", Locale.ROOT);
        LocalDateTime t = LocalDateTime.of(2023, 11, 16, 18, 0, 0);
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write("TIMESTAMP,ContextTokens,GeneratedTokens\n");
            for (int i = 0; i < rows; i++) {
                t = t.plusNanos(Math.round(-Math.log(1 - rnd.nextDouble()) / 5.4 * 1e9) / 100 * 100);
                int context = (int) Math.min(4000, Math.max(2, Math.round(logNormal(rnd, 6.7, 0.8))));
                int generated = (int) Math.min(2000, Math.max(1, Math.round(logNormal(rnd, 5.0, 0.9))));
                w.write(f.format(t) + "," + context + "," + generated + "\n");
            }
        }
    }

    /**
     * A Mooncake conversation-shaped trace: multi-turn sessions whose every prompt starts with one shared
     * system-prompt block and repeats its previous turn (prompt and answer) as a prefix, in 512-token hash blocks;
     * sessions start at 0.75 per second and turns follow after a think time.
     */
    static void writeMooncakeTrace(Path file, int sessions, long seed) throws IOException {
        SplittableRandom rnd = new SplittableRandom(seed);
        record Row(long millis, String line) {}
        List<Row> rows = new ArrayList<>();
        long nextId = 1; // id 0 is the shared system-prompt block
        double start = 0;
        for (int s = 0; s < sessions; s++) {
            start += -Math.log(1 - rnd.nextDouble()) / 0.75 * 1000;
            double at = start;
            int turns = 1 + rnd.nextInt(5);
            long[] ids = new long[0];
            int input = 0;
            int output = 0;
            for (int k = 0; k < turns; k++) {
                int fresh = 200 + rnd.nextInt(k == 0 ? 7_000 : 2_000);
                int nextInput = Math.min(60_000, Math.max(513, input + output + fresh));
                int blocks = (nextInput + 511) / 512;
                long[] next = new long[blocks];
                int kept = input / 512; // the previous prompt's full blocks (its first is the shared block 0)
                if (kept > 1) {
                    System.arraycopy(ids, 1, next, 1, kept - 1);
                }
                for (int b = Math.max(1, kept); b < blocks; b++) {
                    next[b] = nextId++;
                }
                ids = next;
                input = nextInput;
                output = 1 + rnd.nextInt(800);
                long millis = Math.round(at);
                StringBuilder line = new StringBuilder("{\"timestamp\": ")
                        .append(millis)
                        .append(", \"input_length\": ")
                        .append(input)
                        .append(", \"output_length\": ")
                        .append(output)
                        .append(", \"hash_ids\": [");
                for (int i = 0; i < ids.length; i++) {
                    line.append(i == 0 ? "" : ", ").append(ids[i]);
                }
                rows.add(new Row(millis, line.append("]}\n").toString()));
                at += 20_000 + rnd.nextInt(60_000);
            }
        }
        rows.sort(java.util.Comparator.comparingLong(Row::millis));
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (Row r : rows) {
                w.write(r.line());
            }
        }
    }

    private static double logNormal(SplittableRandom rnd, double mu, double sigma) {
        // Box-Muller: one standard normal from two uniforms
        double u = 1 - rnd.nextDouble();
        double v = rnd.nextDouble();
        return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
    }
}
