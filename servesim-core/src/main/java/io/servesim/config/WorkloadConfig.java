package io.servesim.config;

import java.util.List;

/** What traffic to generate: independent synthetic requests or multi-turn sessions, and how they arrive. */
public record WorkloadConfig(
        long seed, String type, SyntheticConfig synthetic, SessionsConfig sessions, ArrivalConfig arrival) {
    /** Workload types. */
    public static final List<String> TYPES = List.of("synthetic", "sessions");

    /** Validates the section the chosen type uses. */
    public WorkloadConfig {
        Check.oneOf("type", type, TYPES);
        Check.present("arrival", arrival);
        if (type.equals("synthetic")) {
            Check.present("synthetic", synthetic);
        } else {
            Check.present("sessions", sessions);
        }
    }
}
