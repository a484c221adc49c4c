package io.servesim.router;

import io.servesim.config.ConfigException;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/** The router registry: names to factories. Unknown names fail listing the known ones. */
public final class Routers {
    private static final Map<String, Function<RouterContext, Router>> FACTORIES = new TreeMap<>();

    static {
        FACTORIES.put("round_robin", RoundRobinRouter::new);
        FACTORIES.put("least_loaded", LeastLoadedRouter::new);
        FACTORIES.put("session_affinity", SessionAffinityRouter::new);
        FACTORIES.put("random", RandomRouter::new);
        FACTORIES.put("kv_aware", KvAwareRouter::new);
    }

    private Routers() {}

    /** Known router names, sorted. */
    public static Iterable<String> names() {
        return FACTORIES.keySet();
    }

    /** Creates the named router. */
    public static Router create(String name, RouterContext context) {
        Function<RouterContext, Router> f = FACTORIES.get(name);
        if (f == null) {
            throw new ConfigException(
                    "cluster.router.policy",
                    "unknown router '" + name + "' (known: " + String.join(", ", FACTORIES.keySet()) + ")");
        }
        return f.apply(context);
    }
}
