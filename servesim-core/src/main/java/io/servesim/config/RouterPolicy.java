package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * The router family ({@code cluster.router.policy}): each router's name, what it does, and what it needs from the
 * cluster. Built by {@code io.servesim.router.Routers}. Declared in name order, the order error messages list them.
 */
public enum RouterPolicy implements Named {
    /** Dynamo's KV-aware cost. */
    KV_AWARE("kv_aware", "Dynamo's KV router: lowest overlap-weighted prefill + decode block cost", false, true),
    /** vLLM's DP balancer. */
    LEAST_LOADED("least_loaded", "the rank with the lowest 4 x waiting + running (vLLM's DP balancer)", true, false),
    /** Seeded uniform choice. */
    RANDOM("random", "uniform over the ranks of non-draining workers, from the seeded router stream", false, false),
    /** Worker cursor, then per-worker rank cursor. */
    ROUND_ROBIN(
            "round_robin",
            "a worker cursor, then that worker's rank cursor (W0r0, W1r0, ..., W0r1, ...)",
            false,
            false),
    /** Sticky sessions. */
    SESSION_AFFINITY(
            "session_affinity",
            "every turn of a session on its first turn's rank; new sessions least-loaded",
            true,
            false);

    private final String configName;
    private final String description;
    private final boolean readsLoadIndex;
    private final boolean kvEvents;

    RouterPolicy(String configName, String description, boolean readsLoadIndex, boolean kvEvents) {
        this.configName = configName;
        this.description = description;
        this.readsLoadIndex = readsLoadIndex;
        this.kvEvents = kvEvents;
    }

    /** Looks a name up; unknown names fail with {@code unknown router 'x' (known: ...)}. */
    @JsonCreator
    public static RouterPolicy of(String name) {
        return Named.parse(RouterPolicy.class, name, "router");
    }

    @Override
    public String configName() {
        return configName;
    }

    @Override
    public String description() {
        return description;
    }

    /** Whether the router reads rank loads from the cluster's {@code LoadIndex} (then the cluster keeps it current). */
    public boolean readsLoadIndex() {
        return readsLoadIndex;
    }

    /**
     * Whether the router consumes the engines' KV block events (stored/removed) in {@code mode}: only
     * {@code kv_aware}, and only in {@code exact} mode.
     */
    public boolean needsKvEvents(KvRouterConfig.Mode mode) {
        return kvEvents && mode == KvRouterConfig.Mode.EXACT;
    }
}
