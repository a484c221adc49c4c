package io.servesim.validate;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SharedPrefixConfig;
import io.servesim.config.SimConfig;
import io.servesim.config.TimingConfig;
import io.servesim.config.VllmVersion;
import io.servesim.timing.Deployment;
import io.servesim.timing.ModelSpec;
import io.servesim.timing.Specs;
import io.servesim.workload.trace.TraceFormatException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One measured vLLM run in the uniform layout: a folder with {@code meta.json} (deployment and provenance),
 * {@code workload.jsonl} (what was sent) and {@code measured.jsonl} (per-request latencies). Reading checks the
 * deployment fields and resolves the GPU and model to presets; {@link #config} turns the deployment into a servesim
 * config (docs/accuracy.md has the mapping). Every error is one line naming the run, the file and the field.
 *
 * <p>Why one class of this size: meta.json's fields, their defaults, what the workload's lengths imply and the
 * mapping onto config keys are one table (docs/accuracy.md), each entry with its one-line error.
 *
 * @param name the folder's name
 * @param dir the folder
 * @param gpu GPU preset (from {@code gpu}, a printed GPU name)
 * @param model model preset (from {@code model}, a Hugging Face id)
 * @param tensorParallel {@code tensor_parallel}
 * @param dataParallel {@code gpu_count / tensor_parallel} when {@code gpu_count} is stated (a stated {@code
 *     data_parallel} that disagrees is warned about), else {@code data_parallel} (null: 1, or for a MoE model {@code
 *     expert_parallel / tensor_parallel} when that is larger: vLLM's expert-parallel group is TP x DP)
 * @param expertParallel {@code expert_parallel} (null: 1); above 1 it is TP x DP, vLLM's only expert-parallel group
 *     (another stated size is warned about)
 * @param maxNumSeqs {@code max_num_seqs}
 * @param maxNumBatchedTokens {@code max_num_batched_tokens}
 * @param maxModelLen {@code max_model_len}, or null (then the model's {@code max_position_embeddings}, capped by the
 *     KV pool)
 * @param blockSize {@code block_size}
 * @param prefixCaching {@code enable_prefix_caching} (null: true)
 * @param chunkedPrefill {@code enable_chunked_prefill} (null: true)
 * @param statedNumGpuBlocks {@code num_gpu_blocks}, or null (then derived as vLLM does)
 * @param gpuMemoryUtilization {@code gpu_memory_utilization} (null: 0.9)
 * @param gpuP2p {@code gpu_p2p}: whether the GPUs reach each other peer to peer (null: true; {@code
 *     timing.gpu_p2p})
 * @param linkGbytesPerS {@code link_gbytes_per_s}: what the machine's GPU-to-GPU collectives reach per direction, or
 *     null (the GPU preset's link and measured tables; {@code timing.link_gbytes_per_s})
 * @param vllmVersion {@code vllm_version}, or null when not recorded ({@code timing.vllm_version}: which measured
 *     kernel tables price the run where vLLM versions differ)
 * @param asyncScheduling {@code async_scheduling} when stated, else vLLM's default for {@code vllm_version}: async from
 *     v0.14.0 on (and when the version is unknown), synchronous before ({@link #asyncByDefault})
 * @param weightDtype from {@code dtype} (null: bf16), or the quantized type the model's name says ({@code -FP8},
 *     {@code -NVFP4}: {@link Specs#checkpointDtypeOfId}; an NVFP4 MoE model's experts only)
 * @param kvDtype from {@code kv_cache_dtype} (null or {@code auto}: the weight dtype)
 * @param clientSide whether {@code measured_definitions} says the latencies were timed client-side (they then include
 *     HTTP and tokenisation, which an engine simulation does not see)
 * @param sharedPrefix the shared system prompt of {@code workload_profile.shared_prefix}, or null
 * @param tokenIds whether the workload rows carry {@code prompt_token_ids} (judged by the first row)
 * @param clientTimeoutS {@code client_timeout_s} (servesim's: seconds after which the measuring client gave up on a
 *     request; 0: never), else the default of the client tool {@code measured_definitions} names (300 s for
 *     inference-perf, blis observe and GuideLLM, 6 h for vLLM's benchmark client), else null ({@code workload.client_timeout_s})
 * @param hostOffloadBlocks the CPU blocks per engine of vLLM's native KV offloading from {@code kv_offloading_size}
 *     ({@link #hostOffloadBlocks(double, ModelSpec, TimingConfig.Dtype, int, int)}), or null when it is off
 * @param warnings what servesim read differently from what meta.json states, and why (e.g. a data-parallel size
 *     that does not add up to {@code gpu_count}), each naming the run
 * @param closedLoopClients {@code concurrency} when the run was measured closed loop (a client count and no request
 *     rate: each client sent its next request when the last one returned), else null; the replay then keeps that
 *     many requests in flight, in the workload's order, instead of replaying the recorded send times
 */
public record RunFolder(
        String name,
        Path dir,
        String gpu,
        String model,
        int tensorParallel,
        int dataParallel,
        int expertParallel,
        int maxNumSeqs,
        int maxNumBatchedTokens,
        Integer maxModelLen,
        int blockSize,
        boolean prefixCaching,
        boolean chunkedPrefill,
        Integer statedNumGpuBlocks,
        double gpuMemoryUtilization,
        boolean gpuP2p,
        Double linkGbytesPerS,
        VllmVersion vllmVersion,
        boolean asyncScheduling,
        TimingConfig.Dtype weightDtype,
        TimingConfig.Dtype kvDtype,
        boolean clientSide,
        SharedPrefixConfig sharedPrefix,
        boolean tokenIds,
        Double clientTimeoutS,
        Integer hostOffloadBlocks,
        List<String> warnings,
        Integer closedLoopClients) {

    /**
     * The total timeout of an inference-perf client that sets none ({@code load.request_timeout} unset): its aiohttp
     * session then takes aiohttp's default {@code ClientTimeout(total=300)} (kubernetes-sigs/inference-perf {@code
     * inference_perf/client/modelserver/openai_client.py}, which passes aiohttp's sentinel; aiohttp's {@code
     * DEFAULT_TIMEOUT}). A request not finished 300 s after it was sent fails at the client, which disconnects, and
     * vLLM aborts it. BLIS's own load generator, {@code blis observe}, has the same default: its Go HTTP client's
     * whole-request timeout is {@code --timeout}, 300 s unless given (inference-sim/inference-sim {@code
     * cmd/observe.go}, {@code defaultHTTPTimeoutSeconds}, at f90a1e3a), and it records such a request as
     * {@code timeout}.
     */
    public static final double INFERENCE_PERF_TIMEOUT_S = 300;

    /**
     * The total timeout a measuring client applies unless told otherwise, by the tool {@code measured_definitions}
     * names (case ignored), in the order tried: inference-perf and {@code blis observe} ({@link
     * #INFERENCE_PERF_TIMEOUT_S}); GuideLLM, whose settings default {@code request_timeout} to 5 minutes
     * ({@code GUIDELLM__REQUEST_TIMEOUT}); and vLLM's own benchmark client ({@code vllm bench serve}, formerly {@code
     * benchmark_serving.py}), whose aiohttp session allows 6 hours ({@code AIOHTTP_TIMEOUT} in {@code
     * vllm/benchmarks/lib/endpoint_request_func.py}).
     */
    private static final List<Map.Entry<String, Double>> CLIENT_TOOL_TIMEOUTS_S = List.of(
            Map.entry("inference-perf", INFERENCE_PERF_TIMEOUT_S),
            Map.entry("blis observe", INFERENCE_PERF_TIMEOUT_S),
            Map.entry("guidellm", 300.0),
            Map.entry("vllm bench", 6 * 3600.0),
            Map.entry("benchmark_serving", 6 * 3600.0));

    private static boolean knownModel(String id) {
        try {
            Specs.modelByHfId(id, "model");
            return true;
        } catch (ConfigException e) {
            return false;
        }
    }

    /** The default total timeout of the client tool {@code definitions} names, or null for another client. */
    static Double clientToolTimeoutS(String definitions) {
        String d = definitions.toLowerCase(Locale.ROOT);
        for (Map.Entry<String, Double> tool : CLIENT_TOOL_TIMEOUTS_S) {
            if (d.contains(tool.getKey())) {
                return tool.getValue();
            }
        }
        return null;
    }

    /**
     * A fact a run folder's meta.json lacks or states wrongly, given on the command line ({@code --meta
     * RUN:FIELD=VALUE}): {@code field} of every run named {@code run} (or, when it ends in {@code *}, every run whose
     * name starts with what precedes it) reads as {@code value}.
     *
     * @param run a run folder's name, or a name prefix followed by {@code *}
     * @param field a top-level meta.json field
     * @param value the field's value: JSON (a number, {@code true}, {@code null}, a quoted string), else a string
     */
    public record MetaFact(String run, String field, JsonNode value) {
        /** Parses {@code RUN:FIELD=VALUE}; a malformed one is a {@link ConfigException} saying what was expected. */
        public static MetaFact parse(String text) {
            int colon = text.indexOf(':');
            int eq = colon < 0 ? -1 : text.indexOf('=', colon);
            if (colon <= 0 || eq <= colon + 1) {
                throw new ConfigException(
                        "--meta", "expected RUN:FIELD=VALUE (e.g. 'blis_*:vllm_version=0.15.1'), got \"" + text + "\"");
            }
            String raw = text.substring(eq + 1);
            JsonNode value;
            try {
                value = JSON.readTree(raw);
            } catch (JacksonException e) {
                value = null;
            }
            if (value == null || value.isMissingNode() || value.isContainer()) {
                value = JSON.getNodeFactory().stringNode(raw);
            }
            String field = text.substring(colon + 1, eq);
            if (!FIELDS.contains(field)) {
                throw new ConfigException(
                        "--meta",
                        "unknown meta.json field '" + field + "' in \"" + text + "\" (known: "
                                + String.join(", ", FIELDS) + ")");
            }
            return new MetaFact(text.substring(0, colon), field, value);
        }

        /** Whether this fact is about the run named {@code name}. */
        public boolean matches(String name) {
            return run.endsWith("*") ? name.startsWith(run.substring(0, run.length() - 1)) : name.equals(run);
        }
    }

    /** The meta.json fields a run folder's replay reads, in the layout's order: the ones {@code --meta} may give. */
    public static final List<String> FIELDS = List.of(
            "gpu",
            "gpu_count",
            "model",
            "dtype",
            "kv_cache_dtype",
            "vllm_version",
            "tensor_parallel",
            "pipeline_parallel",
            "data_parallel",
            "expert_parallel",
            "max_num_seqs",
            "max_num_batched_tokens",
            "max_model_len",
            "block_size",
            "enable_prefix_caching",
            "enable_chunked_prefill",
            "num_gpu_blocks",
            "gpu_memory_utilization",
            "gpu_p2p",
            "link_gbytes_per_s",
            "async_scheduling",
            "client_timeout_s",
            "concurrency",
            "request_rate",
            "kv_offloading_size",
            "kv_offloading_backend",
            "measured_definitions",
            "workload_profile");

    /** The deployment file of a run folder. */
    public static final String META = "meta.json";

    /** The workload file of a run folder. */
    public static final String WORKLOAD = "workload.jsonl";

    /** The per-request latencies of a run folder. */
    public static final String MEASURED = "measured.jsonl";

    /** meta.json fields that must be present and non-null. */
    public static final List<String> REQUIRED = List.of(
            "gpu",
            "model",
            "tensor_parallel",
            "max_num_seqs",
            "max_num_batched_tokens",
            "block_size",
            "measured_definitions");

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * What servesim derives for a run that states its KV pool size: the stated count, the count derived as vLLM
     * derives it (the same config without {@code num_gpu_blocks}), and the count the simulation used.
     *
     * @param stated the run's {@code num_gpu_blocks}, or null
     * @param derived servesim's derivation, or null when it failed ({@code derivedProblem} says why)
     * @param used what the simulated config resolves to (stated unless a {@code --set} changed it)
     * @param derivedProblem why the derivation failed, or null
     */
    public record NumGpuBlocksCheck(Integer stated, Integer derived, int used, String derivedProblem) {
        /** (derived − stated) / stated in %, or NaN when either is unknown. */
        public double derivedVsStatedPct() {
            return stated == null || derived == null ? Double.NaN : (derived - (double) stated) / stated * 100;
        }
    }

    /** Every subfolder of {@code dir} holding a meta.json, read, sorted by name; none is an error. */
    public static List<RunFolder> corpus(Path dir) {
        return corpus(dir, List.of());
    }

    /**
     * Every subfolder of {@code dir} holding a meta.json, read with {@code facts} over their meta.json, sorted by
     * name; none is an error, and so is a fact about no run of the corpus.
     */
    public static List<RunFolder> corpus(Path dir, List<MetaFact> facts) {
        return corpus(dir, facts, (run, e) -> {
            throw e;
        });
    }

    /**
     * {@link #corpus(Path, List)}, except that a run folder that cannot be read (its meta.json, workload or
     * measured file missing or invalid: an {@linkplain #isInputError input error}) is handed to {@code unreadable}
     * with its name, in name order, and left out; the others are returned. A fact must still name some folder.
     */
    public static List<RunFolder> corpus(
            Path dir, List<MetaFact> facts, java.util.function.BiConsumer<String, RuntimeException> unreadable) {
        if (!Files.isDirectory(dir)) {
            throw new ConfigException("", "corpus " + dir + ": no such directory");
        }
        List<Path> folders;
        try (Stream<Path> list = Files.list(dir)) {
            folders = list.filter(p -> Files.isRegularFile(p.resolve(META)))
                    .sorted((a, b) ->
                            a.getFileName().toString().compareTo(b.getFileName().toString()))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("corpus " + dir + ": cannot list: " + e.getMessage(), e);
        }
        if (folders.isEmpty()) {
            throw new ConfigException("", "corpus " + dir + ": no run folders (subdirectories with a " + META + ")");
        }
        List<RunFolder> runs = new ArrayList<>();
        for (Path f : folders) {
            try {
                runs.add(read(f, facts));
            } catch (RuntimeException e) {
                if (!isInputError(e)) {
                    throw e;
                }
                unreadable.accept(f.getFileName().toString(), e);
            }
        }
        for (MetaFact fact : facts) {
            if (folders.stream().noneMatch(f -> fact.matches(f.getFileName().toString()))) {
                throw new ConfigException(
                        "--meta", "no run of corpus " + dir + " is named " + fact.run() + " (" + fact.field() + ")");
            }
        }
        return runs;
    }

    /**
     * Whether {@code e} is a fault of the input rather than of servesim: a config or trace-format error, or a file
     * that cannot be read. A corpus validation reports such a run and goes on with the others.
     */
    public static boolean isInputError(RuntimeException e) {
        return e instanceof ConfigException || e instanceof TraceFormatException || e instanceof UncheckedIOException;
    }

    /** Reads and checks a run folder's meta.json and the presence of its workload and measured files. */
    public static RunFolder read(Path dir) {
        return read(dir, List.of());
    }

    /** {@link #read(Path)} with the {@code facts} about this run taking the place of its meta.json's fields. */
    public static RunFolder read(Path dir, List<MetaFact> facts) {
        Path abs = dir.toAbsolutePath().normalize();
        String name =
                abs.getFileName() == null ? abs.toString() : abs.getFileName().toString();
        Meta m = new Meta(name, abs.resolve(META));
        for (MetaFact fact : facts) {
            if (fact.matches(name)) {
                m.set(fact.field(), fact.value());
            }
        }
        for (String f : List.of(WORKLOAD, MEASURED)) {
            if (!Files.isRegularFile(abs.resolve(f))) {
                throw new ConfigException("", "run " + name + ": " + f + ": missing");
            }
        }
        for (String f : REQUIRED) {
            m.require(f);
        }
        String gpu = m.wrap("gpu", () -> Specs.gpuByName(m.string("gpu"), "gpu").name());
        // a Hugging Face id has no spaces: when the whole value names no model, what follows its first word is taken
        // for a converter's annotation ("... (revision 1a2b)"); an error names the whole value
        String statedModel = m.string("model").strip();
        String firstWord = statedModel.split("\\s+", 2)[0];
        String modelId = !firstWord.equals(statedModel) && knownModel(firstWord) && !knownModel(statedModel)
                ? firstWord
                : statedModel;
        ModelSpec model = m.wrap("model", () -> Specs.modelByHfId(modelId, "model"));
        int tp = m.integer("tensor_parallel", null);
        int dp = m.integer("data_parallel", 1);
        int pp = m.integer("pipeline_parallel", 1);
        if (pp > 1) {
            throw m.error(
                    "pipeline_parallel",
                    "is " + pp + " but servesim does not simulate pipeline parallelism (only tensor, data and"
                            + " expert parallelism)");
        }
        int ep = m.integer("expert_parallel", 1);
        List<String> warnings = new ArrayList<>();
        int gpus = m.has("gpu_count") ? m.integer("gpu_count", null) : 0;
        if (gpus > 0 && gpus != tp * dp && gpus % tp == 0) {
            // the GPUs the run used are the deployment's TP x DP (no pipeline parallelism here): "TP 1, EP 2" on two
            // GPUs is two data-parallel ranks, whatever a default data_parallel of 1 says
            if (m.has("data_parallel")) {
                warnings.add("run " + name + ": meta.json: data_parallel is " + dp + " but gpu_count " + gpus
                        + " over tensor_parallel " + tp + " makes " + gpus / tp + " data-parallel ranks: servesim"
                        + " replays " + gpus / tp);
            }
            dp = gpus / tp;
        } else if (!m.has("data_parallel") && model.moe() && ep > tp && ep % tp == 0) {
            // vLLM's expert-parallel group is TP x DP (--enable-expert-parallel): "TP 1, EP 2" is DP 2
            dp = ep / tp;
        }
        if (ep > 1 && !model.moe()) {
            throw m.error("expert_parallel", "is " + ep + " but " + model.name() + " has no experts");
        }
        if (ep > 1 && ep != tp * dp) {
            // vLLM has no expert-parallel size of its own: --enable-expert-parallel splits the experts over the
            // TP x DP GPUs of the deployment
            warnings.add("run " + name + ": meta.json: expert_parallel is " + ep + " but vLLM's expert-parallel group"
                    + " is tensor_parallel x data_parallel = " + tp * dp + " GPUs: servesim splits the experts over "
                    + tp * dp);
            ep = tp * dp;
        }
        m.string("measured_definitions");
        TimingConfig.Dtype stated = m.dtype("dtype", TimingConfig.Dtype.BF16);
        // an FP8 release named as such (e.g. RedHatAI/...-FP8-dynamic) serves FP8 weights whatever --dtype says
        // (that is the activations' type, and the KV cache's under "auto")
        TimingConfig.Dtype named = Specs.checkpointDtypeOfId(modelId);
        // NVIDIA's NVFP4 releases state kv_cache_quant_algo FP8 (their hf_quant_config.json: MiniMax-M2.5, Kimi-K2.6,
        // DeepSeek-V3.1, as AIConfigurator copies them at 095f58a5), which vLLM's kv_cache_dtype "auto" takes
        boolean nvidiaFp4 = named == TimingConfig.Dtype.NVFP4
                && modelId.toLowerCase(Locale.ROOT).startsWith("nvidia/");
        TimingConfig.Dtype kv = m.dtype("kv_cache_dtype", nvidiaFp4 ? TimingConfig.Dtype.FP8 : stated);
        TimingConfig.Dtype weights = named != null && stated == TimingConfig.Dtype.BF16 ? named : stated;
        double utilization = m.fraction("gpu_memory_utilization", 0.9);
        int blockSize = m.integer("block_size", null);
        Integer maxModelLen = m.has("max_model_len") ? m.integer("max_model_len", null) : null;
        Integer blocks = m.has("num_gpu_blocks") ? m.integer("num_gpu_blocks", null) : null;
        boolean tokenIds = firstRowHasTokenIds(name, abs.resolve(WORKLOAD));
        VllmVersion version = m.version("vllm_version");
        String fork = version == null ? forkVersion(m.root) : null;
        if (fork != null) {
            version = VllmVersion.find(fork);
            warnings.add("run " + name + ": meta.json: vllm_version is not stated, but inference-sim's vLLM fork"
                    + " served the run, on vLLM " + fork + " then: replayed as " + fork);
        }
        String definitions = m.string("measured_definitions");
        Double timeout;
        if (m.has("client_timeout_s")) {
            JsonNode v = m.root.get("client_timeout_s");
            if (!v.isNumber() || v.doubleValue() < 0 || !Double.isFinite(v.doubleValue())) {
                throw m.error("client_timeout_s", "expected seconds (0: the client never gave up), got " + v);
            }
            timeout = v.doubleValue() > 0 ? v.doubleValue() : null;
        } else {
            timeout = clientToolTimeoutS(definitions);
        }
        Integer hostBlocks = null;
        if (m.has("kv_offloading_backend") && !m.string("kv_offloading_backend").equals("native")) {
            throw m.error(
                    "kv_offloading_backend",
                    "is '" + m.string("kv_offloading_backend") + "' but servesim models vLLM's native CPU offloading"
                            + " (OffloadingConnector) only");
        }
        if (m.has("kv_offloading_size")) {
            JsonNode v = m.root.get("kv_offloading_size");
            if (!v.isNumber() || v.doubleValue() < 0 || !Double.isFinite(v.doubleValue())) {
                throw m.error(
                        "kv_offloading_size", "expected GiB of CPU memory (vLLM's --kv-offloading-size), got " + v);
            }
            if (v.doubleValue() > 0) {
                if (!m.bool("enable_prefix_caching", true)) {
                    throw m.error(
                            "kv_offloading_size",
                            "needs prefix caching (vLLM's offloading connector stores and finds blocks by their hash)");
                }
                hostBlocks = hostOffloadBlocks(v.doubleValue(), model, kv, blockSize, tp);
            }
        }
        return new RunFolder(
                name,
                abs,
                gpu,
                model.name(),
                tp,
                dp,
                ep,
                m.integer("max_num_seqs", null),
                m.integer("max_num_batched_tokens", null),
                maxModelLen,
                blockSize,
                m.bool("enable_prefix_caching", true),
                m.bool("enable_chunked_prefill", true),
                blocks,
                utilization,
                m.bool("gpu_p2p", true),
                m.has("link_gbytes_per_s") ? m.positive("link_gbytes_per_s") : null,
                version,
                m.bool("async_scheduling", version == null || asyncByDefault(version)),
                weights,
                kv,
                m.string("measured_definitions").toLowerCase(Locale.ROOT).contains("client-side"),
                withRepeats(m.sharedPrefix(), name, abs.resolve(WORKLOAD), tokenIds),
                tokenIds,
                timeout,
                hostBlocks,
                List.copyOf(warnings),
                closedLoop(m));
    }

    /**
     * The client count of a closed-loop measurement: {@code concurrency} (a whole number of at least 1) when the run
     * states no request rate ({@code request_rate} absent, null, or "inf": clients sending as fast as their previous
     * request returns, as {@code vllm bench serve --max-concurrency N} does at an infinite rate), else null — with a
     * rate the recorded send times already carry both.
     */
    private static Integer closedLoop(Meta m) {
        if (!m.has("concurrency")) {
            return null;
        }
        JsonNode c = m.root.get("concurrency");
        if (!c.isIntegralNumber() || c.longValue() < 1 || c.longValue() > Integer.MAX_VALUE) {
            throw m.error("concurrency", "expected a number of clients (a whole number >= 1) or null, got " + c);
        }
        JsonNode rate = m.root.get("request_rate");
        boolean noRate = rate == null
                || rate.isNull()
                || (rate.isString()
                        && rate.asString().strip().toLowerCase(Locale.ROOT).startsWith("inf"));
        return noRate ? c.intValue() : null;
    }

    /**
     * The CPU blocks of vLLM's native KV offloading for {@code --kv-offloading-size} GiB: the size, which spans the
     * engine's tensor-parallel ranks, over one block's bytes on one GPU times the ranks ({@code
     * VllmConfig._post_init_kv_transfer_config} passes {@code cpu_bytes_to_use = size << 30}; {@code
     * CPUOffloadingSpec} divides it by {@code (GPU KV bytes / num_blocks) x world_size}). A block whose KV heads are
     * replicated over the ranks costs each copy, as in vLLM.
     */
    public static int hostOffloadBlocks(
            double gib, ModelSpec model, TimingConfig.Dtype kvDtype, int blockSize, int tensorParallel) {
        long bytesPerBlock = model.kvBytesPerToken((int) kvDtype.bytes(), tensorParallel) * blockSize * tensorParallel;
        return (int) Math.min(Integer.MAX_VALUE, (long) Math.floor(gib * (1L << 30)) / bytesPerBlock);
    }

    /**
     * The vLLM a run served by inference-sim's instrumented vLLM fork (BLIS's measurements: its meta.json's notes name
     * the fork, or its source is inference-sim/training) ran when it records no version: the fork builds on an
     * upstream release image, v0.14.1 from 2026-01-26 (inference-sim/vllm d92280b6, "Update base image to v0.14.1")
     * and v0.15.1 from 2026-02-06 (f6ec81c7, "Bump vLLM base image to v0.15.1", its newest public commit when read in
     * December 2026), so a run collected (meta.json {@code collected}, {@code YYYYMMDD-...}) on or after a bump ran
     * that release, and one with no date the newest; null for any other run, or one collected before 2026-01-26.
     */
    static String forkVersion(JsonNode meta) {
        boolean fork = meta.path("source").path("repo").asString("").equalsIgnoreCase("inference-sim/training");
        for (JsonNode note : meta.path("notes")) {
            fork |= note.isString() && note.asString().toLowerCase(Locale.ROOT).contains("inference-sim/vllm");
        }
        if (!fork) {
            return null;
        }
        String collected = meta.path("collected").asString("");
        java.util.regex.Matcher day =
                java.util.regex.Pattern.compile("^(\\d{8})").matcher(collected);
        if (!day.find() || day.group(1).compareTo("20260206") >= 0) {
            return "0.15.1";
        }
        return day.group(1).compareTo("20260126") >= 0 ? "0.14.1" : null;
    }

    /**
     * Whether vLLM of this version runs the async engine loop by default: from v0.14.0 on (vllm-project/vllm#27614,
     * "Enable async scheduling by default", 2025-12-29); before it the loop was synchronous unless {@code
     * --async-scheduling} was passed.
     */
    public static boolean asyncByDefault(VllmVersion version) {
        return version.compareTo(io.servesim.config.ConfigLoader.ASYNC_BY_DEFAULT) >= 0;
    }

    /** The {@code --set} overrides that put this run's deployment and workload into a config, in order. */
    public List<String> overrides() {
        List<String> sets = new ArrayList<>();
        sets.add("workload.type=trace");
        sets.add("workload.trace.format=measured");
        // absolute: a base config elsewhere resolves relative paths against its own directory
        sets.add("workload.trace.path="
                + quoted(dir.resolve(WORKLOAD).toAbsolutePath().normalize().toString()));
        if (sharedPrefix != null && !tokenIds) {
            sets.add("workload.trace.shared_prefix={tokens: " + sharedPrefix.tokens() + ", groups: "
                    + sharedPrefix.groups() + ", repeat_period: "
                    + (sharedPrefix.repeatPeriod() == null ? "null" : sharedPrefix.repeatPeriod()) + "}");
        }
        if (closedLoopClients != null) {
            sets.add("workload.trace.arrival=concurrency");
            sets.add("workload.trace.concurrency=" + closedLoopClients);
        }
        sets.add("cluster.workers=1");
        sets.add("cluster.attention_dp=" + dataParallel);
        if (dataParallel > 1) {
            // vLLM keeps the data-parallel ranks of an MoE model in step (dummy batches); dense ranks run freely
            boolean moe = Specs.model(model, "timing.model").moe();
            sets.add("cluster.dp_mode=" + (moe ? "lockstep" : "independent"));
        }
        sets.add("timing.model=" + model);
        sets.add("timing.gpu=" + gpu);
        sets.add("timing.tensor_parallel=" + tensorParallel);
        sets.add("timing.expert_parallel=" + (expertParallel > 1));
        if (weightDtype == TimingConfig.Dtype.NVFP4
                && Specs.model(model, "timing.model").moe()) {
            // an NVFP4 release of a MoE model quantizes its routed experts and keeps attention in BF16 (NVIDIA's
            // DeepSeek-R1 FP4 and the MoE exports named -NVFP4; a config.json's exclude_modules says so per model)
            sets.add("timing.weight_dtype=bf16");
            sets.add("timing.expert_dtype=nvfp4");
        } else {
            sets.add("timing.weight_dtype=" + weightDtype.configName());
        }
        sets.add("timing.kv_dtype=" + kvDtype.configName());
        sets.add(String.format(Locale.ROOT, "timing.gpu_memory_utilization=%s", gpuMemoryUtilization));
        sets.add("timing.gpu_p2p=" + gpuP2p);
        if (linkGbytesPerS != null) {
            sets.add(String.format(Locale.ROOT, "timing.link_gbytes_per_s=%s", linkGbytesPerS));
        }
        if (vllmVersion != null) {
            sets.add("timing.vllm_version=" + quoted(vllmVersion.toString()));
        }
        sets.add("engine.scheduler.async_scheduling=" + asyncScheduling);
        if (clientTimeoutS != null) {
            sets.add(String.format(Locale.ROOT, "workload.client_timeout_s=%s", clientTimeoutS));
        }
        if (clientSide) {
            // an HTTP client sends the output length as max_tokens: the API server refuses what cannot fit
            sets.add("workload.max_tokens_sent=true");
        }
        sets.add("engine.scheduler.max_num_seqs=" + maxNumSeqs);
        sets.add("engine.scheduler.max_num_batched_tokens=" + maxNumBatchedTokens);
        sets.add("engine.scheduler.enable_chunked_prefill=" + chunkedPrefill);
        sets.add("engine.kv_cache.block_size=" + blockSize);
        sets.add("engine.kv_cache.prefix_caching=" + prefixCaching);
        sets.add("engine.kv_cache.num_gpu_blocks=" + (statedNumGpuBlocks == null ? "null" : statedNumGpuBlocks));
        if (hostOffloadBlocks != null) {
            sets.add("engine.kv_cache.host_offload.num_host_blocks=" + hostOffloadBlocks);
        }
        sets.add("engine.max_model_len=" + (maxModelLen == null ? "null" : maxModelLen));
        return sets;
    }

    /**
     * The config that replays this run: {@code base} (servesim's defaults when null) with {@link #overrides()} and
     * then the user's {@code sets} applied, and the loader's warnings.
     */
    public ConfigLoader.Loaded load(Path base, List<String> sets) {
        List<String> all = new ArrayList<>(overrides());
        all.addAll(sets);
        try {
            ConfigLoader.Loaded loaded = base == null
                    ? ConfigLoader.fromYamlWithWarnings("", "defaults", all)
                    : ConfigLoader.loadWithWarnings(base, all);
            if (!loaded.config().cluster().pools().isEmpty()) {
                // a pool's own timing and engine settings would win over the run's deployment set above, and the
                // replay would silently be of another GPU or model
                throw new ConfigException(
                        "cluster.pools",
                        "a measured run is replayed on the one deployment its meta.json states; remove cluster.pools"
                                + " (and cluster.mode) from the base config");
            }
            return loaded;
        } catch (RuntimeException e) {
            throw named(e);
        }
    }

    /** The config that replays this run (see {@link #load}). */
    public SimConfig config(Path base, List<String> sets) {
        return load(base, sets).config();
    }

    /** The measured latencies (measured.jsonl, joined with workload.jsonl for the output throughput). */
    public MeasuredRun measured() {
        try {
            return MeasuredRun.readRunLayout(dir.resolve(MEASURED), dir.resolve(WORKLOAD), "run " + name + ": ");
        } catch (RuntimeException e) {
            throw named(e);
        }
    }

    /**
     * Stated versus derived KV pool size for {@code config} (this run's config): the block count servesim derives as
     * vLLM does without {@code num_gpu_blocks}, next to the stated one and the one {@code config} uses.
     */
    public NumGpuBlocksCheck numGpuBlocksCheck(SimConfig config) {
        int used;
        try {
            used = Deployment.resolve(config).numGpuBlocks();
        } catch (RuntimeException e) {
            throw named(e);
        }
        Integer derived = null;
        String problem = null;
        try {
            SimConfig without = ConfigLoader.fromYaml(
                            ConfigLoader.toYaml(config), "run " + name, List.of("engine.kv_cache.num_gpu_blocks=null"))
                    .withBaseDir(config.baseDir());
            Deployment d = Deployment.resolve(without);
            if (d.blocksSource().equals("derived")) {
                derived = d.numGpuBlocks();
            } else {
                problem = "no model and GPU to derive from";
            }
        } catch (ConfigException e) {
            problem = e.getMessage();
        }
        return new NumGpuBlocksCheck(statedNumGpuBlocks, derived, used, problem);
    }

    /** {@code e} with its message prefixed {@code run NAME: } (unless it already is), keeping its kind. */
    RuntimeException named(RuntimeException e) {
        String prefix = "run " + name + ": ";
        String msg = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (msg.startsWith(prefix)) {
            return e;
        }
        return switch (e) {
            case ConfigException c -> new ConfigException("", prefix + c.getMessage());
            case TraceFormatException t -> new TraceFormatException(prefix + t.getMessage());
            case UncheckedIOException u -> new UncheckedIOException(prefix + u.getMessage(), u.getCause());
            default -> e;
        };
    }

    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** Rows whose length must equal the row {@code period} earlier for {@link #inferRepeatPeriod} to accept it. */
    public static final double REPEAT_SHARE = 0.9;

    /** The longest repeat period {@link #inferRepeatPeriod} considers. */
    public static final int MAX_REPEAT_PERIOD = 1000;

    /**
     * The smallest period P (2 to {@link #MAX_REPEAT_PERIOD}, at most a quarter of the rows) such that at least
     * {@link #REPEAT_SHARE} of the rows have the same prompt length as the row P earlier, or null. A benchmark that
     * cycles through a fixed list of prompts shows this: every BLIS run of the shared corpus repeats its lengths with
     * period 100 (98–99 % of rows), so its prompts are replayed as repeating, which decides their prefix-cache hits.
     * An inference from lengths, reported with every validation (docs/accuracy.md).
     */
    public static Integer inferRepeatPeriod(int[] lengths) {
        int n = lengths.length;
        for (int period = 2; period <= Math.min(MAX_REPEAT_PERIOD, n / 4); period++) {
            int same = 0;
            int allowedMisses = (int) Math.floor((1 - REPEAT_SHARE) * (n - period));
            int misses = 0;
            for (int i = period; i < n && misses <= allowedMisses; i++) {
                if (lengths[i] == lengths[i - period]) {
                    same++;
                } else {
                    misses++;
                }
            }
            if (misses <= allowedMisses && same > 0) {
                return period;
            }
        }
        return null;
    }

    private static SharedPrefixConfig withRepeats(
            SharedPrefixConfig shared, String name, Path workload, boolean tokenIds) {
        if (shared == null || tokenIds) {
            return shared;
        }
        it.unimi.dsi.fastutil.ints.IntArrayList lengths = new it.unimi.dsi.fastutil.ints.IntArrayList();
        int n = 0;
        try (BufferedReader r = Files.newBufferedReader(workload, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                n++;
                if (!line.isBlank()) {
                    JsonNode v = JSON.readTree(line).get("input_tokens");
                    if (v == null || !v.canConvertToInt()) {
                        throw new TraceFormatException(
                                "run " + name + ": " + WORKLOAD + ":" + n + ": input_tokens: expected an integer");
                    }
                    lengths.add(v.intValue());
                }
            }
        } catch (JacksonException e) {
            throw new TraceFormatException(
                    "run " + name + ": " + WORKLOAD + ":" + n + ": not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("run " + name + ": cannot read " + workload + ": " + e.getMessage(), e);
        }
        return new SharedPrefixConfig(shared.tokens(), shared.groups(), inferRepeatPeriod(lengths.toIntArray()));
    }

    private static boolean firstRowHasTokenIds(String name, Path workload) {
        int n = 0;
        try (BufferedReader r = Files.newBufferedReader(workload, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                n++;
                if (!line.isBlank()) {
                    JsonNode ids = JSON.readTree(line).get("prompt_token_ids");
                    return ids != null && !ids.isNull();
                }
            }
            return false;
        } catch (JacksonException e) {
            throw new TraceFormatException(
                    "run " + name + ": " + WORKLOAD + ":" + n + ": not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("run " + name + ": cannot read " + workload + ": " + e.getMessage(), e);
        }
    }

    /** meta.json's fields, each failure naming the run, the file and the field. */
    private static final class Meta {
        private final String run;
        private final JsonNode root;

        Meta(String run, Path file) {
            this.run = run;
            try {
                this.root = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
            } catch (JacksonException e) {
                throw new ConfigException(
                        "", "run " + run + ": " + META + ": not valid JSON: " + e.getOriginalMessage());
            } catch (IOException e) {
                throw new UncheckedIOException("run " + run + ": cannot read " + file + ": " + e.getMessage(), e);
            }
            if (root == null || !root.isObject()) {
                throw new ConfigException("", "run " + run + ": " + META + ": expected a JSON object");
            }
        }

        ConfigException error(String field, String problem) {
            return new ConfigException("", "run " + run + ": " + META + ": " + field + ": " + problem);
        }

        void set(String field, JsonNode value) {
            ((tools.jackson.databind.node.ObjectNode) root).set(field, value);
        }

        <T> T wrap(String field, java.util.function.Supplier<T> body) {
            try {
                return body.get();
            } catch (ConfigException e) {
                throw error(field, e.problem());
            }
        }

        boolean has(String field) {
            JsonNode v = root.get(field);
            return v != null && !v.isNull();
        }

        void require(String field) {
            if (!has(field)) {
                throw error(field, "missing");
            }
        }

        String string(String field) {
            require(field);
            JsonNode v = root.get(field);
            if (!v.isString()) {
                throw error(field, "expected a string, got " + v);
            }
            return v.stringValue();
        }

        /** A positive integer; {@code fallback} when null or absent (null fallback: required). */
        int integer(String field, Integer fallback) {
            if (!has(field)) {
                if (fallback == null) {
                    throw error(field, "missing");
                }
                return fallback;
            }
            JsonNode v = root.get(field);
            if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 1) {
                throw error(field, "expected a positive integer, got " + v);
            }
            return v.intValue();
        }

        /** A vLLM version from a string such as {@code 0.12.0} or {@code 0.19.0rc1}, or null when absent. */
        VllmVersion version(String field) {
            if (!has(field)) {
                return null;
            }
            VllmVersion v = VllmVersion.find(string(field));
            if (v == null) {
                throw error(field, "expected a vLLM version such as \"0.12.0\", got \"" + string(field) + "\"");
            }
            return v;
        }

        boolean bool(String field, boolean fallback) {
            if (!has(field)) {
                return fallback;
            }
            JsonNode v = root.get(field);
            if (!v.isBoolean()) {
                throw error(field, "expected true, false or null, got " + v);
            }
            return v.booleanValue();
        }

        /** A positive finite number (the field must be present). */
        double positive(String field) {
            JsonNode v = root.get(field);
            if (v == null || !v.isNumber() || !(v.doubleValue() > 0) || !Double.isFinite(v.doubleValue())) {
                throw error(field, "expected a positive number, got " + v);
            }
            return v.doubleValue();
        }

        double fraction(String field, double fallback) {
            if (!has(field)) {
                return fallback;
            }
            JsonNode v = root.get(field);
            if (!v.isNumber() || !(v.doubleValue() > 0) || v.doubleValue() > 1) {
                throw error(field, "expected a number in (0, 1], got " + v);
            }
            return v.doubleValue();
        }

        /**
         * A dtype as vLLM's {@code --dtype} / {@code --kv-cache-dtype} spell it: {@code fp8*} is fp8; bfloat16,
         * float16 (and half, bf16, fp16) and {@code auto ...} are 2-byte bf16 timing; null or absent is
         * {@code fallback}, and so is {@code auto} for the KV cache (vLLM then stores the model's dtype).
         */
        TimingConfig.Dtype dtype(String field, TimingConfig.Dtype fallback) {
            if (!has(field)) {
                return fallback;
            }
            // the first word decides: converters annotate the value ("auto (not set; model config torch_dtype=...)")
            String s = string(field).strip().toLowerCase(Locale.ROOT).split("[\\s(,;]", 2)[0];
            if (s.startsWith("fp8") || s.startsWith("float8")) { // vLLM's fp8, fp8_e4m3, ...; torch's float8_e4m3fn
                return TimingConfig.Dtype.FP8;
            }
            if (s.startsWith("auto")) {
                return field.equals("kv_cache_dtype") ? fallback : TimingConfig.Dtype.BF16;
            }
            if (List.of("bfloat16", "bf16", "float16", "fp16", "half", "torch.bfloat16", "torch.float16")
                    .contains(s)) {
                return TimingConfig.Dtype.BF16;
            }
            throw error(
                    field,
                    "unsupported dtype '" + root.get(field).stringValue()
                            + "' (bfloat16, float16, auto, fp8* or float8*; servesim times 2-byte and 1-byte elements)");
        }

        /** {@code workload_profile.shared_prefix}'s system prompt, or null when the run does not describe one. */
        SharedPrefixConfig sharedPrefix() {
            JsonNode p = root.path("workload_profile").path("shared_prefix");
            if (!p.isObject()) {
                return null;
            }
            JsonNode len = p.get("system_prompt_len");
            JsonNode groups = p.get("num_unique_system_prompts");
            if (len == null || len.isNull() || groups == null || groups.isNull()) {
                return null;
            }
            String where = "workload_profile.shared_prefix.";
            if (!len.isIntegralNumber() || !len.canConvertToInt() || len.intValue() < 1) {
                throw error(where + "system_prompt_len", "expected a positive integer, got " + len);
            }
            if (!groups.isIntegralNumber() || !groups.canConvertToInt() || groups.intValue() < 1) {
                throw error(where + "num_unique_system_prompts", "expected a positive integer, got " + groups);
            }
            return new SharedPrefixConfig(len.intValue(), groups.intValue());
        }
    }
}
