package io.servesim.config;

import java.util.List;

/**
 * Settings of the {@code kv_aware} router (Dynamo's KV router; defaults from its KvRouterConfig).
 *
 * @param overlapWeight weight of the prefill term in the cost ({@code overlap_score_weight}, default 1.0)
 * @param temperature 0 picks the lowest cost; above 0 samples a softmax over normalised costs (seeded)
 * @param mode {@code exact}: the router sees every engine's stored/removed block events in event order;
 *     {@code approximate}: no events, the router remembers its own routing decisions for {@code ttl_s}
 * @param ttlS how long an approximate-mode entry lives (Dynamo's {@code router_ttl_secs}, default 120)
 */
public record KvRouterConfig(double overlapWeight, double temperature, String mode, double ttlS) {
    /** Modes. */
    public static final List<String> MODES = List.of("exact", "approximate");

    /** Validates the settings. */
    public KvRouterConfig {
        Check.atLeast("overlap_weight", overlapWeight, 0.0);
        Check.atLeast("temperature", temperature, 0.0);
        Check.oneOf("mode", mode, MODES);
        Check.positive("ttl_s", ttlS);
    }
}
