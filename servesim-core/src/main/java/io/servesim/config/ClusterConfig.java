package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.util.List;

/**
 * The fleet: identical workers, each with {@code attention_dp} ranks stepped in {@code dp_mode} ({@code lockstep}:
 * one barrier per pass, MoE-style; {@code independent}: each rank on its own, dense-model DP), behind one router.
 */
public record ClusterConfig(
        int workers, int attentionDp, DpMode dpMode, RouterConfig router, List<ClusterEventConfig> events) {
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
    }
}
