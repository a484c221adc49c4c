package io.servesim.sweep;

import java.io.Serializable;
import java.util.List;

/**
 * The outcome of one sweep point: its parameters, key metrics, SLO verdict and objective, or its error.
 *
 * @param pointId position in the sweep
 * @param deployment the deployment index
 * @param overrides the point's {@code path=value} settings
 * @param error null, or why the run failed
 * @param gpus GPUs of the deployment (workers × attention DP × tensor parallel)
 * @param completed requests completed
 * @param durationS virtual duration
 * @param ttftP50Ms TTFT p50
 * @param ttftP90Ms TTFT p90
 * @param ttftP99Ms TTFT p99
 * @param tpotP90Ms TPOT p90
 * @param tpotP99Ms TPOT p99
 * @param e2eP90Ms E2E p90
 * @param e2eP99Ms E2E p99
 * @param outputTokS output tokens per second
 * @param goodputRps requests per second that met every SLO (each request against each threshold)
 * @param throughputPerGpu output tokens per second per GPU
 * @param goodputPerGpu goodput per GPU
 * @param costPerMillionTokens GPU cost per million output tokens, in the price table's currency
 * @param sloPass whether every SLO percentile is within its threshold
 * @param objective the value of the sweep's objective
 */
public record PointResult(
        int pointId,
        int deployment,
        List<String> overrides,
        String error,
        int gpus,
        long completed,
        double durationS,
        double ttftP50Ms,
        double ttftP90Ms,
        double ttftP99Ms,
        double tpotP90Ms,
        double tpotP99Ms,
        double e2eP90Ms,
        double e2eP99Ms,
        double outputTokS,
        double goodputRps,
        double throughputPerGpu,
        double goodputPerGpu,
        double costPerMillionTokens,
        boolean sloPass,
        double objective)
        implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Defensive copy. */
    public PointResult {
        overrides = List.copyOf(overrides);
    }

    /** A failed point. */
    public static PointResult failed(RunSpec spec, String error) {
        return new PointResult(
                spec.pointId(),
                spec.deployment(),
                spec.overrides(),
                error,
                0,
                0,
                0,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                0,
                0,
                0,
                0,
                Double.NaN,
                false,
                Double.NaN);
    }

    /** A metric by its results.csv name (for Pareto axes). */
    public double metric(String name) {
        return switch (name) {
            case "ttft_p50_ms" -> ttftP50Ms;
            case "ttft_p90_ms" -> ttftP90Ms;
            case "ttft_p99_ms" -> ttftP99Ms;
            case "tpot_p90_ms" -> tpotP90Ms;
            case "tpot_p99_ms" -> tpotP99Ms;
            case "e2e_p90_ms" -> e2eP90Ms;
            case "e2e_p99_ms" -> e2eP99Ms;
            case "output_tok_s" -> outputTokS;
            case "goodput_rps" -> goodputRps;
            case "throughput_per_gpu" -> throughputPerGpu;
            case "goodput_per_gpu" -> goodputPerGpu;
            case "cost_per_million_tokens" -> costPerMillionTokens;
            case "objective" -> objective;
            default -> throw new IllegalArgumentException(name);
        };
    }
}
