package io.servesim.config;

import java.util.List;

/**
 * What traffic to replay: independent synthetic requests, synthetic multi-turn sessions (both arriving per
 * {@code arrival}), or a trace file (with its own arrival options).
 */
public record WorkloadConfig(
        long seed,
        String type,
        SyntheticConfig synthetic,
        SessionsConfig sessions,
        ArrivalConfig arrival,
        TraceConfig trace) {
    /** Workload types. */
    public static final List<String> TYPES = List.of("synthetic", "sessions", "trace");

    /** Validates the section the chosen type uses. */
    public WorkloadConfig {
        Check.oneOf("type", type, TYPES);
        Check.present("arrival", arrival);
        Check.present("trace", trace);
        switch (type) {
            case "synthetic" -> Check.present("synthetic", synthetic);
            case "sessions" -> Check.present("sessions", sessions);
            default -> {
                if (trace.path() == null || trace.path().isBlank()) {
                    throw new ConfigException("trace.path", "is required when type is trace");
                }
            }
        }
    }
}
