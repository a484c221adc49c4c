package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * Settings of the {@code kv_aware} router (Dynamo's KV router; defaults from its KvRouterConfig).
 *
 * @param overlapWeight weight of the prefill term in the cost ({@code overlap_score_weight}, default 1.0)
 * @param temperature 0 picks the lowest cost; above 0 samples a softmax over normalised costs (seeded)
 * @param mode {@code exact}: the router sees every engine's stored/removed block events in event order;
 *     {@code approximate}: no events, the router remembers its own routing decisions for {@code ttl_s}
 * @param ttlS how long an approximate-mode entry lives (Dynamo's {@code router_ttl_secs}, default 120)
 */
public record KvRouterConfig(double overlapWeight, double temperature, Mode mode, double ttlS) {
    /** What the router knows of the engines' caches ({@code cluster.router.kv.mode}). */
    public enum Mode implements Named {
        /** Engine KV events. */
        EXACT("exact", "the router sees every engine's stored/removed block events in event order"),
        /** Own decisions with a TTL. */
        APPROXIMATE("approximate", "no events: the router remembers its own decisions for ttl_s");

        private final String configName;
        private final String description;

        Mode(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Mode of(String name) {
            return Named.parse(Mode.class, name);
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
    public KvRouterConfig {
        Check.atLeast("overlap_weight", overlapWeight, 0.0);
        Check.atLeast("temperature", temperature, 0.0);
        Check.present("mode", mode);
        Check.positive("ttl_s", ttlS);
    }
}
