package io.servesim.config;

/**
 * Which router places requests on (worker, rank); the name is checked against the router registry.
 *
 * @param policy router name
 * @param affinityLoadCap for session_affinity: move a session when its rank's load score (4 × waiting + running)
 *     exceeds this; null never moves
 */
public record RouterConfig(String policy, Integer affinityLoadCap) {
    /** Validates presence and the cap. */
    public RouterConfig {
        Check.present("policy", policy);
        if (affinityLoadCap != null) {
            Check.atLeast("affinity_load_cap", affinityLoadCap, 0);
        }
    }
}
