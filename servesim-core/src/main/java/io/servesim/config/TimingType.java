package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * The step-time model family ({@code timing.type}). Built by {@code io.servesim.timing.TimingModels}; {@code auto}
 * is not a model but resolves to one ({@link TimingConfig#effectiveType()}).
 */
public enum TimingType implements Named {
    /** Resolves to roofline or fixed. */
    AUTO("auto", "roofline when timing.model and timing.gpu are set, else fixed", false),
    /** Constants plus per-token slopes. */
    FIXED("fixed", "constant prefill and decode costs plus per-token slopes", false),
    /** AISimulate's baseline. */
    POLYNOMIAL("polynomial", "AISimulate's polynomial in prefill tokens and decode KV utilisation", false),
    /** FLOPs and bytes of the named model on the named GPU. */
    ROOFLINE("roofline", "FLOPs and bytes of timing.model on timing.gpu at the configured efficiencies", true),
    /** Measured steps. */
    PROFILE("profile", "measured step latencies, interpolated or fitted to a linear model", false);

    private final String configName;
    private final String description;
    private final boolean needsModelAndGpu;

    TimingType(String configName, String description, boolean needsModelAndGpu) {
        this.configName = configName;
        this.description = description;
        this.needsModelAndGpu = needsModelAndGpu;
    }

    /** Looks a name up; unknown names fail with {@code unknown timing model 'x' (known: ...)}. */
    @JsonCreator
    public static TimingType of(String name) {
        return Named.parse(TimingType.class, name, "timing model");
    }

    @Override
    public String configName() {
        return configName;
    }

    @Override
    public String description() {
        return description;
    }

    /** Whether the model needs a deployment: {@code timing.model} and {@code timing.gpu} both set. */
    public boolean needsModelAndGpu() {
        return needsModelAndGpu;
    }
}
