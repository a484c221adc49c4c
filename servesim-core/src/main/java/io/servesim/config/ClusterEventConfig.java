package io.servesim.config;

import java.util.List;

/**
 * A scheduled change to the fleet: at {@code at_ms} of virtual time, {@code worker} starts draining (the router
 * sends it nothing new, it finishes what it has, KVCR stops pulling from it).
 *
 * @param atMs when, in virtual milliseconds
 * @param worker which worker
 * @param action {@code drain} ({@code fail} is not modelled yet)
 */
public record ClusterEventConfig(double atMs, int worker, String action) {
    /** Actions. */
    public static final List<String> ACTIONS = List.of("drain", "fail");

    /** Validates the event. */
    public ClusterEventConfig {
        Check.atLeast("at_ms", atMs, 0.0);
        Check.atLeast("worker", worker, 0);
        Check.oneOf("action", action, ACTIONS);
        if (action.equals("fail")) {
            throw new ConfigException("action", "'fail' is not modelled yet; use 'drain'");
        }
    }
}
