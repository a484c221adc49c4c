package io.servesim.validate;

import io.servesim.api.Servesim;
import io.servesim.config.ConfigLoader;
import io.servesim.config.RooflineConfig;
import io.servesim.config.SimConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Fits three of the roofline's physical parameters to one measured run by simulation in the loop: compute
 * efficiency (mfu), weight-read efficiency (mbu), and in the synchronous loop the per-step CPU overhead
 * ({@link #PARAMETERS}) or in the async loop, which hides that overhead behind the GPU part, the KV-read efficiency
 * ({@link #ASYNC_PARAMETERS}). The per-sequence overhead is not fitted: per-run latency statistics cannot tell it
 * from the per-step overhead (both add to every step of a steady batch), so it keeps its configured value. The
 * search is a deterministic pattern
 * search (Hooke & Jeeves, J. ACM 1961) in transformed coordinates (logit of the efficiencies, log of the
 * overheads), so every candidate stays inside its bounds: efficiencies in (0, 1], overheads in [0.1 µs, 1 s].
 * The objective is the sum of squared relative errors of the TTFT, TPOT and E2E mean (weight 2), p50, p90, p95 and
 * p99: the spread of TPOT over requests with different contexts is what tells memory efficiency (KV reads grow with
 * context) from the fixed per-step cost.
 */
public final class Calibrator {
    /** Parameters fitted in the synchronous engine loop, in order. */
    public static final List<String> PARAMETERS = List.of("mfu", "mbu", "step_overhead_us");

    /**
     * Parameters fitted in the async loop (vLLM's default): the CPU part is hidden behind the GPU part there, so the
     * KV-read efficiency takes the per-step overhead's place.
     */
    public static final List<String> ASYNC_PARAMETERS = List.of("mfu", "mbu", "kv_mbu");

    private static final double MIN_EFFICIENCY = 0.01;
    private static final double MAX_EFFICIENCY = 1.0;
    private static final double MIN_OVERHEAD_US = 0.1;
    private static final double MAX_OVERHEAD_US = 1e6;

    private final SimConfig base;
    private final MeasuredRun measured;
    private final int maxEvaluations;
    private final List<String> fitted;
    private int evaluations;

    /**
     * The fitted parameters.
     *
     * @param roofline the best parameters found
     * @param validation the comparison at the best parameters
     * @param objective the objective there
     * @param evaluations simulations run
     * @param atBound parameters within 1 % of a bound
     */
    public record Result(
            RooflineConfig roofline, Validation validation, double objective, int evaluations, List<String> atBound) {}

    /** Creates a calibrator around a roofline config and a measured run. */
    public Calibrator(SimConfig base, MeasuredRun measured, int maxEvaluations) {
        this.base = base;
        this.measured = measured;
        this.maxEvaluations = maxEvaluations;
        this.fitted = base.engine().scheduler().asyncScheduling() ? ASYNC_PARAMETERS : PARAMETERS;
    }

    /** Runs the search from the config's roofline parameters. */
    public Result fit() {
        RooflineConfig start = base.timing().roofline();
        double[] x = new double[fitted.size()];
        for (int i = 0; i < x.length; i++) {
            String k = fitted.get(i);
            x[i] = isOverhead(k) ? Math.log(start.get(k)) : logit(start.get(k));
        }
        double fx = objective(x);
        double step = 0.5;
        while (step > 0.002 && evaluations < maxEvaluations) {
            double[] e = explore(x, fx, step);
            double fe = last;
            if (fe < fx - 1e-15) {
                // pattern moves: keep stepping along the direction that just paid off (follows curved valleys)
                while (evaluations < maxEvaluations) {
                    double[] p = new double[x.length];
                    for (int d = 0; d < x.length; d++) {
                        p[d] = e[d] + (e[d] - x[d]);
                    }
                    x = e;
                    fx = fe;
                    double fp = objective(p);
                    double[] e2 = explore(p, fp, step);
                    if (last < fx - 1e-15) {
                        e = e2;
                        fe = last;
                    } else {
                        break;
                    }
                }
            } else {
                step /= 2;
            }
        }
        RooflineConfig best = params(x);
        Validation v = Validation.of(measured, Servesim.run(with(best)).raw());
        List<String> atBound = new ArrayList<>();
        for (String k : fitted) {
            double value = best.get(k);
            double lo = isOverhead(k) ? MIN_OVERHEAD_US : MIN_EFFICIENCY;
            double hi = isOverhead(k) ? MAX_OVERHEAD_US : MAX_EFFICIENCY;
            if (value <= lo * 1.01 || value >= hi * 0.99) {
                atBound.add(k);
            }
        }
        return new Result(best, v, fx, evaluations, atBound);
    }

    private double last;

    /** Hooke–Jeeves exploratory move around {@code x}: each coordinate ± step, kept when better; sets {@link #last}. */
    private double[] explore(double[] x, double fx, double step) {
        double[] y = x.clone();
        double fy = fx;
        for (int d = 0; d < y.length && evaluations < maxEvaluations; d++) {
            for (int sign : new int[] {1, -1}) {
                double keep = y[d];
                y[d] = keep + sign * step;
                double f = objective(y);
                if (f < fy) {
                    fy = f;
                    break;
                }
                y[d] = keep;
            }
        }
        last = fy;
        return y;
    }

    private double objective(double[] x) {
        evaluations++;
        Validation v = Validation.of(measured, Servesim.run(with(params(x))).raw());
        double f = 0;
        for (Validation.Metric m : v.metrics().values()) {
            for (String stat : Validation.STATS) {
                double e = m.errorPct(stat) / 100;
                f += stat.equals("mean") ? 2 * e * e : e * e; // the shape of each distribution separates the terms
            }
        }
        return f;
    }

    private SimConfig with(RooflineConfig r) {
        List<String> sets = List.of(
                "timing.calibration=null",
                String.format(Locale.ROOT, "timing.roofline.mfu=%.17g", r.mfu()),
                String.format(Locale.ROOT, "timing.roofline.mbu=%.17g", r.mbu()),
                String.format(Locale.ROOT, "timing.roofline.step_overhead_us=%.17g", r.stepOverheadUs()),
                String.format(
                        Locale.ROOT, "timing.roofline.per_sequence_overhead_us=%.17g", r.perSequenceOverheadUs()));
        return ConfigLoader.fromYaml(ConfigLoader.toYaml(base), "calibration", sets)
                .withBaseDir(base.baseDir());
    }

    private RooflineConfig params(double[] x) {
        RooflineConfig r = base.timing().roofline();
        for (int i = 0; i < x.length; i++) {
            String k = fitted.get(i);
            r = r.with(
                    k,
                    isOverhead(k)
                            ? clamp(Math.exp(x[i]), MIN_OVERHEAD_US, MAX_OVERHEAD_US)
                            : clamp(sigmoid(x[i]), MIN_EFFICIENCY, MAX_EFFICIENCY));
        }
        return r;
    }

    private static boolean isOverhead(String key) {
        return key.endsWith("_us");
    }

    /** The parameters this calibrator fits ({@link #PARAMETERS} or {@link #ASYNC_PARAMETERS}). */
    public List<String> fitted() {
        return fitted;
    }

    private static double logit(double p) {
        double q = clamp(p, 1e-6, 1 - 1e-6);
        return Math.log(q / (1 - q));
    }

    private static double sigmoid(double x) {
        return 1 / (1 + Math.exp(-x));
    }

    private static double clamp(double v, double lo, double hi) {
        return Math.max(lo, Math.min(hi, v));
    }

    /** The calibration profile YAML that {@code timing.calibration} loads. */
    public static String profileYaml(Result r, String measuredPath, SimConfig base) {
        StringBuilder sb = new StringBuilder();
        sb.append("# servesim calibration profile (servesim calibrate); load with timing.calibration: <this file>\n");
        sb.append("roofline:\n");
        sb.append(String.format(Locale.ROOT, "  mfu: %.6f%n", r.roofline().mfu()));
        sb.append(String.format(Locale.ROOT, "  mbu: %.6f%n", r.roofline().mbu()));
        sb.append(String.format(Locale.ROOT, "  kv_mbu: %.6f%n", r.roofline().kvMbu()));
        sb.append(String.format(
                Locale.ROOT, "  step_overhead_us: %.3f%n", r.roofline().stepOverheadUs()));
        sb.append(String.format(
                Locale.ROOT, "  per_sequence_overhead_us: %.3f%n", r.roofline().perSequenceOverheadUs()));
        sb.append("fit:\n");
        sb.append("  measured: \"").append(measuredPath.replace("\"", "'")).append("\"\n");
        sb.append("  model: ").append(base.timing().model()).append('\n');
        sb.append("  gpu: ").append(base.timing().gpu()).append('\n');
        sb.append("  evaluations: ").append(r.evaluations()).append('\n');
        for (var e : r.validation().metrics().entrySet()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  %s_mean_error_pct: %.2f%n",
                    e.getKey().replace("_ms", ""),
                    e.getValue().errorPct("mean")));
        }
        sb.append("  at_bound: ").append(r.atBound()).append('\n');
        return sb.toString();
    }
}
