package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * KVCR cross-worker KV pulls: a request routed away from its session's previous worker pulls the prefix blocks that
 * worker still holds beyond the destination's local hit, instead of recomputing them.
 *
 * @param enabled whether pulls happen
 * @param firstByteMs latency before a pull's first byte
 * @param bandwidthGbytesPerS each worker's NIC bandwidth, egress and ingress (GB/s; 0 = unlimited)
 * @param fabricGbytesPerS a cap shared by all moving pulls (GB/s; 0 = none)
 * @param decision {@code always} pull when the source holds more; {@code cost} only when the estimated pull time
 *     (first byte + bytes at the NIC rate) beats recomputing those tokens per the timing model
 */
public record KvcrConfig(
        boolean enabled, double firstByteMs, double bandwidthGbytesPerS, double fabricGbytesPerS, Decision decision) {
    /** When a pull is worth it ({@code engine.kvcr.decision}). */
    public enum Decision implements Named {
        /** Whenever the source holds more. */
        ALWAYS("always", "pull whenever the source holds more than the destination's local hit"),
        /** When faster than recomputing. */
        COST("cost", "pull only when first byte + bytes at the NIC rate beats recomputing per the timing model");

        private final String configName;
        private final String description;

        Decision(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Decision of(String name) {
            return Named.parse(Decision.class, name);
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
    public KvcrConfig {
        Check.atLeast("first_byte_ms", firstByteMs, 0.0);
        Check.atLeast("bandwidth_gbytes_per_s", bandwidthGbytesPerS, 0.0);
        Check.atLeast("fabric_gbytes_per_s", fabricGbytesPerS, 0.0);
        Check.present("decision", decision);
    }
}
