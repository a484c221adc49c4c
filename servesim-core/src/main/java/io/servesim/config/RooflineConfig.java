package io.servesim.config;

/**
 * Efficiencies and overheads of the roofline step-time model (docs/timing.md gives each default's source).
 *
 * @param mfu fraction of peak tensor FLOP/s that matrix multiplies and attention reach, (0, 1]
 * @param mbu fraction of peak memory bandwidth that weight and KV reads reach, (0, 1]
 * @param stepOverheadUs fixed cost of every engine step (scheduling, input preparation, sampling launch), µs
 * @param perSequenceOverheadUs cost per request in the batch (sampling, detokenisation, output handling), µs
 * @param collectiveLatencyUs latency of one TP all-reduce or EP all-to-all, µs
 */
public record RooflineConfig(
        double mfu, double mbu, double stepOverheadUs, double perSequenceOverheadUs, double collectiveLatencyUs) {
    /** Validates ranges. */
    public RooflineConfig {
        fraction("mfu", mfu);
        fraction("mbu", mbu);
        Check.atLeast("step_overhead_us", stepOverheadUs, 0.0);
        Check.atLeast("per_sequence_overhead_us", perSequenceOverheadUs, 0.0);
        Check.atLeast("collective_latency_us", collectiveLatencyUs, 0.0);
    }

    static void fraction(String field, double v) {
        if (!(v > 0 && v <= 1)) {
            throw new ConfigException(field, "must be in (0, 1], got " + v);
        }
    }
}
