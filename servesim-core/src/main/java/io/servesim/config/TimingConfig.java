package io.servesim.config;

/** Which step-time model to use ({@code fixed} or {@code polynomial}) and its parameters. */
public record TimingConfig(String type, FixedTimingConfig fixed, PolynomialTimingConfig polynomial) {
    /** Validates presence; the type name is checked against the timing registry. */
    public TimingConfig {
        Check.present("type", type);
        Check.present("fixed", fixed);
        Check.present("polynomial", polynomial);
    }
}
