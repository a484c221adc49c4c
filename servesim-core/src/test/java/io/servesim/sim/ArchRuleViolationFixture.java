package io.servesim.sim;

import io.servesim.config.ArchCycleFixture;
import io.servesim.config.SimConfig;
import io.servesim.report.Summary;

/**
 * Deliberately breaks every rule of {@link io.servesim.ArchitectureTest} (test code only, never part of the
 * library): a class in {@code sim} that depends on {@code config} (sim must depend on nothing else in servesim), on
 * {@code report} (core must not depend on the outer layers) and, through {@link ArchCycleFixture}, closes a cycle
 * sim → config → sim, and opens a socket (nothing in a replay may touch the network). The test's self-check imports
 * just these two classes and expects each rule to fail.
 */
public final class ArchRuleViolationFixture {
    private ArchRuleViolationFixture() {}

    /** A dependency on config. */
    public static String describe(SimConfig config) {
        return String.valueOf(config);
    }

    /** A dependency on report. */
    public static String describe(Summary summary) {
        return String.valueOf(summary);
    }

    /** A network dependency (never called). */
    public static java.net.Socket unconnected() {
        return new java.net.Socket();
    }

    /** The edge back that closes the cycle. */
    public static ArchCycleFixture partner() {
        return ArchCycleFixture.INSTANCE;
    }
}
