package io.servesim.router;

import io.servesim.config.RouterPolicy;

/**
 * The router registry: builds the router a {@link RouterPolicy} names. The names, descriptions and declared
 * capabilities live in the enum; the switch is exhaustive, so a new policy does not compile without its router.
 */
public final class Routers {
    private Routers() {}

    /** Creates the router of {@code policy}. */
    public static Router create(RouterPolicy policy, RouterContext context) {
        return switch (policy) {
            case KV_AWARE -> new KvAwareRouter(context);
            case LEAST_LOADED -> new LeastLoadedRouter(context);
            case RANDOM -> new RandomRouter(context);
            case ROUND_ROBIN -> new RoundRobinRouter(context);
            case SESSION_AFFINITY -> new SessionAffinityRouter(context);
        };
    }
}
