package io.servesim.config;

/** A whole replay configuration: workload, cluster, engine, timing, limits and output; the input of one run. */
public record SimConfig(
        WorkloadConfig workload,
        ClusterConfig cluster,
        EngineConfig engine,
        TimingConfig timing,
        LimitsConfig limits,
        OutputConfig output) {
    /** Validates that every section is present. */
    public SimConfig {
        Check.present("workload", workload);
        Check.present("cluster", cluster);
        Check.present("engine", engine);
        Check.present("timing", timing);
        Check.present("limits", limits);
        Check.present("output", output);
    }
}
