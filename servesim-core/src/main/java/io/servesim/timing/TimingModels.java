package io.servesim.timing;

import io.servesim.config.ConfigException;
import io.servesim.config.FixedTimingConfig;
import io.servesim.config.PolynomialTimingConfig;
import io.servesim.config.TimingConfig;
import java.util.List;

/** The timing-model registry: {@code timing.type} names to models. Unknown names fail listing the known ones. */
public final class TimingModels {
    /** Known timing types. */
    public static final List<String> NAMES = List.of("auto", "fixed", "polynomial", "roofline", "profile");

    private TimingModels() {}

    /**
     * Creates the model named by {@code config.type()} for the types that need no hardware ({@code fixed},
     * {@code polynomial}, {@code profile}); {@code roofline} is built by {@link Deployment#timingModel}.
     */
    public static TimingModel create(TimingConfig config) {
        return switch (config.effectiveType()) {
            case "fixed" -> {
                FixedTimingConfig f = config.fixed();
                yield new FixedTiming(f.prefillMs(), f.decodeMs(), f.prefillPerTokenMs(), f.decodePerTokenMs());
            }
            case "polynomial" -> {
                PolynomialTimingConfig p = config.polynomial();
                yield new PolynomialTiming(
                        p.prefillA(),
                        p.prefillB(),
                        p.prefillC(),
                        p.decodeD2(),
                        p.decodeD1(),
                        p.decodeD0(),
                        p.minDecodeMs());
            }
            case "profile" -> ProfileTiming.create(config.profile());
            case "roofline" ->
                throw new ConfigException("timing.type", "roofline is built from the deployment (model and gpu)");
            default ->
                throw new ConfigException(
                        "timing.type",
                        "unknown timing model '" + config.type() + "' (known: " + String.join(", ", NAMES) + ")");
        };
    }
}
