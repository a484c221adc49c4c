package io.servesim.sweep;

import io.servesim.api.Result;
import io.servesim.api.Servesim;
import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestRecord;
import io.servesim.metrics.Stats;
import io.servesim.report.Summary;
import io.servesim.run.RunResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Sweep logic shared by every engine: generating points (grid in canonical order, seeded random subsets, bisection
 * on load per deployment), evaluating one point (a pure function of its {@link RunSpec}), and the whole search.
 */
public final class Sweeps {
    /** Overrides every point gets: rows kept in memory (goodput needs them), no time series (unused). */
    static final List<String> POINT_DEFAULTS = List.of("output.stream_requests=false", "output.timeseries_tick_s=0");

    private Sweeps() {}

    /** The deployments: the Cartesian product of the space, last dimension fastest (canonical order). */
    public static List<List<String>> grid(SweepSpec spec) {
        List<List<String>> out = new ArrayList<>();
        out.add(List.of());
        for (SweepSpec.Dimension d : spec.dimensions()) {
            List<List<String>> next = new ArrayList<>(out.size() * d.values().size());
            for (List<String> prefix : out) {
                for (String v : d.values()) {
                    List<String> p = new ArrayList<>(prefix);
                    p.add(d.path() + "=" + v);
                    next.add(p);
                }
            }
            out = next;
        }
        return out;
    }

    /** The points of a grid or random search (bisect generates its points round by round). */
    public static List<RunSpec> points(SweepSpec spec) {
        List<List<String>> grid = grid(spec);
        List<List<String>> chosen = grid;
        if (spec.search().equals("random")) {
            int[] idx = new int[grid.size()];
            for (int i = 0; i < idx.length; i++) {
                idx[i] = i;
            }
            SplittableRandom rng = new SplittableRandom(spec.seed());
            for (int i = idx.length - 1; i > 0; i--) { // Fisher–Yates, seeded
                int j = rng.nextInt(i + 1);
                int t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
            }
            int n = Math.min(spec.randomPoints(), idx.length);
            int[] pick = Arrays.copyOf(idx, n);
            Arrays.sort(pick); // keep the grid's canonical order among the chosen
            chosen = new ArrayList<>();
            for (int i : pick) {
                chosen.add(grid.get(i));
            }
        }
        List<RunSpec> out = new ArrayList<>();
        for (int i = 0; i < chosen.size(); i++) {
            out.add(spec(spec, i, i, chosen.get(i)));
        }
        return out;
    }

    private static RunSpec spec(SweepSpec spec, int id, int deployment, List<String> settings) {
        List<String> o = new ArrayList<>(POINT_DEFAULTS);
        o.addAll(settings);
        return new RunSpec(id, deployment, spec.baseYaml(), spec.baseSource(), spec.baseDir(), o);
    }

    /**
     * Checks the first point's config binds before anything runs: a misspelt path fails every point, so it is a
     * usage error; a bad value at one point only fails that point (reported with its error, the sweep goes on).
     */
    public static void validate(SweepSpec spec, List<RunSpec> points) {
        for (RunSpec p : points.subList(0, Math.min(1, points.size()))) {
            try {
                p.config();
            } catch (ConfigException e) {
                throw new ConfigException(
                        e.path(),
                        e.problem() + " (sweep point " + p.pointId() + ": "
                                + String.join(
                                        " ",
                                        p.overrides()
                                                .subList(
                                                        POINT_DEFAULTS.size(),
                                                        p.overrides().size())) + ")");
            }
        }
    }

    /**
     * What the config loader has to tell the user about this sweep (e.g. a deprecated key name in the base config or
     * a {@code space:} path), found once by loading the first point with every dimension (and the bisect load) set;
     * empty when that point does not load ({@link #validate} then reports why).
     */
    public static List<String> configWarnings(SweepSpec spec) {
        List<String> settings = new ArrayList<>(grid(spec).get(0));
        if (spec.search().equals("bisect")) {
            settings.add(spec.loadPath() + "=" + Double.toString(spec.low()));
        }
        RunSpec first = spec(spec, 0, 0, settings);
        try {
            return ConfigLoader.fromYamlWithWarnings(first.baseYaml(), first.baseSource(), first.overrides())
                    .warnings();
        } catch (ConfigException e) {
            return List.of();
        }
    }

