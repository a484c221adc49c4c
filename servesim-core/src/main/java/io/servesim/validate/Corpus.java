package io.servesim.validate;

import io.servesim.api.Servesim;
import io.servesim.config.ClientFrontend;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.run.RunResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Validation on a corpus of measured runs: each {@link RunFolder} replayed with its own deployment over a shared
 * base config and overrides, and compared with its measurement. Runs are independent, so they may be evaluated on
 * several threads; results always come back in the runs' order and equal those of a single thread.
 */
public final class Corpus {
    private Corpus() {}

    /**
     * One run's outcome.
     *
     * @param run the run folder
     * @param config the config it was replayed with
     * @param validation measured versus simulated
     * @param numGpuBlocks stated, derived and used KV pool sizes
     * @param measuredFailed requests the measurement marks failed (left out of the measured samples)
     * @param warnings the config loader's warnings (e.g. a deprecated key in the base config)
     * @param client the frontend time added to the simulated tokens (client-side runs; else {@link ClientFrontend#NONE})
     * @param windows the run cut into arrival windows, each compared on its own (empty unless asked for)
     * @param requestsCsv the run's requests side by side, measured and simulated ({@link RequestComparison})
     * @param simulatedTimedOut simulated requests whose client gave up ({@code workload.client_timeout_s}); they are
     *     left out of the simulated samples as the measurement leaves its failed requests out
     */
    public record Result(
            RunFolder run,
            SimConfig config,
            Validation validation,
            RunFolder.NumGpuBlocksCheck numGpuBlocks,
            int measuredFailed,
            List<String> warnings,
            ClientFrontend client,
            List<Window> windows,
            String requestsCsv,
            long simulatedTimedOut) {
        /** Defensive copies. */
        public Result {
            warnings = List.copyOf(warnings);
            windows = List.copyOf(windows);
        }
    }

    /**
     * The requests of one arrival window, measured versus simulated: where in a run the error arises (a cold
     * start, one load stage, a burst).
     *
     * @param fromS window start, seconds after the first arrival
     * @param toS window end (exclusive)
     * @param validation the comparison of the requests arriving in the window
     */
    public record Window(double fromS, double toS, Validation validation) {}

    /**
     * Replays one run and compares it with its measurement.
     *
     * @param run the run folder
     * @param base the base config, or null for servesim's defaults
     * @param sets {@code path=value} overrides applied after the run's deployment
     */
    public static Result evaluate(RunFolder run, Path base, List<String> sets) {
        return evaluate(run, base, sets, 0);
    }

    /**
     * As {@link #evaluate(RunFolder, Path, List)}, also comparing each {@code windowS}-second window of arrivals on
     * its own ({@link Result#windows}; none when {@code windowS} is 0).
     */
    public static Result evaluate(RunFolder run, Path base, List<String> sets, double windowS) {
        if (!(windowS >= 0) || Double.isInfinite(windowS)) {
            throw new IllegalArgumentException("window must be >= 0 seconds, got " + windowS);
        }
        ConfigLoader.Loaded loaded = run.load(base, sets);
        SimConfig config = loaded.config();
        RunFolder.NumGpuBlocksCheck blocks = run.numGpuBlocksCheck(config);
        MeasuredRun measured = run.measured();
        RunResult sim;
        try {
            sim = Servesim.run(config).raw();
        } catch (RuntimeException e) {
            throw run.named(e);
        }
        ClientFrontend client = run.clientSide() ? CorpusFit.clientFrontend(config) : ClientFrontend.NONE;
        return new Result(
                run,
                config,
                Validation.of(measured, sim, client, Long.MIN_VALUE, Long.MAX_VALUE),
                blocks,
                measured.failedRequests(),
                java.util.stream.Stream.concat(run.warnings().stream(), loaded.warnings().stream())
                        .toList(),
                client,
                windowS > 0 ? windows(run, sim, client, windowS) : List.of(),
                RequestComparison.csv(run, sim, client),
                sim.metrics().timedOut);
    }

    private static List<Window> windows(RunFolder run, RunResult sim, ClientFrontend client, double windowS) {
        double[] arrival = LayoutRows.arrivals(run.dir().resolve(RunFolder.WORKLOAD));
        LayoutRows rows = LayoutRows.read(run.dir().resolve(RunFolder.MEASURED), arrival.length);
        return windows(arrival, rows, sim, client, windowS);
    }

