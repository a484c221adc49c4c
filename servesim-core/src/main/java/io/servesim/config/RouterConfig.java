package io.servesim.config;

/**
 * Which router places requests on (worker, rank): a {@link RouterPolicy} and its settings.
 *
 * @param policy router name
 * @param affinityLoadCap for session_affinity: move a session when its rank's load score (4 × waiting + running)
 *     exceeds this; null never moves
 * @param kv settings of the kv_aware router
 */
public record RouterConfig(RouterPolicy policy, Integer affinityLoadCap, KvRouterConfig kv) {
    /** Validates presence and the cap. */
    public RouterConfig {
        Check.present("policy", policy);
        Check.present("kv", kv);
        if (affinityLoadCap != null) {
            Check.atLeast("affinity_load_cap", affinityLoadCap, 0);
        }
    }

    /** Whether the chosen router consumes the engines' KV block events (kv_aware in exact mode). */
    public boolean needsKvEvents() {
        return policy.needsKvEvents(kv.mode());
    }
}
