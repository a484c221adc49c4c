package io.servesim.config;

import io.servesim.sim.ArchRuleViolationFixture;

/**
 * The other half of a deliberate package cycle (config → sim → config) for the self-check of
 * {@link io.servesim.ArchitectureTest}; test code only.
 */
public final class ArchCycleFixture {
    /** The one instance. */
    public static final ArchCycleFixture INSTANCE = new ArchCycleFixture();

    private ArchCycleFixture() {}

    /** The edge config → sim. */
    public boolean partner(ArchRuleViolationFixture other) {
        return other != null;
    }
}
