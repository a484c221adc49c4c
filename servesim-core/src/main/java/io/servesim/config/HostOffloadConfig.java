package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * G2 host-memory KV tier behind each rank's GPU cache (vLLM's native OffloadingConnector); off when
 * {@code num_host_blocks} is 0.
 *
 * @param numHostBlocks G2 capacity in GPU-sized blocks: per rank ({@code rank_local}) or in total
 *     ({@code cluster_shared}); 0 disables offload
 * @param scope {@code rank_local} (each rank its own G2) or {@code cluster_shared} (one pool for all workers)
 * @param d2hGbytesPerS device-to-host copy bandwidth per rank, GB/s (0 = unlimited)
 * @param h2dGbytesPerS host-to-device copy bandwidth per rank, GB/s (0 = unlimited)
 * @param sharedGbytesPerS the shared pool's bandwidth (each direction) with {@code cluster_shared}, GB/s (0 = unlimited)
 * @param firstByteMs latency before a copy's first byte
 */
public record HostOffloadConfig(
        int numHostBlocks,
        Scope scope,
        double d2hGbytesPerS,
        double h2dGbytesPerS,
        double sharedGbytesPerS,
        double firstByteMs) {
    /** Who shares a G2 pool ({@code engine.kv_cache.host_offload.scope}). */
    public enum Scope implements Named {
        /** One pool per rank. */
        RANK_LOCAL("rank_local", "each rank its own G2 pool"),
        /** One pool for the cluster. */
        CLUSTER_SHARED("cluster_shared", "one G2 pool for all workers; a store is visible to all once it lands");

        private final String configName;
        private final String description;

        Scope(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Scope of(String name) {
            return Named.parse(Scope.class, name);
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

    /** Validates the settings. */
    public HostOffloadConfig {
        Check.atLeast("num_host_blocks", numHostBlocks, 0);
        Check.present("scope", scope);
        Check.atLeast("d2h_gbytes_per_s", d2hGbytesPerS, 0.0);
        Check.atLeast("h2d_gbytes_per_s", h2dGbytesPerS, 0.0);
        Check.atLeast("shared_gbytes_per_s", sharedGbytesPerS, 0.0);
        Check.atLeast("first_byte_ms", firstByteMs, 0.0);
    }

    /** Whether offload is on. */
    public boolean enabled() {
        return numHostBlocks > 0;
    }
}
