package io.servesim.config;

/**
 * One pool of a heterogeneous fleet ({@code cluster.pools[i]}): identical workers whose engine settings and timing
 * (GPU, tensor parallelism, efficiencies, KV capacity, scheduler limits) are the top-level {@code engine} and {@code
 * timing} sections with this pool's keys merged over them, so a pool names only what differs. The loader does that
 * merge; here both sections are complete.
 *
 * @param name the pool's name in reports (unique in the fleet)
 * @param workers workers in the pool
 * @param engine the pool's complete engine settings
 * @param timing the pool's complete timing settings
 */
public record PoolConfig(String name, int workers, EngineConfig engine, TimingConfig timing) {
    /** Validates the pool on its own (ClusterConfig and SimConfig check it against the others). */
    public PoolConfig {
        Check.present("name", name);
        if (name.isBlank()) {
            throw new ConfigException("name", "must not be blank");
        }
        Check.atLeast("workers", workers, 1);
        Check.present("engine", engine);
        Check.present("timing", timing);
    }
}
