package io.servesim.config;

import java.util.List;

/**
 * The fleet: identical workers, each with {@code attention_dp} ranks stepped in {@code dp_mode} ({@code lockstep}:
 * one barrier per pass, MoE-style; {@code independent}: each rank on its own, dense-model DP), behind one router.
 */
public record ClusterConfig(
        int workers, int attentionDp, String dpMode, RouterConfig router, List<ClusterEventConfig> events) {
    /** DP modes. */
    public static final java.util.List<String> DP_MODES = java.util.List.of("lockstep", "independent");

    /** Validates sizes. */
    public ClusterConfig {
        Check.oneOf("dp_mode", dpMode, DP_MODES);
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
