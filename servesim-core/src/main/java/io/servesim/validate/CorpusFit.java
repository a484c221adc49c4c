package io.servesim.validate;

import io.servesim.api.Servesim;
import io.servesim.config.ClientFrontend;
import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.RooflineConfig;
import io.servesim.config.SimConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import org.apache.commons.math3.exception.TooManyEvaluationsException;
import org.apache.commons.math3.exception.TooManyIterationsException;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresBuilder;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresOptimizer;
import org.apache.commons.math3.fitting.leastsquares.LevenbergMarquardtOptimizer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Fits one global set of step-time coefficients to a corpus of measured runs and scores it honestly: the fit on all
 * runs, then leave-one-run-out, leave-one-GPU-out and leave-one-model-out refits, each scored on the runs it left
 * out.
 *
 * <p>The fitted coefficients are physical ({@link #FITTED}): compute and memory efficiencies (fractions of the rates
 * the GPU's GEMM kernels measurably reach: compute, weight streaming, attention's KV streaming), the per-layer GPU
 * overhead, the time per all-reduce beyond vLLM's measured all-reduce kernel, the grouped-GEMM efficiency of MoE
 * layers, and — only for client-side measurements — a constant frontend/HTTP/tokenisation time added to TTFT and
 * E2E ({@code client_overhead_ms}, never folded into GPU terms). The CPU part of a step is not fitted: vLLM's
 * default async loop hides it behind the GPU part in every run of the shared corpus, so the data cannot tell its
 * size (a zero Jacobian column would send the search to a bound).
 *
 * <p>Method: Levenberg–Marquardt least squares (Apache Commons Math) with the simulator in the loop and a
 * forward-difference Jacobian, in bounded coordinates (each coefficient a logistic function of the search variable
 * over its physical range, {@link #bounds}) so every candidate stays physical, optionally held to the literature
 * prior ({@link #DEFAULT_PRIOR_WEIGHT}). Residuals per run are the
 * log-ratios simulated/measured of the TTFT, TPOT and E2E means, softly capped at ±3 so a run that saturates in one
 * candidate does not swamp the others. The p99s are reported, not fitted: with them in the objective (half weight)
 * the fit traded mean accuracy for queueing bursts of the measured runs, which no step-time coefficient reproduces
 * (docs/accuracy.md). During the fit each run is replayed over a window of its arrivals ({@link Case#window}); every
 * reported error replays the whole run.
 *
 * <p>Why one class of this size: the fit, the whole-run scoring, the leave-out folds and the profile file share the
 * cases, the thread pool, the simulation count and the coefficients' physical ranges.
 */
public final class CorpusFit {
    /** The frontend term's name. */
    public static final String CLIENT_OVERHEAD = "client_overhead_ms";

    /**
     * The frontend time servesim assumes for client-side measurements when no profile gives one: the corpus fit
     * (docs/accuracy.md).
     */
    public static final double DEFAULT_CLIENT_OVERHEAD_MS = 5.638;

    /** The frontend's time per request in a token's step ({@link ClientFrontend#perRequestUs}). */
    public static final String CLIENT_PER_REQUEST = "client_per_request_us";

    /**
     * The frontend time per request in a token's step servesim assumes for client-side measurements when no profile
     * gives one: the corpus fit (docs/accuracy.md).
     */
    public static final double DEFAULT_CLIENT_PER_REQUEST_US = 75.88;

    /** Coefficients fitted, in order; all but the last are {@link RooflineConfig} keys. */
    public static final List<String> FITTED = List.of(
            "mfu",
            "mbu",
            "kv_mbu",
            "layer_overhead_us",
            "collective_efficiency",
            "moe_efficiency",
            CLIENT_OVERHEAD,
            CLIENT_PER_REQUEST);

    private static final double CAP = 3.0;
    private static final int RESIDUALS = 3;
    private static final double FD_STEP = 0.05;

    /**
     * One measured run ready to replay.
     *
     * @param name run name
     * @param gpu GPU preset
     * @param model model preset
     * @param config the deployment and workload
     * @param measured the measured per-request latencies (all successful requests)
     * @param window the measured latencies of the requests arriving in [{@code windowStartS}, {@code windowEndS})
     * @param windowStartS fit window start, seconds after the first arrival
     * @param windowEndS fit window end (infinite: the whole run)
     * @param replayFromS where the windowed replay starts (before the window: it warms the engine and its prefix
     *     cache up)
     * @param scoredFromS the window start in the windowed replay's clock (its first replayed row arrives at 0)
     * @param clientSide whether latencies were measured by an HTTP client (then the frontend term applies)
     */
    public record Case(
            String name,
            String gpu,
            String model,
            SimConfig config,
            MeasuredRun measured,
            MeasuredRun window,
            double windowStartS,
            double windowEndS,
            double replayFromS,
            double scoredFromS,
            boolean clientSide) {}

    /**
     * Where every fit starts, whatever the defaults are (they are the last fit's result): literature values — a
     * forward pass at 70 % of what its GPU's GEMMs measurably reach (60 % of a Hopper datasheet peak) and weight/KV
     * streaming at 90 % of measured GEMM streaming (80 % of datasheet bandwidth), 10 µs per layer, the TP
     * all-reduce at 70 % of its measured isolated rate and nothing per all-reduce beyond it, grouped expert GEMMs at 95 % of dense,
     * 5 ms of HTTP frontend
     * (docs/timing.md). The leave-out folds start here too, so a held-out run never informs its own fit.
     */
    public static Profile prior(RooflineConfig base) {
        return new Profile(
                base.with("mfu", 0.7)
                        .with("mbu", 0.9)
                        .with("kv_mbu", 0.9)
                        .with("layer_overhead_us", 10)
                        .with("collective_overhead_us", 0)
                        .with("collective_efficiency", 0.7)
                        .with("moe_efficiency", 0.95),
                5.0,
                20.0);
    }

    /**
     * The second place every fit starts from ({@link #starts}): the measured kernels nearly as measured — {@code mfu},
     * {@code mbu}, {@code kv_mbu} and {@code moe_efficiency} at 0.95, what vLLM's GEMMs reach inside a decoder layer
     * in LLMServingSim's vLLM 0.19 layer profiles (0.95–1.0 of the GEMM-table rate at 1,024–2,048 tokens on the RTX
     * 4090 and RTX PRO 6000; docs/timing.md), and 1 µs per layer beyond the kernels the tables time (the attention
     * layer's own fixed time is one of them since item 26, docs/accuracy.md); the all-reduce and the frontend as the
     * prior has them. Levenberg–Marquardt is a local method and the corpus's cost has more than one basin (in {@code
     * mfu} about 0.5 and 0.9; with the measured attention layer, a fold of nine runs stayed at the prior's 10 µs per
     * layer); starting from both, set before any fold is seen, and keeping the fit with the lower training cost makes
     * a fold's result depend on its runs rather than on which basin the single start happened to fall into.
     */
    public static Profile kernelStart(RooflineConfig base) {
        Profile p = prior(base);
        return p.with("mfu", 0.95)
                .with("mbu", 0.95)
                .with("kv_mbu", 0.95)
                .with("moe_efficiency", 0.95)
                .with("layer_overhead_us", 1.0);
    }

    /** Where every fit starts: {@link #prior} (also the centre of {@link #priorWeight}) and {@link #kernelStart}. */
    public static List<Profile> starts(RooflineConfig base) {
        return List.of(prior(base), kernelStart(base));
    }

    /**
     * {@link #starts(RooflineConfig)} with each of {@code held} at {@code base}'s value instead of the start's (the
     * coefficients a fitter {@link #hold holds}; the frontend's are {@code frontend}'s). Starts that
     * become equal are kept once: a second fit from the same point would only repeat the first.
     */
    public static List<Profile> starts(RooflineConfig base, ClientFrontend frontend, List<String> held) {
        Profile given = new Profile(base, frontend.overheadMs(), frontend.perRequestUs());
        List<Profile> out = new ArrayList<>();
        for (Profile p : starts(base)) {
            for (String k : held) {
                p = p.with(k, given.get(k));
            }
            if (!out.contains(p)) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * How strongly a fit is held to where it starts ({@link #prior}) by default: not at all. With a weight w &gt; 0
     * ({@link #priorWeight}) each coefficient adds one residual, w times its distance from the prior in the search
     * coordinates (a Gaussian prior on them: a maximum a posteriori fit), so a coefficient the runs do not pin stays
     * near its literature value; at w = 0.05 a coefficient moved by one unit of its logit (e.g. {@code mfu} from 0.7
     * to 0.5) costs what a 5 % error on one statistic of one run costs. On the shared corpus that weight (set before
     * it was tried) helped leave-one-run-out and hurt leave-one-model-out (docs/accuracy.md), so it is not the
     * default.
     */
    public static final double DEFAULT_PRIOR_WEIGHT = 0;

    /** Runs with more requests than this are fitted over a window of their arrivals (the middle fifth). */
    public static final int WINDOW_ABOVE_REQUESTS = 2000;

    /** Seconds replayed before a fit window so the engine and its prefix cache are warm when the window opens. */
    public static final double WARMUP_S = 60;

    /** A case from a run folder, replayed with {@code base} (or servesim's defaults) under the run's deployment. */
    public static Case caseOf(RunFolder run, Path base, List<String> sets) {
        return caseOf(run.name(), run.gpu(), run.model(), run.config(base, sets), run.dir(), run.clientSide());
    }

    /**
     * A case from a run folder of the measured layout: {@code workload.jsonl} gives each request's arrival, and
     * {@code measured.jsonl} its latencies in the same order (rows with {@code error: true} are left out). Runs of
     * more than {@link #WINDOW_ABOVE_REQUESTS} requests are fitted on the middle fifth of their span (for the
     * two-stage runs of the shared corpus: the end of the first load stage and the start of the second), replayed
     * from {@link #WARMUP_S} before it.
     */
    public static Case caseOf(
            String name, String gpu, String model, SimConfig config, Path runDir, boolean clientSide) {
        double[] arrival = LayoutRows.arrivals(runDir.resolve("workload.jsonl"));
        LayoutRows m = LayoutRows.read(runDir.resolve("measured.jsonl"), arrival.length);
        double span = 0;
        for (double a : arrival) {
            span = Math.max(span, a);
        }
        MeasuredRun all = m.select(arrival, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
        if (arrival.length <= WINDOW_ABOVE_REQUESTS) {
            return new Case(name, gpu, model, config, all, all, 0, Double.POSITIVE_INFINITY, 0, 0, clientSide);
        }
        double from = 0.4 * span;
        double to = 0.6 * span;
        double replayFrom = Math.max(0, from - WARMUP_S);
        double firstReplayed = Double.POSITIVE_INFINITY;
        for (double a : arrival) {
            if (a >= replayFrom) {
                firstReplayed = Math.min(firstReplayed, a);
            }
        }
        return new Case(
                name,
                gpu,
                model,
                config,
                all,
                m.select(arrival, from, to),
                from,
                to,
                replayFrom,
                from - firstReplayed,
                clientSide);
    }

    /**
     * A parameter set: the roofline coefficients and the client-side frontend's two terms ({@link ClientFrontend}).
     *
     * @param roofline roofline coefficients
     * @param clientOverheadMs frontend time added to every client-measured token (so to TTFT and E2E)
     * @param clientPerRequestUs frontend time per request in a client-measured token's step
     */
    public record Profile(RooflineConfig roofline, double clientOverheadMs, double clientPerRequestUs) {
        /** A profile without the frontend's time per request in a step. */
        public Profile(RooflineConfig roofline, double clientOverheadMs) {
            this(roofline, clientOverheadMs, 0);
        }

        /** The value of a {@link #FITTED} name. */
        public double get(String key) {
            return switch (key) {
                case CLIENT_OVERHEAD -> clientOverheadMs;
                case CLIENT_PER_REQUEST -> clientPerRequestUs;
                default -> roofline.get(key);
            };
        }

        /** A copy with one {@link #FITTED} value replaced. */
        public Profile with(String key, double value) {
            return switch (key) {
                case CLIENT_OVERHEAD -> new Profile(roofline, value, clientPerRequestUs);
                case CLIENT_PER_REQUEST -> new Profile(roofline, clientOverheadMs, value);
                default -> new Profile(roofline.with(key, value), clientOverheadMs, clientPerRequestUs);
            };
        }

        /** The frontend this profile gives client-side runs. */
        public ClientFrontend frontend() {
            return new ClientFrontend(clientOverheadMs, clientPerRequestUs);
        }
    }

    /**
     * One run's errors under a profile.
     *
     * @param run the run
     * @param validation measured versus simulated (client overhead applied)
     */
    public record Score(Case run, Validation validation) {
        /** Mean error of a metric ({@code ttft_ms}, …) in %. */
        public double meanErrorPct(String metric) {
            return validation.metrics().get(metric).errorPct("mean");
        }
    }

    /**
     * A leave-out fold: what was held out, the profile fitted without it, and its scores on the held-out runs.
     *
     * @param kind {@code run}, {@code gpu} or {@code model}
     * @param heldOut the run, GPU or model held out
     * @param profile fitted on the other runs
     * @param scores the held-out runs' scores
     */
    public record Fold(String kind, String heldOut, Profile profile, List<Score> scores) {}

    private final List<Case> cases;
    private final int threads;
    private final int maxIterations;
    private double priorWeight = DEFAULT_PRIOR_WEIGHT;
    private List<String> fitted = FITTED;
    private int simulations;
    private java.util.function.Consumer<String> progress = line -> {};

    /** Creates a fitter over {@code cases}, replaying up to {@code threads} runs at once. */
    public CorpusFit(List<Case> cases, int threads, int maxIterations) {
        this.cases = List.copyOf(cases);
        this.threads = Math.max(1, threads);
        this.maxIterations = maxIterations;
    }

    /**
     * Sets the weight of the prior's residuals ({@link #DEFAULT_PRIOR_WEIGHT}; 0: plain least squares on the runs).
     */
    public CorpusFit priorWeight(double weight) {
        if (!(weight >= 0) || !Double.isFinite(weight)) {
            throw new IllegalArgumentException("prior weight must be a finite number >= 0, got " + weight);
        }
        this.priorWeight = weight;
        return this;
    }

    /**
     * Holds {@code keys} (names of {@link #FITTED}) where the starts put them: they are not fitted, so every fit and
     * fold keeps them at one value (a kernel fact from outside the corpus, say). The starts must carry that value
     * ({@link #starts(RooflineConfig, ClientFrontend, List)}).
     */
    public CorpusFit hold(List<String> keys) {
        for (String k : keys) {
            if (!FITTED.contains(k)) {
                throw new IllegalArgumentException("cannot hold '" + k + "': not a fitted coefficient " + FITTED);
            }
        }
        List<String> left = FITTED.stream().filter(k -> !keys.contains(k)).toList();
        if (left.isEmpty()) {
            throw new IllegalArgumentException("every coefficient is held: nothing to fit");
        }
        this.fitted = left;
        return this;
    }

    /** The coefficients this fitter fits, in order ({@link #FITTED} less those {@link #hold held}). */
    public List<String> fitted() {
        return fitted;
    }

    /** Sends one line per corpus evaluation (simulations so far, the cost, the candidate) to {@code sink}. */
    public CorpusFit onProgress(java.util.function.Consumer<String> sink) {
        this.progress = sink;
        return this;
    }

    /** Simulations run so far. */
    public int simulations() {
        return simulations;
    }

    /** Fits a profile on the runs accepted by {@code use}, starting from {@code start}. */
    public Profile fit(Profile start, Predicate<Case> use) {
        return fit(List.of(start), use);
    }

    /**
     * Fits from each start in turn and keeps the fit with the lower training cost (the first on a tie); the first
     * start is the centre of the prior ({@link #priorWeight}).
     */
    public Profile fit(List<Profile> starts, Predicate<Case> use) {
        List<Case> train = cases.stream().filter(use).toList();
        priorCentre = encode(starts.get(0));
        Profile best = null;
        double bestCost = Double.POSITIVE_INFINITY;
        for (Profile start : starts) {
            Profile p = fitFrom(start, train);
            double cost = 0;
            for (double v : residuals(p, train)) {
                cost += v * v;
            }
            if (cost < bestCost) {
                best = p;
                bestCost = cost;
            }
        }
        return best;
    }

    private Profile fitFrom(Profile start, List<Case> train) {
        double[] x0 = encode(start);
        lastBest = null; // the best point seen belongs to this fit only (another fit saw other runs)
        lastBestCost = Double.POSITIVE_INFINITY;
        Map<String, double[]> cache = new LinkedHashMap<>();
        java.util.function.Function<double[], double[]> residuals = x -> {
            String key = Arrays.toString(x);
            double[] r = cache.get(key);
            if (r == null) {
                r = residuals(decode(x, start), train);
                cache.clear(); // keep only the latest point: the Jacobian reuses it
                cache.put(key, r);
            }
            return r;
        };
        LeastSquaresBuilder b = new LeastSquaresBuilder()
                .start(x0)
                .target(new double[residualCount(train)])
                .model(x -> residuals.apply(x), x -> {
                    double[] f0 = residuals.apply(x);
                    double[][] j = new double[f0.length][x.length];
                    for (int d = 0; d < x.length; d++) {
                        double[] xd = x.clone();
                        xd[d] += FD_STEP;
                        double[] fd = residuals(decode(xd, start), train);
                        for (int i = 0; i < f0.length; i++) {
                            j[i][d] = (fd[i] - f0[i]) / FD_STEP;
                        }
                    }
                    return j;
                })
                .lazyEvaluation(true)
                .maxIterations(maxIterations)
                .maxEvaluations(maxIterations * 4);
        LeastSquaresOptimizer.Optimum best;
        try {
            best = new LevenbergMarquardtOptimizer()
                    .withInitialStepBoundFactor(1.0)
                    .withCostRelativeTolerance(1e-4)
                    .withParameterRelativeTolerance(1e-4)
                    .optimize(b.build());
        } catch (TooManyIterationsException | TooManyEvaluationsException e) {
            return lastBest == null ? start : decode(lastBest, start);
        }
        return decode(best.getPoint().toArray(), start);
    }

    private double[] lastBest;
    private double lastBestCost = Double.POSITIVE_INFINITY;

    /** Scores every run accepted by {@code use}, replaying each whole. */
    public List<Score> score(Profile p, Predicate<Case> use) {
        List<Case> runs = cases.stream().filter(use).toList();
        return parallel(runs, c -> new Score(c, validation(c, p, false)));
    }

    /** Leave-one-out folds over the distinct values of {@code key} (run name, GPU or model). */
    public List<Fold> leaveOneOut(String kind, Profile start, java.util.function.Function<Case, String> key) {
        return leaveOneOut(kind, List.of(start), key);
    }

    /** Leave-one-out folds as {@link #leaveOneOut(String, Profile, java.util.function.Function)}, each fitted from every start. */
    public List<Fold> leaveOneOut(String kind, List<Profile> starts, java.util.function.Function<Case, String> key) {
        List<String> values = cases.stream().map(key).distinct().sorted().toList();
        List<Fold> folds = new ArrayList<>();
        for (String v : values) {
            Profile p = fit(starts, c -> !key.apply(c).equals(v));
            folds.add(new Fold(kind, v, p, score(p, c -> key.apply(c).equals(v))));
        }
        return folds;
    }

    private int residualCount(List<Case> train) {
        return train.size() * RESIDUALS + (priorWeight > 0 ? fitted.size() : 0);
    }

    private double[] priorCentre;

    private double[] residuals(Profile p, List<Case> train) {
        List<double[]> parts = parallel(train, c -> residuals(validation(c, p, true)));
        double[] out = new double[residualCount(train)];
        for (int i = 0; i < parts.size(); i++) {
            System.arraycopy(parts.get(i), 0, out, i * RESIDUALS, RESIDUALS);
        }
        if (priorWeight > 0) {
            double[] x = encode(p);
            for (int d = 0; d < x.length; d++) {
                out[train.size() * RESIDUALS + d] = priorWeight * (x[d] - priorCentre[d]);
            }
        }
        double cost = 0;
        for (double v : out) {
            cost += v * v;
        }
        if (cost < lastBestCost) {
            lastBestCost = cost;
            lastBest = encode(p);
        }
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "sims %d cost %.5f", simulations, cost));
        for (String k : fitted) {
            line.append(String.format(Locale.ROOT, " %s=%.4g", k, p.get(k)));
        }
        progress.accept(line.toString());
        return out;
    }

    private static double[] residuals(Validation v) {
        return new double[] {capped(v, "ttft_ms", "mean"), capped(v, "tpot_ms", "mean"), capped(v, "e2e_ms", "mean")};
    }

    private static double capped(Validation v, String metric, String stat) {
        Validation.Metric m = v.metrics().get(metric);
        double meas = Validation.Metric.value(m.measured(), stat);
        double sim = Validation.Metric.value(m.simulated(), stat);
        if (!(meas > 0) || !(sim > 0)) {
            return 0;
        }
        return CAP * Math.tanh(Math.log(sim / meas) / CAP);
    }

    /** Measured versus simulated for one run under a profile (the whole run unless {@code windowed}). */
    public Validation validation(Case c, Profile p, boolean windowed) {
        List<String> sets = new ArrayList<>();
        sets.add("timing.calibration=null");
        for (String k : RooflineConfig.KEYS) {
            sets.add(String.format(
                    Locale.ROOT, "timing.roofline.%s=%.17g", k, p.roofline().get(k)));
        }
        MeasuredRun measured = c.measured();
        long scoredFromNanos = Long.MIN_VALUE;
        if (windowed && Double.isFinite(c.windowEndS())) {
            sets.add(String.format(Locale.ROOT, "workload.trace.start_ms=%.6f", c.replayFromS() * 1e3));
            sets.add(String.format(Locale.ROOT, "workload.trace.end_ms=%.6f", c.windowEndS() * 1e3));
            measured = c.window();
            scoredFromNanos = Math.round(c.scoredFromS() * 1e9);
        }
        SimConfig cfg = ConfigLoader.fromYaml(ConfigLoader.toYaml(c.config()), c.name(), sets)
                .withBaseDir(c.config().baseDir());
        synchronized (this) {
            simulations++;
        }
        return Validation.of(
                measured,
                Servesim.run(cfg).raw(),
                c.clientSide() ? p.frontend() : ClientFrontend.NONE,
                scoredFromNanos,
                Long.MAX_VALUE);
    }

    private <T> List<T> parallel(List<Case> runs, java.util.function.Function<Case, T> f) {
        if (threads == 1 || runs.size() == 1) {
            return runs.stream().map(f).toList();
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, runs.size()));
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Case c : runs) {
                futures.add(pool.submit(() -> f.apply(c)));
            }
            List<T> out = new ArrayList<>();
            for (Future<T> fu : futures) {
                out.add(fu.get());
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    /** The physical range each fitted coefficient is searched in (fractions of peak, µs or ms). */
    static double[] bounds(String key) {
        return switch (key) {
            case "mfu" -> new double[] {0.2, 1.0};
            case "mbu" -> new double[] {0.3, 1.0};
            case "kv_mbu", "moe_efficiency" -> new double[] {0.2, 1.0};
            case "collective_efficiency" -> new double[] {0.1, 1.0};
            case "layer_overhead_us" -> new double[] {0, 100};
            case "attention_overhead_us" -> new double[] {0, 5};
            case "collective_latency_us" -> new double[] {0.5, 50};
            case "collective_overhead_us" -> new double[] {0, 50};
            case "per_sequence_overhead_us" -> new double[] {0, 200};
            case CLIENT_OVERHEAD -> new double[] {0, 30};
            case CLIENT_PER_REQUEST -> new double[] {0, 300};
            default -> throw new IllegalArgumentException(key);
        };
    }

    private double[] encode(Profile p) {
        double[] x = new double[fitted.size()];
        for (int i = 0; i < x.length; i++) {
            String k = fitted.get(i);
            double[] b = bounds(k);
            double q = (p.get(k) - b[0]) / (b[1] - b[0]);
            q = Math.max(1e-3, Math.min(1 - 1e-3, q));
            x[i] = Math.log(q / (1 - q));
        }
        return x;
    }

    private Profile decode(double[] x, Profile base) {
        Profile p = base;
        for (int i = 0; i < x.length; i++) {
            String k = fitted.get(i);
            double[] b = bounds(k);
            p = p.with(k, b[0] + (b[1] - b[0]) / (1 + Math.exp(-x[i])));
        }
        return p;
    }

    /**
     * The client-side frontend time a config implies: its calibration profile's {@code frontend.client_overhead_ms}
     * when {@code timing.calibration} names one that has it, else {@link #DEFAULT_CLIENT_OVERHEAD_MS}.
     */
    public static double clientOverheadMs(SimConfig config) {
        return clientFrontend(config).overheadMs();
    }

    /**
     * The client-side frontend a config implies: its calibration profile's {@code frontend} section's
     * {@code client_overhead_ms} and {@code client_per_request_us} when {@code timing.calibration} names one that has
     * them, else {@link #DEFAULT_CLIENT_OVERHEAD_MS} and {@link #DEFAULT_CLIENT_PER_REQUEST_US}.
     */
    public static ClientFrontend clientFrontend(SimConfig config) {
        String path = config.timing().calibration();
        if (path == null) {
            return new ClientFrontend(DEFAULT_CLIENT_OVERHEAD_MS, DEFAULT_CLIENT_PER_REQUEST_US);
        }
        try {
            JsonNode frontend = YAMLMapper.builder()
                    .build()
                    .readTree(Files.readString(config.resolve(path)))
                    .path("frontend");
            for (String key : frontend.propertyNames()) {
                if (!key.equals(CLIENT_OVERHEAD) && !key.equals(CLIENT_PER_REQUEST)) {
                    throw new ConfigException(
                            "timing.calibration",
                            path + ": frontend." + key + ": unknown key (allowed: " + CLIENT_OVERHEAD + ", "
                                    + CLIENT_PER_REQUEST + ")");
                }
            }
            return new ClientFrontend(
                    frontendTerm(frontend, path, CLIENT_OVERHEAD, DEFAULT_CLIENT_OVERHEAD_MS),
                    frontendTerm(frontend, path, CLIENT_PER_REQUEST, DEFAULT_CLIENT_PER_REQUEST_US));
        } catch (IOException | JacksonException e) {
            throw new ConfigException("timing.calibration", path + " is not a calibration profile: " + e.getMessage());
        }
    }

    private static double frontendTerm(JsonNode frontend, String path, String key, double missing) {
        JsonNode v = frontend.get(key);
        if (v == null) {
            return missing;
        }
        if (!v.isNumber() || !(v.asDouble() >= 0) || !Double.isFinite(v.asDouble())) {
            throw new ConfigException("timing.calibration", path + ": frontend." + key + ": expected a number >= 0");
        }
        return v.asDouble();
    }

    /** The calibration profile YAML ({@code timing.calibration} loads its {@code roofline} section). */
    public static String profileYaml(
            Profile p, String corpus, double priorWeight, List<Score> inSample, List<Fold> folds) {
        return profileYaml(p, FITTED, corpus, priorWeight, inSample, folds);
    }

    /** {@link #profileYaml(Profile, String, double, List, List)} of a fit of {@code fitted} only (the rest held). */
    public static String profileYaml(
            Profile p, List<String> fitted, String corpus, double priorWeight, List<Score> inSample, List<Fold> folds) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                "# servesim calibration profile (servesim calibrate --corpus); load with timing.calibration: <this file>\n");
        sb.append("roofline:\n");
        for (String k : RooflineConfig.KEYS) {
            sb.append(String.format(Locale.ROOT, "  %s: %.6g%n", k, p.roofline().get(k)));
        }
        sb.append("frontend:                 # added to TTFT and E2E of client-side (HTTP) measurements only\n");
        sb.append(String.format(Locale.ROOT, "  %s: %.4f%n", CLIENT_OVERHEAD, p.clientOverheadMs()));
        sb.append(String.format(
                Locale.ROOT,
                "  %s: %.4f   # per request in the token's engine step%n",
                CLIENT_PER_REQUEST,
                p.clientPerRequestUs()));
        sb.append("fit:\n");
        sb.append("  corpus: \"").append(corpus.replace("\"", "'")).append("\"\n");
        sb.append("  fitted: ").append(fitted).append('\n');
        List<String> notFitted =
                FITTED.stream().filter(k -> !fitted.contains(k)).toList();
        if (!notFitted.isEmpty()) {
            sb.append("  held:                    # not fitted: kept at these values in every fit and fold\n");
            for (String k : notFitted) {
                sb.append(String.format(Locale.ROOT, "    %s: %.6g%n", k, p.get(k)));
            }
        }
        sb.append(String.format(Locale.ROOT, "  prior_weight: %s%n", priorWeight));
        if (fitted.contains("mfu")) {
            sb.append("  starts: [prior, kernel_mfu_0.95]   # every fit from both, the lower training cost kept\n");
        } else {
            sb.append("  starts: [prior]   # with mfu held the kernel-mfu start is the same point\n");
        }
        sb.append("  in_sample_mean_abs_error_pct:\n");
        appendErrors(sb, inSample);
        for (String kind : List.of("run", "gpu", "model")) {
            List<Score> held = new ArrayList<>();
            for (Fold f : folds) {
                if (f.kind().equals(kind)) {
                    held.addAll(f.scores());
                }
            }
            if (!held.isEmpty()) {
                sb.append("  leave_one_").append(kind).append("_out_mean_abs_error_pct:\n");
                appendErrors(sb, held);
            }
        }
        return sb.toString();
    }

    private static void appendErrors(StringBuilder sb, List<Score> scores) {
        for (String m : List.of("ttft_ms", "tpot_ms", "e2e_ms")) {
            sb.append(String.format(
                    Locale.ROOT,
                    "    %s: {mean: %.2f, p99: %.2f}%n",
                    m.replace("_ms", ""),
                    meanAbsErrorPct(scores, m, "mean"),
                    meanAbsErrorPct(scores, m, "p99")));
        }
    }

    /** Mean |error| in % of a statistic over scores. */
    public static double meanAbsErrorPct(List<Score> scores, String metric, String stat) {
        double s = 0;
        for (Score sc : scores) {
            s += Math.abs(sc.validation().metrics().get(metric).errorPct(stat));
        }
        return scores.isEmpty() ? 0 : s / scores.size();
    }
}
