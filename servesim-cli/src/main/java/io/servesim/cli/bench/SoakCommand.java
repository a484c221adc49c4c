package io.servesim.cli.bench;

import io.servesim.cli.Main;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.run.Invariants;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code servesim bench soak}: long random schedules of {@code drain} and {@code fail} events over a large cluster
 * (G2 offload on, KVCR on every other try, both engine loops), with the engine's {@link Invariants} checked after
 * every step of every rank and at the end; reports tries, events, steps checked, requests by status and wall time,
 * and exits 1 on any violation.
 */
@Command(
        name = "soak",
        mixinStandardHelpOptions = true,
        description = "Replay random drain/fail schedules over a large cluster, checking the engine's invariants after"
                + " every step; print what was survived.")
public final class SoakCommand implements Callable<Integer> {
    @Option(names = "--tries", defaultValue = "10", description = "Simulations (default: ${DEFAULT-VALUE}).")
    int tries;

    @Option(
            names = "--workers",
            defaultValue = "256",
            description = "Workers per simulation (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(
            names = "--events",
            defaultValue = "200",
            description = "drain/fail events per simulation, on distinct workers (default: ${DEFAULT-VALUE}).")
    int events;

    @Option(names = "--seed", defaultValue = "1", description = "First seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** The config of one try: a sessions workload of 8 sessions per worker over 20 s, and its fault schedule. */
    static List<String> config(long seed, int workers, int events) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<String> sets = new ArrayList<>(List.of(
                "workload.type=sessions",
                "workload.seed=" + seed,
                "workload.sessions.sessions=" + 8 * workers,
                "workload.sessions.turns=4",
                "workload.sessions.shared_prefix_tokens=256",
                "workload.sessions.migrate_fraction=0.2",
                "workload.sessions.first_input_tokens={type: uniform, min: 64, max: 1024}",
                "workload.sessions.new_input_tokens={type: uniform, min: 16, max: 256}",
                "workload.sessions.output_tokens={type: uniform, min: 4, max: 128}",
                "workload.sessions.think_time_ms={type: exponential, mean: 1000}",
                "workload.arrival.rate=" + 8 * workers / 20.0,
                "cluster.workers=" + workers,
                "cluster.attention_dp=" + (1 + rnd.nextInt(2)),
                "cluster.router.policy="
                        + List.of("kv_aware", "least_loaded", "session_affinity", "random")
                                .get(rnd.nextInt(4)),
                "engine.scheduler.async_scheduling=" + rnd.nextBoolean(),
                "engine.scheduler.max_num_seqs=32",
                "engine.scheduler.max_num_batched_tokens=1024",
                "engine.max_model_len=4096",
                "engine.kv_cache.num_gpu_blocks=" + (320 + rnd.nextInt(1024)),
                "engine.kv_cache.bytes_per_token=131072",
                "engine.kv_cache.host_offload.num_host_blocks=4096",
                "engine.kvcr.enabled=" + (seed % 2 == 0),
                "timing.type=fixed",
                "timing.fixed.prefill_ms=5",
                "timing.fixed.prefill_per_token_ms=0.02",
                "timing.fixed.decode_ms=8",
                "output.timeseries_tick_s=0"));
        // distinct workers (a worker drains or fails once), at random instants over the workload's 20 s and after
        List<Integer> order = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            order.add(w);
        }
        StringBuilder list = new StringBuilder("cluster.events=[");
        int n = Math.min(events, workers);
        for (int i = 0; i < n; i++) {
            int pick = i + rnd.nextInt(workers - i);
            int w = order.get(pick);
            order.set(pick, order.get(i));
            order.set(i, w);
            list.append(i == 0 ? "" : ", ")
                    .append(String.format(
                            Locale.ROOT,
                            "{at_ms: %.3f, worker: %d, action: %s}",
                            rnd.nextDouble() * 30_000,
                            w,
                            rnd.nextInt(3) == 0 ? "fail" : "drain"));
        }
        sets.add(list.append(']').toString());
        return sets;
    }

    /**
     * What {@code summary.json} says against the request log it summarises: the status counts add up to the requests
     * and equal the log's; and every KVCR pull staged ended exactly once (landed, source-only or aborted).
     */
    static List<String> summaryAddsUp(RunResult result) {
        List<String> problems = new ArrayList<>();
        io.servesim.report.Summary s = io.servesim.report.Summaries.of(result);
        RequestLog log = result.log();
        TreeMap<String, Long> byStatus = new TreeMap<>();
        for (int i = 0; i < log.size(); i++) {
            byStatus.merge(log.status(i).status(), 1L, Long::sum);
        }
        if (s.requests() != log.size()) {
            problems.add("summary requests " + s.requests() + " != " + log.size() + " rows");
        }
        long timedOut = s.timedOut() == null ? 0 : s.timedOut();
        if (s.completed() + s.rejected() + s.incomplete() + s.abandoned() + timedOut != s.requests()) {
            problems.add(
                    "summary completed + rejected + incomplete + abandoned + timed_out != requests " + s.requests());
        }
        long[] counts = {s.completed(), s.rejected(), s.incomplete(), s.abandoned(), timedOut};
        String[] names = {"completed", "rejected", "incomplete", "abandoned", "timed_out"};
        for (int i = 0; i < names.length; i++) {
            if (counts[i] != byStatus.getOrDefault(names[i], 0L)) {
                problems.add("summary " + names[i] + " " + counts[i] + " != " + byStatus.getOrDefault(names[i], 0L)
                        + " rows");
            }
        }
        io.servesim.report.Summary.Kvcr k = s.kvcr();
        if (k.staged() != k.landed() + k.sourceOnly() + k.aborted()) {
            problems.add("kvcr: " + k.staged() + " pulls staged but " + k.landed() + " landed + " + k.sourceOnly()
                    + " source-only + " + k.aborted() + " aborted");
        }
        return problems;
    }

    @Override
    public Integer call() {
        PrintWriter o = spec.commandLine().getOut();
        if (tries < 1 || workers < 1 || events < 0) {
            spec.commandLine().getErr().println("error: --tries and --workers must be >= 1, --events >= 0");
            return Main.USAGE;
        }
        long violations = 0;
        long eventsTotal = 0;
        long steps = 0;
        TreeMap<String, Long> statuses = new TreeMap<>();
        long t0 = System.nanoTime();
        for (int t = 0; t < tries; t++) {
            SimConfig config = ConfigLoader.fromYaml("", "soak", config(seed + t, workers, events));
            Simulation sim = new Simulation(config);
            Invariants checks = new Invariants(config).watch(sim);
            RunResult result = sim.run();
            checks.atEnd(sim, result, config);
            List<String> summaryProblems = summaryAddsUp(result);
            violations += summaryProblems.size();
            for (String v : summaryProblems.subList(0, Math.min(5, summaryProblems.size()))) {
                o.println("  seed " + (seed + t) + ": " + v);
            }
            RequestLog log = result.log();
            for (int i = 0; i < log.size(); i++) {
                statuses.merge(log.status(i).status(), 1L, Long::sum);
            }
            eventsTotal += config.cluster().events().size();
            steps += checks.steps();
            violations += checks.count();
            for (String v : checks.violations()
                    .subList(0, Math.min(5, checks.violations().size()))) {
                o.println("  seed " + (seed + t) + ": " + v);
            }
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        o.printf(
                Locale.ROOT,
                "soak: %d simulations x %d workers, %d drain/fail events, %d steps checked, requests %s,"
                        + " %d invariant violations, %.1f s%n",
                tries,
                workers,
                eventsTotal,
                steps,
                statuses,
                violations,
                wall);
        o.flush();
        return violations == 0 ? Main.OK : Main.FAILURE;
    }
}