    /**
     * A replay of a vLLM-bench workload cut into {@code windowS}-second windows of arrivals and compared with the
     * measurement's per-request timestamps ({@code queued_ts}, {@code first_token_ts}, {@code last_token_ts},
     * {@code output_toks}; windows count from the first queued request, as the replay counts from its first row).
     */
    public static List<Window> windows(Path measuredTimestamps, RunResult sim, double windowS) {
        if (!(windowS > 0) || Double.isInfinite(windowS)) {
            throw new IllegalArgumentException("window must be > 0 seconds, got " + windowS);
        }
        it.unimi.dsi.fastutil.doubles.DoubleArrayList arrival = new it.unimi.dsi.fastutil.doubles.DoubleArrayList();
        LayoutRows rows = LayoutRows.readTimestamps(measuredTimestamps, arrival);
        return windows(arrival.toDoubleArray(), rows, sim, ClientFrontend.NONE, windowS);
    }

    private static List<Window> windows(
            double[] arrival, LayoutRows rows, RunResult sim, ClientFrontend client, double windowS) {
        double first = Double.POSITIVE_INFINITY;
        double last = Double.NEGATIVE_INFINITY;
        for (double a : arrival) {
            first = Math.min(first, a);
            last = Math.max(last, a);
        }
        // the replay shifts the trace so that its first row arrives at 0; windows count from there
        List<Window> out = new ArrayList<>();
        for (long k = 0; first + k * windowS <= last; k++) {
            double from = k * windowS;
            double to = (k + 1) * windowS;
            MeasuredRun m = rows.select(arrival, first + from, first + to);
            if (m.ttftMs().length == 0) {
                continue; // no successful measured request arrived in it
            }
            out.add(new Window(from, to, Validation.of(m, sim, client, Math.round(from * 1e9), Math.round(to * 1e9))));
        }
        return out;
    }

    /** Evaluates every run on {@code threads} threads; the results are in the runs' order. */
    public static List<Result> evaluate(List<RunFolder> runs, Path base, List<String> sets, int threads) {
        return evaluate(runs, base, sets, threads, r -> {});
    }

    /** As {@link #evaluate(List, Path, List, int, Consumer)} without arrival windows. */
    public static List<Result> evaluate(
            List<RunFolder> runs, Path base, List<String> sets, int threads, Consumer<Result> onResult) {
        return evaluate(runs, base, sets, threads, 0, onResult);
    }

    /**
     * Evaluates every run on {@code threads} threads, handing each result to {@code onResult} in the runs' order as
     * soon as it and every earlier one are done. The first failing run (in order) ends the evaluation with its
     * error, which names the run.
     */
    public static List<Result> evaluate(
            List<RunFolder> runs,
            Path base,
            List<String> sets,
            int threads,
            double windowS,
            Consumer<Result> onResult) {
        return evaluate(runs, base, sets, threads, windowS, onResult, (run, e) -> {
            throw e;
        });
    }

    /**
     * {@link #evaluate(List, Path, List, int, double, Consumer)}, except that a run failing with an
     * {@linkplain RunFolder#isInputError input error} (a deployment servesim cannot build, a malformed file) is handed
     * to {@code onFailure}, in the runs' order, and the others go on; the results of the runs that succeeded are
     * returned. Any other error still ends the evaluation.
     */
    public static List<Result> evaluate(
            List<RunFolder> runs,
            Path base,
            List<String> sets,
            int threads,
            double windowS,
            Consumer<Result> onResult,
            BiConsumer<RunFolder, RuntimeException> onFailure) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        List<Result> out = new ArrayList<>();
        if (threads == 1) {
            for (RunFolder run : runs) {
                deliver(run, () -> evaluate(run, base, sets, windowS), onResult, onFailure, out);
            }
            return out;
        }
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, Math.max(1, runs.size())))) {
            List<Future<Result>> futures = new ArrayList<>();
            for (RunFolder run : runs) {
                futures.add(pool.submit(() -> evaluate(run, base, sets, windowS)));
            }
            try {
                for (int i = 0; i < futures.size(); i++) {
                    Future<Result> f = futures.get(i);
                    deliver(runs.get(i), () -> get(f), onResult, onFailure, out);
                }
            } finally {
                futures.forEach(f -> f.cancel(true));
            }
        }
        return out;
    }

    /** One run's result to {@code onResult} and {@code out}, or its input error to {@code onFailure}. */
    private static void deliver(
            RunFolder run,
            java.util.function.Supplier<Result> result,
            Consumer<Result> onResult,
            BiConsumer<RunFolder, RuntimeException> onFailure,
            List<Result> out) {
        Result r;
        try {
            r = result.get();
        } catch (RuntimeException e) {
            if (!RunFolder.isInputError(e)) {
                throw e;
            }
            onFailure.accept(run, e);
            return;
        }
        onResult.accept(r);
        out.add(r);
    }

    private static Result get(Future<Result> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while evaluating the corpus", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
