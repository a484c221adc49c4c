package io.servesim.config;

/** The fleet: identical workers, each with {@code attention_dp} ranks, behind one router. */
public record ClusterConfig(int workers, int attentionDp, RouterConfig router) {
    /** Validates sizes. */
    public ClusterConfig {
        Check.atLeast("workers", workers, 1);
        Check.atLeast("attention_dp", attentionDp, 1);
        if ((long) workers * attentionDp > 1L << 24) {
            throw new ConfigException(
                    "workers", "workers x attention_dp must be <= 16777216, got " + (long) workers * attentionDp);
        }
        Check.present("router", router);
    }
}
