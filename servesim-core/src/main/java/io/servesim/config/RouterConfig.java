package io.servesim.config;

/**
 * Which router places requests on (worker, rank); the name is checked against the router registry.
 *
 * @param policy router name
 * @param affinityLoadCap for session_affinity: move a session when its rank's load score (4 × waiting + running)
 *     exceeds this; null never moves
 * @param kv settings of the kv_aware router
 */
public record RouterConfig(String policy, Integer affinityLoadCap, KvRouterConfig kv) {
    /** Validates presence and the cap. */
    public RouterConfig {
        Check.present("policy", policy);
        Check.present("kv", kv);
        if (affinityLoadCap != null) {
            Check.atLeast("affinity_load_cap", affinityLoadCap, 0);
        }
    }
}