    /**
     * Runs one point and derives its metrics: a pure function of the spec and the point (no shared state, so any
     * engine and any parallelism give the same result). A config or simulation error becomes a failed result.
     */
    public static PointResult evaluate(SweepSpec spec, RunSpec point) {
        try {
            SimConfig c = point.config();
            Result run = Servesim.run(c);
            RunResult r = run.raw();
            Summary s = run.summary();
            // GPUs and their price per hour, pool by pool in a heterogeneous or disaggregated fleet
            int gpus = 0;
            double fleetPerHour = 0;
            java.util.List<io.servesim.config.PoolConfig> pools = c.cluster().pools();
            for (int p = 0; p < Math.max(1, pools.size()); p++) {
                io.servesim.config.TimingConfig t =
                        pools.isEmpty() ? c.timing() : pools.get(p).timing();
                int w = pools.isEmpty() ? c.cluster().workers() : pools.get(p).workers();
                int g = w * c.cluster().attentionDpOfPool(p) * t.tensorParallel();
                gpus += g;
                fleetPerHour += g * spec.costPerGpuHour(t.gpu() == null ? "default" : t.gpu());
            }
            double seconds = r.endNanos() / 1e9;
            long outputTokens = s.totalOutputTokens();
            // with output.client_frontend the SLOs and the point's latency columns are the client's view
            io.servesim.metrics.ClientView client =
                    s.client() == null ? null : s.client().view();
            long good = goodRequests(spec, r.log(), client);
            double goodput = seconds > 0 ? good / seconds : 0;
            double tokS = s.outputThroughputTokS();
            double cost = outputTokens > 0 ? fleetPerHour * seconds / 3600 / (outputTokens / 1e6) : Double.NaN;
            boolean pass = true;
            Stats ttftMs = s.client() != null ? s.client().ttftMs() : s.ttftMs();
            Stats tpotMs = s.client() != null ? s.client().tpotMs() : s.tpotMs();
            Stats e2eMs = s.client() != null ? s.client().e2eMs() : s.e2eMs();
            for (SweepSpec.Slo slo : spec.slos()) {
                pass &= percentile(ttftMs, tpotMs, e2eMs, slo) <= slo.thresholdMs();
            }
            pass &= s.completed() > 0;
            double objective = switch (spec.objective()) {
                case "throughput_per_gpu" -> tokS / gpus;
                case "cost_per_million_tokens" -> cost;
                default -> goodput / gpus;
            };
            return new PointResult(
                    point.pointId(),
                    point.deployment(),
                    point.overrides(),
                    null,
                    gpus,
                    s.completed(),
                    seconds,
                    ttftMs.p50(),
                    ttftMs.p90(),
                    ttftMs.p99(),
                    tpotMs.p90(),
                    tpotMs.p99(),
                    e2eMs.p90(),
                    e2eMs.p99(),
                    tokS,
                    goodput,
                    tokS / gpus,
                    goodput / gpus,
                    cost,
                    pass,
                    objective);
        } catch (ConfigException e) {
            return PointResult.failed(point, "config error: " + e.getMessage());
        } catch (RuntimeException e) {
            return PointResult.failed(point, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static double percentile(Stats ttftMs, Stats tpotMs, Stats e2eMs, SweepSpec.Slo slo) {
        Stats st = switch (slo.metric()) {
            case "ttft" -> ttftMs;
            case "tpot" -> tpotMs;
            default -> e2eMs;
        };
        return switch (slo.percentile()) {
            case 50 -> st.p50();
            case 90 -> st.p90();
            case 95 -> st.p95();
            default -> st.p99();
        };
    }

    /**
     * Completed requests whose own TTFT, TPOT and E2E meet every SLO threshold (DistServe's goodput), as the engine
     * times them or, with {@code client} non-null, as the client does ({@code output.client_frontend}).
     */
    static long goodRequests(SweepSpec spec, RequestLog log, io.servesim.metrics.ClientView client) {
        long good = 0;
        for (int i = 0; i < log.size(); i++) {
            RequestRecord r = log.get(i);
            if (!r.completed()) {
                continue;
            }
            double ttft = client != null ? client.ttftMs(i) : r.ttftNanos() / 1e6;
            double e2e = client != null ? client.e2eMs(i) : r.e2eNanos() / 1e6;
            double tpot = 0; // one token: no TPOT, nothing to violate
            if (r.outputTokens() >= 2) {
                tpot = client != null ? client.tpotMs(i) : r.tpotMs();
            }
            boolean ok = true;
            for (SweepSpec.Slo slo : spec.slos()) {
                double v = switch (slo.metric()) {
                    case "ttft" -> ttft;
                    case "tpot" -> tpot;
                    default -> e2e;
                };
                ok &= v <= slo.thresholdMs();
            }
            if (ok) {
                good++;
            }
        }
        return good;
    }

    /** The outcome of a sweep: every evaluated point, and for bisect the capacity of each deployment. */
    public record Outcome(List<PointResult> results, List<Capacity> capacities) {}

    /**
     * A deployment's capacity (bisect): the highest load that met the SLO.
     *
     * @param deployment deployment index
     * @param settings the deployment's settings
     * @param capacity highest passing load, or NaN when even the lowest failed
     */
    public record Capacity(int deployment, List<String> settings, double capacity) {}

    /** Runs the whole search on {@code engine}. */
    public static Outcome run(SweepSpec spec, SweepEngine engine, boolean failFast) {
        if (!spec.search().equals("bisect")) {
            List<RunSpec> points = points(spec);
            validate(spec, points);
            return new Outcome(engine.run(spec, points, failFast), List.of());
        }
        List<List<String>> deployments = grid(spec);
        int n = deployments.size();
        double[] lo = new double[n];
        double[] hi = new double[n];
        boolean[] loPass = new boolean[n];
        boolean[] settled = new boolean[n];
        List<PointResult> all = new ArrayList<>();
        int nextId = 0;
        // round 0: both ends
        List<RunSpec> round = new ArrayList<>();
        for (int d = 0; d < n; d++) {
            round.add(load(spec, nextId++, d, deployments.get(d), spec.low()));
            round.add(load(spec, nextId++, d, deployments.get(d), spec.high()));
        }
        validate(spec, round);
        List<PointResult> r0 = engine.run(spec, round, failFast);
        all.addAll(r0);
        if (failFast && anyFailed(r0)) {
            return new Outcome(all, List.of());
        }
        for (int d = 0; d < n; d++) {
            lo[d] = spec.low();
            hi[d] = spec.high();
            loPass[d] = r0.get(2 * d).sloPass();
            boolean hiPass = r0.get(2 * d + 1).sloPass();
            if (hiPass) {
                lo[d] = spec.high();
                loPass[d] = true;
                settled[d] = true;
            } else if (!loPass[d]) {
                settled[d] = true;
            }
        }
        for (int it = 0; it < spec.iterations(); it++) {
            List<RunSpec> mids = new ArrayList<>();
            List<Integer> who = new ArrayList<>();
            for (int d = 0; d < n; d++) {
                if (!settled[d]) {
                    mids.add(load(spec, nextId++, d, deployments.get(d), (lo[d] + hi[d]) / 2));
                    who.add(d);
                }
            }
            if (mids.isEmpty()) {
                break;
            }
            List<PointResult> res = engine.run(spec, mids, failFast);
            all.addAll(res);
            if (failFast && anyFailed(res)) {
                return new Outcome(all, List.of()); // no capacities from a sweep stopped early
            }
            for (int k = 0; k < res.size(); k++) {
                int d = who.get(k);
                double mid = (lo[d] + hi[d]) / 2;
                if (res.get(k).sloPass()) {
                    lo[d] = mid;
                } else {
                    hi[d] = mid;
                }
            }
        }
        List<Capacity> caps = new ArrayList<>();
        for (int d = 0; d < n; d++) {
            caps.add(new Capacity(d, deployments.get(d), loPass[d] ? lo[d] : Double.NaN));
        }
        return new Outcome(all, caps);
    }

    private static boolean anyFailed(List<PointResult> results) {
        for (PointResult r : results) {
            if (r.error() != null) {
                return true;
            }
        }
        return false;
    }

    private static RunSpec load(SweepSpec spec, int id, int deployment, List<String> settings, double load) {
        List<String> s = new ArrayList<>(settings);
        s.add(spec.loadPath() + "=" + Double.toString(load));
        return spec(spec, id, deployment, s);
    }
}
