package io.servesim.validate;

import io.servesim.api.Servesim;
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
     * @param clientOverheadMs the frontend time added to the simulated TTFT and E2E (client-side runs; else 0)
     */
    public record Result(
            RunFolder run,
            SimConfig config,
            Validation validation,
            RunFolder.NumGpuBlocksCheck numGpuBlocks,
            int measuredFailed,
            List<String> warnings,
            double clientOverheadMs) {
        /** Defensive copy. */
        public Result {
            warnings = List.copyOf(warnings);
        }
    }

    /**
     * Replays one run and compares it with its measurement.
     *
     * @param run the run folder
     * @param base the base config, or null for servesim's defaults
     * @param sets {@code path=value} overrides applied after the run's deployment
     */
    public static Result evaluate(RunFolder run, Path base, List<String> sets) {
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
        double client = run.clientSide() ? CorpusFit.clientOverheadMs(config) : 0;
        return new Result(
                run,
                config,
                Validation.of(measured, sim, client),
                blocks,
                measured.failedRequests(),
                loaded.warnings(),
                client);
    }

    /** Evaluates every run on {@code threads} threads; the results are in the runs' order. */
    public static List<Result> evaluate(List<RunFolder> runs, Path base, List<String> sets, int threads) {
        return evaluate(runs, base, sets, threads, r -> {});
    }

    /**
     * Evaluates every run on {@code threads} threads, handing each result to {@code onResult} in the runs' order as
     * soon as it and every earlier one are done. The first failing run (in order) ends the evaluation with its
     * error, which names the run.
     */
    public static List<Result> evaluate(
            List<RunFolder> runs, Path base, List<String> sets, int threads, Consumer<Result> onResult) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        List<Result> out = new ArrayList<>();
        if (threads == 1) {
            for (RunFolder run : runs) {
                Result r = evaluate(run, base, sets);
                onResult.accept(r);
                out.add(r);
            }
            return out;
        }
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, Math.max(1, runs.size())))) {
            List<Future<Result>> futures = new ArrayList<>();
            for (RunFolder run : runs) {
                futures.add(pool.submit(() -> evaluate(run, base, sets)));
            }
            try {
                for (Future<Result> f : futures) {
                    Result r = get(f);
                    onResult.accept(r);
                    out.add(r);
                }
            } finally {
                futures.forEach(f -> f.cancel(true));
            }
        }
        return out;
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
