package io.servesim.config;

import java.util.List;

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
        boolean enabled, double firstByteMs, double bandwidthGbytesPerS, double fabricGbytesPerS, String decision) {
    /** Decision rules. */
    public static final List<String> DECISIONS = List.of("always", "cost");

    /** Validates the settings. */
    public KvcrConfig {
        Check.atLeast("first_byte_ms", firstByteMs, 0.0);
        Check.atLeast("bandwidth_gbytes_per_s", bandwidthGbytesPerS, 0.0);
        Check.atLeast("fabric_gbytes_per_s", fabricGbytesPerS, 0.0);
        Check.oneOf("decision", decision, DECISIONS);
    }
}
