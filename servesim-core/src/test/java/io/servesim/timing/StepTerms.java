package io.servesim.timing;

import io.servesim.config.RooflineConfig;

/** The roofline at unit efficiencies with a hard knee, and the steps its rule tests price: their shared harness. */
final class StepTerms {
    private StepTerms() {}

    /** The efficiencies at 1 and a knee of 1,000 (the larger bound alone), so the terms are hand-computable. */
    static final RooflineConfig BARE = new RooflineConfig(1, 1, 0, 0, 10, 25, 0, 0, 1, 1, 0, 1, 1, 1000);

    /** Term {@code name} of the step {@code b} under {@code t}, in nanoseconds ({@link RooflineTiming#TERMS}). */
    static double term(TimingModel t, StepBatch b, String name) {
        return t.stepTerms(b).stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow()
                .nanos();
    }

    /**
     * A replay of {@code requests} requests of {@code input} prompt and {@code output} output tokens arriving at 20 per
     * second, on roofline timing with {@code more} (the model, the GPU, the engine...).
     */
    static io.servesim.config.SimConfig replay(int requests, int input, int output, String... more) {
        java.util.List<String> sets = new java.util.ArrayList<>(java.util.List.of(
                "workload.type=synthetic",
                "workload.synthetic.requests=" + requests,
                "workload.synthetic.input_tokens={type: fixed, value: " + input + "}",
                "workload.synthetic.output_tokens={type: fixed, value: " + output + "}",
                "workload.arrival.rate=20",
                "timing.type=roofline"));
        sets.addAll(java.util.List.of(more));
        return io.servesim.config.ConfigLoader.fromYaml("", "t", sets);
    }

    /** A step of one request computing {@code tokens} new tokens on {@code context} computed ones. */
    static StepBatch one(int tokens, int context, boolean decode) {
        StepBatch b = new StepBatch();
        b.reset(1 << 20);
        b.add(tokens, context, decode);
        return b;
    }
}
