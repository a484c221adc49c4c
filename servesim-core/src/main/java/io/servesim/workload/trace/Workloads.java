package io.servesim.workload.trace;

import io.servesim.config.SimConfig;
import io.servesim.config.WorkloadConfig;
import io.servesim.config.WorkloadType;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.SessionWorkload;
import io.servesim.workload.SyntheticWorkload;
import io.servesim.workload.Workload;
import java.nio.file.Path;

/**
 * The workload registry: builds the workload a {@link WorkloadType} names. It lives in {@code workload.trace}, the
 * one package that sees every workload ({@code workload} must not depend on its {@code trace} subpackage). The switch
 * is exhaustive, so a new type does not compile without its workload.
 */
public final class Workloads {
    private Workloads() {}

    /**
     * Creates the configured workload.
     *
     * @param config the workload section
     * @param streams the run's random streams
     * @param attentionDp ranks per worker (authored trace {@code dp_rank} values must be below it)
     * @param baseDir the directory a relative trace path resolves against (the config file's; null: working dir)
     */
    public static Workload create(WorkloadConfig config, RandomStreams streams, int attentionDp, Path baseDir) {
        return switch (config.type()) {
            case SYNTHETIC -> new SyntheticWorkload(config.synthetic(), config.arrival(), streams);
            case SESSIONS -> new SessionWorkload(config.sessions(), config.arrival(), streams);
            case TRACE ->
                new TraceWorkload(
                        config.trace(),
                        SimConfig.resolve(baseDir, config.trace().path()),
                        streams,
                        attentionDp);
        };
    }
}
