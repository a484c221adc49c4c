package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * A scheduled change to the fleet at {@code at_ms} of virtual time. {@code drain}: the router sends the worker nothing
 * new, it finishes what it has, KVCR stops pulling from it. {@code fail}: the worker is gone at once; its in-flight
 * requests restart elsewhere from scratch, pulls from it abort, pulls to it become source-only.
 *
 * @param atMs when, in virtual milliseconds
 * @param worker which worker
 * @param action {@code drain} or {@code fail}
 */
public record ClusterEventConfig(double atMs, int worker, Action action) {
    /** What happens to the worker ({@code cluster.events[].action}). */
    public enum Action implements Named {
        /** Nothing new; finish what it has. */
        DRAIN("drain", "the worker gets nothing new, finishes what it has, and is no longer a KVCR source"),
        /** Gone at once. */
        FAIL("fail", "the worker is gone at once; its requests restart elsewhere from scratch");

        private final String configName;
        private final String description;

        Action(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Action of(String name) {
            return Named.parse(Action.class, name);
        }

        @Override
        public String configName() {
            return configName;
        }

        @Override
        public String description() {
            return description;
        }
    }

    /** Validates the event. */
    public ClusterEventConfig {
        Check.atLeast("at_ms", atMs, 0.0);
        Check.atLeast("worker", worker, 0);
        Check.present("action", action);
    }
}
