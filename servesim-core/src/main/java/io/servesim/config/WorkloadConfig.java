package io.servesim.config;

/**
 * What traffic to replay: independent synthetic requests, synthetic multi-turn sessions (both arriving per
 * {@code arrival}), or a trace file (with its own arrival options).
 */
public record WorkloadConfig(
        long seed,
        WorkloadType type,
        SyntheticConfig synthetic,
        SessionsConfig sessions,
        ArrivalConfig arrival,
        TraceConfig trace) {
    /** Validates the section the chosen type uses. */
    public WorkloadConfig {
        Check.present("type", type);
        Check.present("arrival", arrival);
        Check.present("trace", trace);
        switch (type) {
            case SYNTHETIC -> Check.present("synthetic", synthetic);
            case SESSIONS -> Check.present("sessions", sessions);
            case TRACE -> {
                if (trace.path() == null || trace.path().isBlank()) {
                    throw new ConfigException("trace.path", "is required when type is trace");
                }
            }
        }
    }
}
