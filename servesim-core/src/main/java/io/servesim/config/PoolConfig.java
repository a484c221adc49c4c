package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One pool of a heterogeneous fleet ({@code cluster.pools[i]}): identical workers whose engine settings and timing
 * (GPU, tensor parallelism, efficiencies, KV capacity, scheduler limits) are the top-level {@code engine} and {@code
 * timing} sections with this pool's keys merged over them, so a pool names only what differs. The loader does that
 * merge; here both sections are complete. In a disaggregated cluster the two pools are {@code cluster.prefill} and
 * {@code cluster.decode}, each with its role and its own router.
 *
 * @param name the pool's name in reports (unique in the fleet)
 * @param workers workers in the pool
 * @param engine the pool's complete engine settings
 * @param timing the pool's complete timing settings
 * @param role the pool's role in a disaggregated cluster, or null (aggregated: left out of written configs)
 * @param router the pool's own router in a disaggregated cluster (the top-level one with its keys merged over it), or
 *     null (aggregated: every pool is behind the cluster's router)
 * @param attentionDp the pool's attention-DP ranks per worker in a disaggregated cluster, or null for {@code
 *     cluster.attention_dp} (left out of written configs when null)
 */
public record PoolConfig(
        String name,
        int workers,
        EngineConfig engine,
        TimingConfig timing,
        @JsonInclude(JsonInclude.Include.NON_NULL) Role role,
        @JsonInclude(JsonInclude.Include.NON_NULL) RouterConfig router,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integer attentionDp) {
    /** Validates the pool on its own (ClusterConfig and SimConfig check it against the others). */
    public PoolConfig {
        Check.present("name", name);
        if (name.isBlank()) {
            throw new ConfigException("name", "must not be blank");
        }
        Check.atLeast("workers", workers, 1);
        Check.present("engine", engine);
        Check.present("timing", timing);
        if (attentionDp != null) {
            Check.atLeast("attention_dp", attentionDp, 1);
            if (role == null) {
                throw new ConfigException(
                        "attention_dp",
                        "only the pools of a disaggregated cluster have their own attention_dp (aggregated pools share"
                                + " cluster.attention_dp behind one router)");
            }
        }
        if ((role == null) != (router == null)) {
            throw new ConfigException(
                    role == null ? "router" : "role",
                    "a pool has its own router exactly when it has a role (cluster.mode: disaggregated)");
        }
    }

    /** A pool's role in a disaggregated cluster. */
    public enum Role implements Named {
        /** Runs prompts (and the one-token step) and holds their KV until the decode side has read it. */
        PREFILL("prefill", "runs prompts and holds their KV until the decode worker has read it"),
        /** Reads the KV of prefilled prompts and generates the output. */
        DECODE("decode", "reads prefilled KV and generates the output (or prefills locally below the threshold)");

        private final String configName;
        private final String description;

        Role(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Role of(String name) {
            return Named.parse(Role.class, name);
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
}
