package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/** The workload family ({@code workload.type}). Built by {@code io.servesim.workload.trace.Workloads}. */
public enum WorkloadType implements Named {
    /** Independent requests. */
    SYNTHETIC("synthetic", "independent synthetic requests (workload.synthetic, arriving per workload.arrival)"),
    /** Multi-turn chats. */
    SESSIONS("sessions", "synthetic multi-turn chat sessions (workload.sessions, starting per workload.arrival)"),
    /** A trace file. */
    TRACE("trace", "a trace file replayed with its own arrival options (workload.trace)");

    private final String configName;
    private final String description;

    WorkloadType(String configName, String description) {
        this.configName = configName;
        this.description = description;
    }

    /** Looks a name up; unknown names fail with {@code unknown value 'x' (expected one of: ...)}. */
    @JsonCreator
    public static WorkloadType of(String name) {
        return Named.parse(WorkloadType.class, name);
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
