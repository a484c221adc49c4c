package io.servesim.config;

import java.util.List;

/**
 * A scheduled change to the fleet at {@code at_ms} of virtual time. {@code drain}: the router sends the worker nothing
 * new, it finishes what it has, KVCR stops pulling from it. {@code fail}: the worker is gone at once; its in-flight
 * requests restart elsewhere from scratch, pulls from it abort, pulls to it become source-only.
 *
 * @param atMs when, in virtual milliseconds
 * @param worker which worker
 * @param action {@code drain} or {@code fail}
 */
public record ClusterEventConfig(double atMs, int worker, String action) {
    /** Actions. */
    public static final List<String> ACTIONS = List.of("drain", "fail");

    /** Validates the event. */
    public ClusterEventConfig {
        Check.atLeast("at_ms", atMs, 0.0);
        Check.atLeast("worker", worker, 0);
        Check.oneOf("action", action, ACTIONS);
    }
}
