package io.servesim.config;

import java.util.List;

/**
 * How requests (or sessions) arrive: {@code poisson} or {@code constant} at {@code rate} per second (open loop), or
 * {@code concurrency}: keep {@code concurrency} requests (or active sessions) in flight (closed loop).
 */
public record ArrivalConfig(String type, Double rate, Integer concurrency) {
    /** Arrival process types. */
    public static final List<String> TYPES = List.of("poisson", "constant", "concurrency");

    /** Validates the parameter the chosen type needs. */
    public ArrivalConfig {
        Check.oneOf("type", type, TYPES);
        if (type.equals("concurrency")) {
            Check.atLeast("concurrency", Check.present("concurrency", concurrency), 1);
        } else {
            Check.positive("rate", Check.present("rate", rate));
        }
    }
}
