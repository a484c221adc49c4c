package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * SGLang's scheduler and memory settings ({@code engine.sglang}, read only with {@code engine.kind: sglang}; defaults are
 * SGLang's {@code server_args.py} ones, those that depend on the GPU resolved in {@code timing.Deployment}). The page
 * size is {@code engine.kv_cache.block_size}
 * (SGLang's {@code page_size}, 1 by default there: token-granular prefix hits) and the radix cache is {@code
 * engine.kv_cache.prefix_caching}; vLLM's {@code engine.scheduler} limits are not read.
 *
 * @param schedulePolicy the order in which waiting requests are considered
 * @param maxRunningRequests running requests at most, or null for SGLang's derivation: half the KV pool's tokens, at
 *     most the request pool's size ({@code timing.Deployment#sglangMaxRunning})
 * @param maxPrefillTokens prompt tokens one prefill batch takes at most (a single longer request still runs)
 * @param chunkedPrefillSize prompt tokens per prefill step and request at most (one request is chunked at a time);
 *     0 disables chunking; null for SGLang's default for the GPU's memory ({@code timing.Deployment#sglangDefaults})
 * @param scheduleConservativeness scales the reservation for future decode tokens ({@code init_new_token_ratio = min(0.7
 *     x conservativeness, 1)})
 * @param clipMaxNewTokens the cap on a request's max new tokens in the admission estimate ({@code
 *     CLIP_MAX_NEW_TOKENS})
 * @param enableMixedChunk {@code --enable-mixed-chunk}: a prefill batch also decodes the running requests
 * @param hicacheWritePolicy when HiCache (the G2 tier) backs pages up to the host
 * @param memFractionStatic the share of GPU memory for weights and the KV pool, or null for SGLang's heuristic from the
 *     GPU's memory, the chunk size and the parallelism ({@code timing.Deployment#sglangCapacity})
 */
public record SglangConfig(
        Policy schedulePolicy,
        Integer maxRunningRequests,
        int maxPrefillTokens,
        Integer chunkedPrefillSize,
        double scheduleConservativeness,
        int clipMaxNewTokens,
        boolean enableMixedChunk,
        WritePolicy hicacheWritePolicy,
        Double memFractionStatic) {
    /** Validates the settings. */
    public SglangConfig {
        Check.present("schedule_policy", schedulePolicy);
        if (maxRunningRequests != null) {
            Check.atLeast("max_running_requests", maxRunningRequests, 1);
        }
        Check.atLeast("max_prefill_tokens", maxPrefillTokens, 1);
        if (chunkedPrefillSize != null) {
            Check.atLeast("chunked_prefill_size", chunkedPrefillSize, 0);
        }
        if (memFractionStatic != null && !(memFractionStatic > 0 && memFractionStatic < 1)) {
            throw new ConfigException(
                    "mem_fraction_static", "must be in (0, 1) (a share of GPU memory), got " + memFractionStatic);
        }
        Check.positive("schedule_conservativeness", scheduleConservativeness);
        Check.atLeast("clip_max_new_tokens", clipMaxNewTokens, 1);
        Check.present("hicache_write_policy", hicacheWritePolicy);
    }

    /** These settings with {@code chunked_prefill_size} resolved (a stated one is kept). */
    public SglangConfig withChunkedPrefillSize(int tokens) {
        return new SglangConfig(
                schedulePolicy,
                maxRunningRequests,
                maxPrefillTokens,
                tokens,
                scheduleConservativeness,
                clipMaxNewTokens,
                enableMixedChunk,
                hicacheWritePolicy,
                memFractionStatic);
    }

    /** The chunk size in effect: stated, or resolved; refuses an unresolved one. */
    public int chunkTokens() {
        if (chunkedPrefillSize == null) {
            throw new IllegalStateException("chunked_prefill_size not resolved (timing.Deployment resolves it)");
        }
        return chunkedPrefillSize;
    }

    /** SGLang's {@code hicache_write_policy}. */
    public enum WritePolicy implements Named {
        /** Back a page up when it enters the radix tree. */
        WRITE_THROUGH("write_through", "back pages up to the host when they enter the radix tree (SGLang's default)"),
        /** Back a page up when a second request inserts it. */
        WRITE_THROUGH_SELECTIVE(
                "write_through_selective",
                "back pages up to the host when a second request inserts them (hit count 2)"),
        /** Back a page up only when it is evicted from the GPU. */
        WRITE_BACK("write_back", "back pages up to the host only when the GPU evicts them");

        private final String configName;
        private final String description;

        WritePolicy(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static WritePolicy of(String name) {
            return Named.parse(WritePolicy.class, name);
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

    /** SGLang's {@code schedule_policy}. */
    public enum Policy implements Named {
        /** Arrival order. */
        FCFS("fcfs", "first come, first served (SGLang's default)"),
        /** Longest prefix match first. */
        LPM("lpm", "longest cached prefix first (first come, first served above 128 waiting requests)"),
        /** Depth-first over the radix tree, heavier subtrees first. */
        DFS_WEIGHT(
                "dfs_weight",
                "depth-first over the cached prefixes, subtrees with more waiting requests first, a node's own"
                        + " requests after its subtrees"),
        /** Longest output first. */
        LOF("lof", "largest max_new_tokens first"),
        /** Seeded random order. */
        RANDOM("random", "a seeded shuffle of the waiting queue each step");

        private final String configName;
        private final String description;

        Policy(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up ({@code dfs-weight}, SGLang's spelling, too). */
        @JsonCreator
        public static Policy of(String name) {
            return Named.parse(Policy.class, "dfs-weight".equals(name) ? "dfs_weight" : name);
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
}
