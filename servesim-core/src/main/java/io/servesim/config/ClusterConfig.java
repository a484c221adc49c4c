package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The fleet: workers, each with {@code attention_dp} ranks stepped in {@code dp_mode} ({@code lockstep}: one barrier
 * per pass, MoE-style; {@code independent}: each rank on its own, dense-model DP), behind one router. Without {@code
 * pools} every worker runs the top-level engine and timing; with them the workers are the pools' in order (pool 0's
 * first), each pool with its own engine and timing, and {@code workers} is their sum.
 *
 * @param pools the fleet's pools, or empty for identical workers; left out of written configs when empty
 */
public record ClusterConfig(
        int workers,
        int attentionDp,
        DpMode dpMode,
        RouterConfig router,
        List<ClusterEventConfig> events,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<PoolConfig> pools) {
    /** How a worker steps its ranks ({@code cluster.dp_mode}). */
    public enum DpMode implements Named {
        /** One barrier per pass. */
        LOCKSTEP("lockstep", "all ranks of a worker start a pass together; it ends at the slowest (MoE-style)"),
        /** Each rank on its own. */
        INDEPENDENT("independent", "each rank steps on its own (dense-model DP)");

        private final String configName;
        private final String description;

        DpMode(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static DpMode of(String name) {
            return Named.parse(DpMode.class, name);
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

    /** Validates sizes. */
    public ClusterConfig {
        Check.present("dp_mode", dpMode);
        Check.atLeast("workers", workers, 1);
        Check.atLeast("attention_dp", attentionDp, 1);
        if ((long) workers * attentionDp > 1L << 24) {
            throw new ConfigException(
                    "workers", "workers x attention_dp must be <= 16777216, got " + (long) workers * attentionDp);
        }
        Check.present("router", router);
        Check.present("events", events);
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).worker() >= workers) {
                throw new ConfigException(
                        "events[" + i + "].worker",
                        "is " + events.get(i).worker() + " but there are only " + workers + " workers");
            }
        }
        events = List.copyOf(events);
        pools = pools == null ? List.of() : List.copyOf(pools);
        if (!pools.isEmpty()) {
            long sum = 0;
            Set<String> names = new HashSet<>();
            for (int i = 0; i < pools.size(); i++) {
                sum += pools.get(i).workers();
                if (!names.add(pools.get(i).name())) {
                    throw new ConfigException(
                            "pools[" + i + "].name",
                            "'" + pools.get(i).name() + "' names two pools; names must differ");
                }
            }
            if (sum != workers) {
                throw new ConfigException(
                        "workers",
                        "is " + workers + " but cluster.pools hold " + sum
                                + " workers; with pools, leave workers out (it is their sum)");
            }
        }
    }

    /** The pool worker {@code worker} belongs to (0 without pools). */
    public int poolOf(int worker) {
        int first = 0;
        for (int p = 0; p < pools.size(); p++) {
            first += pools.get(p).workers();
            if (worker < first) {
                return p;
            }
        }
        return 0;
    }
}
