package io.servesim.timing;

import io.servesim.config.EngineKind;
import io.servesim.config.FixedTimingConfig;
import io.servesim.config.PolynomialTimingConfig;
import io.servesim.config.TimingConfig;
import io.servesim.config.TimingType;

/**
 * The timing-model registry: builds the step-time model a {@link TimingType} names. The names, descriptions and
 * declared capabilities live in the enum; the switch is exhaustive, so a new type does not compile without its model.
 */
public final class TimingModels {
    private TimingModels() {}

    /**
     * Creates the model of a resolved deployment.
     *
     * @param t the timing section
     * @param d the resolved deployment: its {@link Deployment#timingType()} (never {@code auto}), and the model and
     *     GPU for the types that {@linkplain TimingType#needsModelAndGpu() need them}
     * @param engine the engine kind (vLLM's FlashAttention 2 path repeats a mixed step's decode KV reads; the others
     *     do not)
     * @param attentionDp ranks per worker (a MoE layer's experts are sharded over TP × them)
     * @param baseDir the directory a relative {@code timing.profile.path} resolves against (null: working dir)
     */
    public static TimingModel create(
            TimingConfig t, Deployment d, EngineKind engine, int attentionDp, java.nio.file.Path baseDir) {
        return switch (d.timingType()) {
            case FIXED -> {
                FixedTimingConfig f = t.fixed();
                yield new FixedTiming(
                        f.stepMs(),
                        f.prefillMs(),
                        f.decodeMs(),
                        f.prefillPerTokenMs(),
                        f.decodePerTokenMs(),
                        f.cpuMs());
            }
            case POLYNOMIAL -> {
                PolynomialTimingConfig p = t.polynomial();
                yield new PolynomialTiming(
                        p.prefillA(),
                        p.prefillB(),
                        p.prefillC(),
                        p.decodeD2(),
                        p.decodeD1(),
                        p.decodeD0(),
                        p.minDecodeMs());
            }
            case PROFILE -> ProfileTiming.create(t.profile(), baseDir);
            case ROOFLINE ->
                new RooflineTiming(
                        d.model(),
                        d.gpu(),
                        t.tensorParallel(),
                        attentionDp,
                        d.model().weightDtype(t.weightDtype()),
                        t.expertDtype(),
                        d.model().weightDtype(t.weightDtype()).bytes(),
                        d.model().kvBytes(t.kvDtype()),
                        d.roofline(),
                        engine == EngineKind.VLLM);
            case AUTO -> throw new IllegalStateException("timing.type auto is resolved by Deployment.resolve");
        };
    }
}
