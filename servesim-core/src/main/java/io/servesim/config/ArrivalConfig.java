package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * How requests (or sessions) arrive: {@code poisson} or {@code constant} at {@code rate} per second (open loop), or
 * {@code concurrency}: keep {@code concurrency} requests (or active sessions) in flight (closed loop).
 */
public record ArrivalConfig(Type type, Double rate, Integer concurrency) {
    /** Arrival processes ({@code workload.arrival.type}). */
    public enum Type implements Named {
        /** Exponential gaps, open loop. */
        POISSON("poisson", "exponential gaps at rate per second (open loop)"),
        /** Evenly spaced, open loop. */
        CONSTANT("constant", "arrival k at k / rate seconds (open loop)"),
        /** Closed loop. */
        CONCURRENCY("concurrency", "keep concurrency requests or sessions in flight (closed loop)");

        private final String configName;
        private final String description;

        Type(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Type of(String name) {
            return Named.parse(Type.class, name);
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

    /** Validates the parameter the chosen type needs. */
    public ArrivalConfig {
        Check.present("type", type);
        if (type == Type.CONCURRENCY) {
            Check.atLeast("concurrency", Check.present("concurrency", concurrency), 1);
        } else {
            Check.positive("rate", Check.present("rate", rate));
        }
    }
}
