package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * How requests (or sessions) arrive: {@code poisson} or {@code constant} at {@code rate} per second (open loop), or
 * {@code concurrency}: keep {@code concurrency} requests (or active sessions) in flight (closed loop), the clients
 * starting evenly over {@code ramp_s} seconds (all at once when null or 0).
 */
public record ArrivalConfig(Type type, Double rate, Integer concurrency, Double rampS) {
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
        if (rampS != null) {
            if (type != Type.CONCURRENCY) {
                throw new ConfigException("ramp_s", "applies only to type: concurrency (the closed loop's start-up)");
            }
            Check.atLeast("ramp_s", rampS, 0.0);
        }
    }

    /** An arrival process without a ramp. */
    public ArrivalConfig(Type type, Double rate, Integer concurrency) {
        this(type, rate, concurrency, null);
    }

    /**
     * When the closed loop's client {@code k} of {@code n} sends its first request: {@code k × ramp / n}, so the
     * clients are evenly out of phase over the ramp (load generators ramp up; and in steady state independent
     * clients are out of phase, where starting them at one instant keeps equal requests in lockstep for ever).
     */
    public long clientStartNanos(long k, long n) {
        return rampS == null ? 0 : Math.round(k * (rampS * 1e9) / n);
    }
}
