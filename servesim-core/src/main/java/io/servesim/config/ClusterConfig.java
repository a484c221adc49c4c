package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The fleet: workers, each with {@code attention_dp} ranks stepped in {@code dp_mode} ({@code lockstep}: one barrier
 * per pass, MoE-style; {@code independent}: each rank on its own, dense-model DP), behind one router. Without {@code
 * pools} every worker runs the top-level engine and timing; with them the workers are the pools' in order (pool 0's
 * first), each pool with its own engine and timing, and {@code workers} is their sum.
 *
 * <p>With {@code mode: disaggregated} there are exactly two pools, {@code prefill} then {@code decode} (written as
 * {@code cluster.prefill} and {@code cluster.decode}), each behind its own router, and {@code disagg} says how the
 * KV cache moves between them (docs/pd.md).
 *
 * @param pools the fleet's pools, or empty for identical workers; left out of written configs when empty
 * @param mode aggregated (every worker prefills and decodes) or disaggregated; left out of written configs while
 *     aggregated, so configs recorded before the key existed are unchanged
 * @param disagg the prefill/decode settings, present exactly in disaggregated mode
 */
public record ClusterConfig(
        int workers,
        int attentionDp,
        DpMode dpMode,
        RouterConfig router,
        List<ClusterEventConfig> events,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<PoolConfig> pools,

        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = Aggregated.class)
        Mode mode,

        @JsonInclude(JsonInclude.Include.NON_NULL) DisaggConfig disagg) {
    /** Whether prefill and decode run on separate pools ({@code cluster.mode}). */
    public enum Mode implements Named {
        /** Every worker prefills and decodes. */
        AGGREGATED("aggregated", "every worker runs prompts and generates their output"),
        /** Prefill pool and decode pool. */
        DISAGGREGATED("disaggregated", "a prefill pool runs prompts, a decode pool pulls their KV and generates");

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

    /** Leaves {@code mode: aggregated} out of written configs. */
    static final class Aggregated {
        @Override
        public boolean equals(Object value) {
            return value == null || value == Mode.AGGREGATED;
        }

        @Override
        public int hashCode() {
            return 2;
        }
    }

    /** How a worker steps its ranks ({@code cluster.dp_mode}). */
    public enum DpMode implements Named {
        /** One barrier per pass. */
        LOCKSTEP("lockstep", "all ranks of a worker start a pass together; it ends at the slowest (MoE-style)"),
        /** Each rank on its own. */
        INDEPENDENT("independent", "each rank steps on its own (dense-model DP)");

        private final String configName;
        private final String description;

        DpMode(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static DpMode of(String name) {
            return Named.parse(DpMode.class, name);
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

    /** Validates sizes. */
    public ClusterConfig {
        Check.present("dp_mode", dpMode);
        Check.atLeast("workers", workers, 1);
        Check.atLeast("attention_dp", attentionDp, 1);
        long ranks = (long) workers * attentionDp;
        if (pools != null && !pools.isEmpty()) {
            ranks = 0;
            for (PoolConfig p : pools) {
                ranks += (long) p.workers() * (p.attentionDp() == null ? attentionDp : p.attentionDp());
            }
        }
        if (ranks > 1L << 24) {
            throw new ConfigException("workers", "workers x attention_dp must be <= 16777216, got " + ranks);
        }
        Check.present("router", router);
        Check.present("events", events);
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).worker() >= workers) {
                throw new ConfigException(
                        "events[" + i + "].worker",
                        "is " + events.get(i).worker() + " but there are only " + workers + " workers");
            }
        }
        events = List.copyOf(events);
        pools = pools == null ? List.of() : List.copyOf(pools);
        if (!pools.isEmpty()) {
            long sum = 0;
            Set<String> names = new HashSet<>();
            for (int i = 0; i < pools.size(); i++) {
                sum += pools.get(i).workers();
                if (!names.add(pools.get(i).name())) {
                    throw new ConfigException(
                            "pools[" + i + "].name",
                            "'" + pools.get(i).name() + "' names two pools; names must differ");
                }
            }
            if (sum != workers) {
                throw new ConfigException(
                        "workers",
                        "is " + workers + " but cluster.pools hold " + sum
                                + " workers; with pools, leave workers out (it is their sum)");
            }
        }
        mode = mode == null ? Mode.AGGREGATED : mode;
        if (mode == Mode.DISAGGREGATED) {
            Check.present("disagg", disagg);
            if (pools.size() != 2
                    || pools.get(PREFILL_POOL).role() != PoolConfig.Role.PREFILL
                    || pools.get(DECODE_POOL).role() != PoolConfig.Role.DECODE) {
                throw new ConfigException(
                        "mode",
                        "disaggregated needs cluster.prefill and cluster.decode (the pools prefill then decode)");
            }
        } else {
            if (disagg != null) {
                throw new ConfigException("disagg", "is read only with cluster.mode: disaggregated");
            }
            for (int i = 0; i < pools.size(); i++) {
                if (pools.get(i).role() != null) {
                    throw new ConfigException(
                            "pools[" + i + "].role", "pools have roles only with cluster.mode: disaggregated");
                }
            }
        }
    }

    /** Whether prefill and decode run on separate pools. */
    public boolean disaggregated() {
        return mode == Mode.DISAGGREGATED;
    }

    /** The prefill pool's index in {@code pools} (disaggregated mode). */
    public static final int PREFILL_POOL = 0;

    /** The decode pool's index in {@code pools} (disaggregated mode). */
    public static final int DECODE_POOL = 1;

    /** Attention-DP ranks per worker of pool {@code p} (its own in a disaggregated cluster, else the cluster's). */
    public int attentionDpOfPool(int p) {
        Integer own = pools.isEmpty() ? null : pools.get(p).attentionDp();
        return own == null ? attentionDp : own;
    }

    /** Attention-DP ranks of worker {@code worker}. */
    public int ranksOf(int worker) {
        return pools.isEmpty() ? attentionDp : attentionDpOfPool(poolOf(worker));
    }

    /** Ranks over all workers. */
    public long totalRanks() {
        if (pools.isEmpty()) {
            return (long) workers * attentionDp;
        }
        long n = 0;
        for (int p = 0; p < pools.size(); p++) {
            n += (long) pools.get(p).workers() * attentionDpOfPool(p);
        }
        return n;
    }

    /** The fewest attention-DP ranks any worker has (an authored {@code dp_rank} must be below it). */
    public int minAttentionDp() {
        int min = attentionDp;
        for (int p = 0; p < pools.size(); p++) {
            min = p == 0 ? attentionDpOfPool(p) : Math.min(min, attentionDpOfPool(p));
        }
        return min;
    }

    /** The same cluster with {@code attention_dp} replaced (a pool's view, {@code SimConfig.forPool}). */
    public ClusterConfig withAttentionDp(int dp) {
        return new ClusterConfig(workers, dp, dpMode, router, events, pools, mode, disagg);
    }

    /**
     * Each worker's pool name, for {@code requests.csv}'s {@code pool} column: only for an aggregated fleet of
     * {@code cluster.pools} (null otherwise; a disaggregated run's rows have their own prefill/decode columns).
     */
    public String[] poolNamesByWorker() {
        if (pools.isEmpty() || disaggregated()) {
            return null;
        }
        String[] out = new String[workers];
        for (int w = 0; w < workers; w++) {
            out[w] = pools.get(poolOf(w)).name();
        }
        return out;
    }

    /** The pool worker {@code worker} belongs to (0 without pools). */
    public int poolOf(int worker) {
        int first = 0;
        for (int p = 0; p < pools.size(); p++) {
            first += pools.get(p).workers();
            if (worker < first) {
                return p;
            }
        }
        return 0;
    }
}
