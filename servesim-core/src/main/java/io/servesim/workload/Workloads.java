package io.servesim.workload;

import io.servesim.config.SimConfig;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.trace.TraceWorkload;
import java.nio.file.Path;

/** The workload registry: {@code workload.type} to the workload that generates or replays the requests. */
public final class Workloads {
    private Workloads() {}

    /** Creates the configured workload (a trace is opened, not read). */
    public static Workload create(SimConfig config, RandomStreams streams) {
        return switch (config.workload().type()) {
            case "synthetic" ->
                new SyntheticWorkload(
                        config.workload().synthetic(), config.workload().arrival(), streams);
            case "sessions" ->
                new SessionWorkload(
                        config.workload().sessions(), config.workload().arrival(), streams);
            case "trace" ->
                new TraceWorkload(
                        config.workload().trace(),
                        Path.of(config.workload().trace().path()),
                        streams,
                        config.cluster().attentionDp());
            default -> throw new IllegalStateException(config.workload().type());
        };
    }
}
