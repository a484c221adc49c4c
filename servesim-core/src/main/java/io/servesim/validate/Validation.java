package io.servesim.validate;

import io.servesim.config.ClientFrontend;
import io.servesim.metrics.ClientView;
import io.servesim.metrics.Stats;
import io.servesim.run.RunResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Measured versus simulated latency distributions: mean, p50, p90, p95, p99 of TTFT, TPOT and E2E with the
 * relative error of each ({@code (simulated − measured) / measured}), the two-sample Kolmogorov–Smirnov distance
 * per metric, and output throughput.
 *
 * @param metrics per metric name ({@code ttft_ms}, {@code tpot_ms}, {@code e2e_ms}): the comparison
 * @param measuredOutputTokS measured output tokens per second (NaN if unknown)
 * @param simulatedOutputTokS simulated output tokens per second
 */
public record Validation(Map<String, Metric> metrics, double measuredOutputTokS, double simulatedOutputTokS) {
    /** Statistic names, in table order. */
    public static final List<String> STATS = List.of("mean", "p50", "p90", "p95", "p99");

    /**
     * One metric's comparison.
     *
     * @param measured measured statistics
     * @param simulated simulated statistics
     * @param ks the Kolmogorov–Smirnov distance, sup |F_measured − F_simulated|
     */
    public record Metric(Stats measured, Stats simulated, double ks) {
        /** The value of a statistic ({@link #STATS}) of {@code s}. */
        public static double value(Stats s, String stat) {
            return switch (stat) {
                case "mean" -> s.mean();
                case "p50" -> s.p50();
                case "p90" -> s.p90();
                case "p95" -> s.p95();
                case "p99" -> s.p99();
                default -> throw new IllegalArgumentException(stat);
            };
        }

        /** Relative error of a statistic in %. */
        public double errorPct(String stat) {
            double m = value(measured, stat);
            return m == 0 ? 0 : (value(simulated, stat) - m) / m * 100;
        }
    }

    /** Compares a measured run with a simulated one (completed requests only). */
    public static Validation of(MeasuredRun measured, RunResult sim) {
        return of(measured, sim, 0);
    }

    /**
     * Compares a measured run with a simulated one whose TTFT and E2E gain {@code clientOverheadMs}: the frontend,
     * HTTP and tokenisation time a client-side measurement includes and the engine does not see.
     */
    public static Validation of(MeasuredRun measured, RunResult sim, double clientOverheadMs) {
        return of(measured, sim, clientOverheadMs, Long.MIN_VALUE);
    }

    /**
     * As {@link #of(MeasuredRun, RunResult, double)}, counting only the simulated requests that arrived at or after
     * {@code fromArrivalNanos} (a replay that starts early to warm the engine up).
     */
    public static Validation of(MeasuredRun measured, RunResult sim, double clientOverheadMs, long fromArrivalNanos) {
        return of(measured, sim, clientOverheadMs, fromArrivalNanos, Long.MAX_VALUE);
    }

    /**
     * As {@link #of(MeasuredRun, RunResult, double, long)}, counting only the simulated requests that arrived in
     * [{@code fromArrivalNanos}, {@code toArrivalNanos}).
     */
    public static Validation of(
            MeasuredRun measured, RunResult sim, double clientOverheadMs, long fromArrivalNanos, long toArrivalNanos) {
        return of(measured, sim, ClientFrontend.constant(clientOverheadMs), fromArrivalNanos, toArrivalNanos);
    }

    /**
     * As {@link #of(MeasuredRun, RunResult, double, long, long)} with both parts of a client-side frontend: each
     * simulated first and last token gains {@link ClientFrontend#delayMs} of the requests its rank was serving then
     * ({@link ClientView}), and TPOT is derived from them as the measurement derives it.
     */
    public static Validation of(
            MeasuredRun measured, RunResult sim, ClientFrontend frontend, long fromArrivalNanos, long toArrivalNanos) {
        ClientView.Samples client = ClientView.of(sim.log(), frontend).samples(fromArrivalNanos, toArrivalNanos);
        long outputs = client.outputTokens();
        Map<String, Metric> metrics = new LinkedHashMap<>();
        metrics.put("ttft_ms", metric(measured.ttftMs(), client.ttftMs()));
        metrics.put("tpot_ms", metric(measured.tpotMs(), client.tpotMs())); // (E2E − TTFT) / (outputs − 1)
        metrics.put("e2e_ms", metric(measured.e2eMs(), client.e2eMs()));
        double simSeconds = lastCompletedTokenNanos(sim) / 1e9;
        return new Validation(
                metrics,
                measured.outputTokens() >= 0 && measured.durationS() > 0
                        ? measured.outputTokens() / measured.durationS()
                        : Double.NaN,
                simSeconds > 0 ? outputs / simSeconds : 0);
    }

    /**
     * The simulated span the output throughput divides by: to the last token of a completed request, as the measured
     * span ends at the last token of a successful one (a request whose client gave up, or a rejection, ends the
     * simulated run later without adding output); the run's end when nothing completed.
     */
    private static long lastCompletedTokenNanos(RunResult sim) {
        io.servesim.metrics.RequestLog log = sim.log();
        long last = -1;
        for (int i = 0; i < log.size(); i++) {
            if (log.status(i).completed()) {
                last = Math.max(last, log.lastTokenNanos(i));
            }
        }
        return last > 0 ? last : sim.endNanos();
    }

    private static Metric metric(double[] measured, double[] simulated) {
        double[] m = measured.clone();
        double[] s = simulated.clone();
        Stats ms = Stats.of(m, m.length); // sorts m
        Stats ss = Stats.of(s, s.length); // sorts s
        return new Metric(ms, ss, ks(m, s));
    }

    /**
     * Two-sample Kolmogorov–Smirnov distance of two sorted samples; values within 1 ns (1e-6 ms) of each other count
     * as equal, so that timestamps converted through seconds, and TPOTs kept in whole picoseconds, compare equal to
     * the nanoseconds they came from.
     */
    static double ks(double[] a, double[] b) {
        if (a.length == 0 || b.length == 0) {
            return a.length == b.length ? 0 : 1;
        }
        final double tie = 1e-6;
        int i = 0;
        int j = 0;
        double d = 0;
        while (i < a.length && j < b.length) {
            double x = Math.min(a[i], b[j]) + tie;
            while (i < a.length && a[i] <= x) {
                i++;
            }
            while (j < b.length && b[j] <= x) {
                j++;
            }
            d = Math.max(d, Math.abs((double) i / a.length - (double) j / b.length));
        }
        return d;
    }

    /** The largest |mean error| in % over the metrics, for fit objectives. */
    public double maxMeanErrorPct() {
        double e = 0;
        for (Metric m : metrics.values()) {
            e = Math.max(e, Math.abs(m.errorPct("mean")));
        }
        return e;
    }
}
