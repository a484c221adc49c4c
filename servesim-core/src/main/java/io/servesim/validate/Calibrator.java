package io.servesim.validate;

import io.servesim.api.Servesim;
import io.servesim.config.ConfigLoader;
import io.servesim.config.RooflineConfig;
import io.servesim.config.SimConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Fits three of the roofline's physical parameters — compute efficiency (mfu), memory efficiency (mbu) and the
 * per-step overhead — to a measured run by simulation in the loop. The per-sequence overhead is not fitted: per-run
 * latency statistics cannot tell it from the per-step overhead (both add to every step of a steady batch), so it
 * keeps its configured value. The search is a deterministic pattern
 * search (Hooke & Jeeves, J. ACM 1961) in transformed coordinates (logit of the efficiencies, log of the
 * overheads), so every candidate stays inside its bounds: efficiencies in (0, 1], overheads in [0.1 µs, 1 s].
 * The objective is the sum of squared relative errors of the TTFT, TPOT and E2E mean (weight 2), p50, p90, p95 and
 * p99: the spread of TPOT over requests with different contexts is what tells memory efficiency (KV reads grow with
 * context) from the fixed per-step cost.
 */
public final class Calibrator {
    /** Parameter names, in order. */
    public static final List<String> PARAMETERS = List.of("mfu", "mbu", "step_overhead_us");

    private static final double MIN_EFFICIENCY = 0.01;
    private static final double MAX_EFFICIENCY = 1.0;
    private static final double MIN_OVERHEAD_US = 0.1;
    private static final double MAX_OVERHEAD_US = 1e6;

    private final SimConfig base;
    private final MeasuredRun measured;
    private final int maxEvaluations;
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
    }

    /** Runs the search from the config's roofline parameters. */
    public Result fit() {
        RooflineConfig start = base.timing().roofline();
        double[] x = {
            logit(start.mfu()),
            logit(start.mbu()),
            Math.log(start.stepOverheadUs()),
            Math.log(start.perSequenceOverheadUs())
        };
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
        double[] values = {best.mfu(), best.mbu(), best.stepOverheadUs()};
        for (int i = 0; i < values.length; i++) {
            boolean efficiency = i < 2;
            double lo = efficiency ? MIN_EFFICIENCY : MIN_OVERHEAD_US;
            double hi = efficiency ? MAX_EFFICIENCY : MAX_OVERHEAD_US;
            if (values[i] <= lo * 1.01 || values[i] >= hi * 0.99) {
                atBound.add(PARAMETERS.get(i));
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
        return ConfigLoader.fromYaml(ConfigLoader.toYaml(base), "calibration", sets);
    }

    private RooflineConfig params(double[] x) {
        RooflineConfig b = base.timing().roofline();
        return b.with("mfu", clamp(sigmoid(x[0]), MIN_EFFICIENCY, MAX_EFFICIENCY))
                .with("mbu", clamp(sigmoid(x[1]), MIN_EFFICIENCY, MAX_EFFICIENCY))
                .with("step_overhead_us", clamp(Math.exp(x[2]), MIN_OVERHEAD_US, MAX_OVERHEAD_US));
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
