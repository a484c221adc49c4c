package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A whole replay configuration: workload, cluster, engine, timing, limits and output; the input of one run.
 *
 * @param baseDir the directory relative file paths in it resolve against (the config file's), or null for the
 *     working directory; never echoed, so the canonical output does not depend on where the file lives
 */
public record SimConfig(
        WorkloadConfig workload,
        ClusterConfig cluster,
        EngineConfig engine,
        TimingConfig timing,
        LimitsConfig limits,
        OutputConfig output,
        @JsonIgnore Path baseDir) {
    /** Validates that every section is present. */
    public SimConfig {
        Check.present("workload", workload);
        Check.present("cluster", cluster);
        Check.present("engine", engine);
        Check.present("timing", timing);
        Check.present("limits", limits);
        Check.present("output", output);
        checkPools(cluster, engine);
        if (workload.clientTimeoutS() != null) {
            checkClientTimeout(cluster, engine);
        }
        if (output.clientFrontend() != null && cluster.disaggregated()) {
            // the term is vLLM's API server handling one engine's step outputs; a P/D deployment's frontend (e.g.
            // Dynamo's) relays tokens from two pools, which the records do not tell apart at a token's instant
            throw new ConfigException(
                    "output.client_frontend",
                    "is modelled for aggregated clusters only (vLLM's API server over one engine); drop it or use"
                            + " cluster.mode: aggregated");
        }
    }

    /**
     * Where a client timeout is modelled: vLLM's abort ({@code Scheduler.finish_requests} with {@code
     * FINISHED_ABORTED}), in aggregated and disaggregated clusters (with NIXL's delayed frees and leases), with the G2
     * tier and with KVCR pulls (a load or pull in flight delays the free until its bytes land, as NIXL's receive does);
     * SGLang's ({@code abort_request}, with HiCache too: its load-back runs inside a batch, and a request it aborts
     * holds no copy) and TensorRT-LLM's ({@code _handle_canceled_requests}) in aggregated clusters; with failing
     * workers too (a request starting over is a retry with a deadline of its own).
     */
    private static void checkClientTimeout(ClusterConfig cluster, EngineConfig engine) {
        String at = "workload.client_timeout_s";
        String why = null;
        java.util.function.Predicate<EngineKind> aborts = k -> k == EngineKind.VLLM || !cluster.disaggregated();
        if (!aborts.test(engine.kind())
                || cluster.pools().stream()
                        .anyMatch(p -> !aborts.test(p.engine().kind()))) {
            why = "is modelled for vLLM, and for SGLang and TensorRT-LLM in aggregated clusters (their aborts of a"
                    + " disconnected request), not for their P/D pools";
        }
        if (why != null) {
            throw new ConfigException(at, why);
        }
    }

    /**
     * What the pools of a heterogeneous fleet must share: the KV block size and prefix caching (block hashes must mean
     * the same on every worker), and the cluster-wide KV services (KVCR pulls and the G2 host tier), which stay the
     * top-level {@code engine}'s. That every pool serves one model (the routers hash prompts once for all workers) is
     * checked when the pools' models are resolved ({@code run.Simulation.deployments}): a preset and a Hugging Face
     * id or quantized release of it are one model.
     */
    private static void checkPools(ClusterConfig cluster, EngineConfig engine) {
        if (cluster.disaggregated()) {
            if (engine.kvcr().enabled()) {
                throw new ConfigException(
                        "engine.kvcr.enabled",
                        "KVCR pulls are not modelled in disaggregated clusters yet (docs/pd.md); turn one off");
            }
        }
        java.util.List<PoolConfig> pools = cluster.pools();
        for (int i = 0; i < pools.size(); i++) {
            PoolConfig p = pools.get(i);
            PoolConfig first = pools.get(0);
            String at = "cluster.pools[" + i + "].";
            if (p.engine().kvCache().blockSize() != first.engine().kvCache().blockSize()) {
                throw new ConfigException(
                        at + "engine.kv_cache.block_size",
                        "is " + p.engine().kvCache().blockSize() + " but pool '" + first.name() + "' uses "
                                + first.engine().kvCache().blockSize() + "; every pool uses the same block size");
            }
            if (p.engine().kvCache().prefixCaching() != first.engine().kvCache().prefixCaching()) {
                throw new ConfigException(
                        at + "engine.kv_cache.prefix_caching", "every pool caches prefixes, or none does");
            }
            if (!p.engine().kvcr().equals(engine.kvcr())) {
                throw new ConfigException(
                        at + "engine.kvcr", "KVCR is cluster-wide: set it in the top-level engine section only");
            }
            if (!p.engine().kvCache().hostOffload().equals(engine.kvCache().hostOffload())) {
                throw new ConfigException(
                        at + "engine.kv_cache.host_offload",
                        "the G2 host tier is cluster-wide: set it in the top-level engine section only");
            }
        }
    }

    /** The config pool {@code i} of {@code cluster.pools} runs: its engine and timing in place of the top-level ones. */
    public SimConfig forPool(int i) {
        PoolConfig p = cluster.pools().get(i);
        ClusterConfig c = p.attentionDp() == null ? cluster : cluster.withAttentionDp(p.attentionDp());
        return new SimConfig(workload, c, p.engine(), p.timing(), limits, output, baseDir);
    }

    /** The same config with relative paths resolved against {@code dir} (null: the working directory). */
    public SimConfig withBaseDir(Path dir) {
        return new SimConfig(
                workload,
                cluster,
                engine,
                timing,
                limits,
                output,
                dir == null ? null : dir.toAbsolutePath().normalize());
    }

    /**
     * A file named in the config ({@code workload.trace.path}, {@code timing.model} as a path, {@code
     * timing.profile.path}, {@code timing.calibration}): absolute as given; relative against the config file's
     * directory; and, for a relative path that exists only relative to the working directory (configs written before
     * paths followed their file, or a path typed with {@code --set}), that one.
     */
    public Path resolve(String path) {
        return resolve(baseDir, path);
    }

    /** {@link #resolve(String)} against a given base directory (null: the working directory). */
    public static Path resolve(Path baseDir, String path) {
        Path p = Path.of(path);
        if (p.isAbsolute() || baseDir == null) {
            return p;
        }
        Path beside = baseDir.resolve(p).normalize();
        if (Files.exists(beside) || !Files.exists(p)) {
            return beside;
        }
        return p;
    }
}
