package io.servesim.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.SequencedSet;
import java.util.TreeSet;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.PropertyBindingException;
import tools.jackson.databind.exc.ValueInstantiationException;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.type.LogicalType;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Loads a {@link SimConfig}: reference.yaml defaults, merged with the user's YAML, then {@code --set} overrides in
 * order, then strict binding (unknown keys rejected) and validation. Every error is a {@link ConfigException}
 * naming the key path or the file and line.
 *
 * <p>Renamed keys ({@link #RENAMED}) are still accepted under their old names: the loader moves the value to the new
 * key and records a one-line deprecation warning in {@link Loaded#warnings()}; it never prints. Giving both names in
 * one source (the YAML file, or the {@code --set} overrides) is an error naming both.
 *
 * <p>Why one class of this size: merging, {@code --set} overrides, deprecated-key translation and error translation
 * all walk the same JSON tree with the same key-path bookkeeping.
 */
public final class ConfigLoader {
    private static final String REFERENCE = "/io/servesim/config/reference.yaml";

    /**
     * A key renamed under its section; the old name is still read, with a warning.
     *
     * @param section the dotted path of the section holding the key, e.g. {@code engine.kvcr}
     * @param oldKey the deprecated name
     * @param newKey the name to use
     * @param unit what the value means, for the warning
     */
    public record Rename(String section, String oldKey, String newKey, String unit) {
        /** The old key's full path. */
        public String oldPath() {
            return section + "." + oldKey;
        }

        /** The new key's full path. */
        public String newPath() {
            return section + "." + newKey;
        }

        String warning() {
            return oldPath() + " is deprecated: use " + newPath() + " (" + unit + ")";
        }
    }

    /**
     * Renamed keys. {@code *_gbps} meant gigabytes per second, but Gbps conventionally means gigabits: a "400 Gbps"
     * NIC typed in as 400 was 8x too fast. The keys now say {@code *_gbytes_per_s}.
     */
    public static final List<Rename> RENAMED = List.of(
            new Rename("engine.kvcr", "bandwidth_gbps", "bandwidth_gbytes_per_s", "GB/s"),
            new Rename("engine.kvcr", "fabric_gbps", "fabric_gbytes_per_s", "GB/s"),
            new Rename("engine.kv_cache.host_offload", "d2h_gbps", "d2h_gbytes_per_s", "GB/s"),
            new Rename("engine.kv_cache.host_offload", "h2d_gbps", "h2d_gbytes_per_s", "GB/s"),
            new Rename("engine.kv_cache.host_offload", "shared_gbps", "shared_gbytes_per_s", "GB/s"),
            new Rename("timing.custom_gpu", "bandwidth_gbps", "bandwidth_gbytes_per_s", "GB/s"),
            new Rename("timing.custom_gpu", "link_gbps", "link_gbytes_per_s", "GB/s per direction"));

    /**
     * A loaded config and what the user should be told about it.
     *
     * @param config the validated config
     * @param warnings one line each (no prefix, no newline), in the order found, without repeats: e.g. a deprecated
     *     key name; the caller decides how to show them
     */
    public record Loaded(SimConfig config, List<String> warnings) {
        /** Defensive copy. */
        public Loaded {
            warnings = List.copyOf(warnings);
        }
    }

    private static final YAMLMapper MAPPER = YAMLMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            // SimConfig.baseDir is not a key: a config that names it is as wrong as any unknown key
            .enable(DeserializationFeature.FAIL_ON_IGNORED_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            // YAML scalars are typed: 1 is not a boolean and "4" is not a number in a config
            .withCoercionConfig(
                    LogicalType.Boolean,
                    c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(
                    LogicalType.Integer,
                    c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Float, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .build();

    private ConfigLoader() {}

    /**
     * Loads a config file with overrides of the form {@code a.b.c=yamlValue}. Warnings are dropped: code that faces
     * a user calls {@link #loadWithWarnings}.
     */
    public static SimConfig load(Path file, List<String> overrides) {
        return loadWithWarnings(file, overrides).config();
    }

    /** The largest config file read (bytes). */
    static final int MAX_CONFIG_BYTES = 4 << 20;

    /** Loads a config file with overrides of the form {@code a.b.c=yamlValue}, and the warnings to show. */
    public static Loaded loadWithWarnings(Path file, List<String> overrides) {
        String text;
        try (java.io.InputStream in = Files.newInputStream(file)) {
            // bounded: a config is a few kilobytes; /dev/zero or a 200 MB file of comments is refused at once
            byte[] bytes = in.readNBytes(MAX_CONFIG_BYTES + 1);
            if (bytes.length > MAX_CONFIG_BYTES) {
                throw new ConfigException(
                        "",
                        "config file " + file + " is larger than " + (MAX_CONFIG_BYTES >> 20)
                                + " MiB: not a servesim config (they are a few kilobytes)");
            }
            text = new String(bytes, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ConfigException("", "config file not found: " + file);
        } catch (IOException e) {
            throw new ConfigException("", "cannot read config file " + file + ": " + e.getMessage());
        }
        Loaded loaded = fromYamlWithWarnings(text, file.toString(), overrides);
        // relative file paths in it resolve against its own directory (SimConfig.resolve)
        Path dir = file.toAbsolutePath().normalize().getParent();
        return new Loaded(loaded.config().withBaseDir(dir), loaded.warnings());
    }

    /**
     * Loads a config from YAML text; {@code source} names it in error messages. Warnings are dropped: code that faces
     * a user calls {@link #fromYamlWithWarnings}.
     */
    public static SimConfig fromYaml(String yaml, String source, List<String> overrides) {
        return fromYamlWithWarnings(yaml, source, overrides).config();
    }

    /** Loads a config from YAML text, and the warnings to show; {@code source} names it in error messages. */
    public static Loaded fromYamlWithWarnings(String yaml, String source, List<String> overrides) {
        SequencedSet<String> warnings = new LinkedHashSet<>();
        ObjectNode tree = defaults();
        JsonNode user = parse(yaml, source);
        if (user != null && !user.isNull() && !user.isMissingNode()) {
            if (!user.isObject()) {
                throw new ConfigException("", source + ": expected a YAML mapping at the top level");
            }
            renameDeprecated((ObjectNode) user, "", warnings);
            merge(tree, (ObjectNode) user, "");
        }
        Map<String, String> spelledAs = new HashMap<>(); // a renamed key's new path -> the path an override used
        for (String override : overrides) {
            applyOverride(tree, override, spelledAs, warnings);
        }
        boolean workersGiven = user != null && user.path("cluster").has("workers");
        for (String override : overrides) {
            workersGiven |= override.startsWith("cluster.workers=") || override.startsWith("cluster=");
        }
        // given = present and different from the defaults (an override may have set a whole section)
        JsonNode disagg = tree.path("cluster").path("disagg");
        boolean disaggGiven = !disagg.isMissingNode()
                && !disagg.equals(defaults().path("cluster").path("disagg"));
        JsonNode sglangNode = tree.path("engine").path("sglang");
        boolean sglangGiven = !sglangNode.isMissingNode()
                && !sglangNode.equals(defaults().path("engine").path("sglang"));
        JsonNode trtllmNode = tree.path("engine").path("trtllm");
        boolean trtllmGiven = !trtllmNode.isMissingNode()
                && !trtllmNode.equals(defaults().path("engine").path("trtllm"));
        expandEngineKind(tree, trtllmGiven, sglangGiven);
        expandDisaggregation(tree, disaggGiven);
        expandPools(tree, workersGiven);
        resolveEngineLoops(tree);
        return new Loaded(bind(tree), new ArrayList<>(warnings));
    }

    /** vLLM v0.14.0: the first release whose engine loop is async by default (vllm-project/vllm#27614). */
    public static final VllmVersion ASYNC_BY_DEFAULT = new VllmVersion(0, 14);

    /**
     * vLLM v0.19.0: the first release whose scheduler admits a request only if its whole sequence fits
     * ({@code scheduler_reserve_full_isl}, vllm-project/vllm#37307, merged after v0.18.0 branched).
     */
    public static final VllmVersion FULL_ISL_BY_DEFAULT = new VllmVersion(0, 19);

    /**
     * {@code engine.scheduler.async_scheduling} and {@code reserve_full_isl} left null: vLLM's default for the {@code
     * timing.vllm_version} beside them (the async loop from v0.14.0, full-sequence admission from v0.19.0, each also
     * when no version is stated; neither before), for the top-level sections and each pool's (whose engine and timing {@link #expandPools} merged already). SGLang and TensorRT-LLM
     * run their overlap scheduler by default whatever the version.
     */
    private static void resolveEngineLoops(ObjectNode tree) {
        resolveEngineLoop(tree.get("engine"), tree.get("timing"));
        if (tree.path("cluster").get("pools") instanceof tools.jackson.databind.node.ArrayNode pools) {
            for (JsonNode pool : pools) {
                resolveEngineLoop(pool.get("engine"), pool.get("timing"));
            }
        }
    }

    private static void resolveEngineLoop(JsonNode engine, JsonNode timing) {
        if (!(engine instanceof ObjectNode e) || !(e.get("scheduler") instanceof ObjectNode scheduler)) {
            return; // malformed: binding reports it
        }
        JsonNode kind = e.get("kind");
        boolean vllm = kind == null || kind.isNull() || "vllm".equals(kind.asString(""));
        JsonNode v = timing == null ? null : timing.get("vllm_version");
        VllmVersion version =
                vllm && v != null && v.isValueNode() && !v.isNull() ? VllmVersion.find(v.asString()) : null;
        // an unreadable version keeps the newest defaults; binding reports the version with its path
        resolveByVersion(scheduler, "async_scheduling", version, ASYNC_BY_DEFAULT);
        if (vllm) {
            resolveByVersion(scheduler, "reserve_full_isl", version, FULL_ISL_BY_DEFAULT);
        } else {
            // SGLang and TensorRT-LLM admit by their own rules: the vLLM gate is off, and asking for it is an error
            JsonNode given = scheduler.get("reserve_full_isl");
            if (given != null && given.isBoolean() && given.booleanValue()) {
                throw new ConfigException(
                        "engine.scheduler.reserve_full_isl",
                        "true is a vLLM setting, read only with engine.kind: vllm (this engine admits by its own"
                                + " rules, docs/engines.md)");
            }
            if (given == null || given.isNull()) {
                scheduler.put("reserve_full_isl", false);
            }
        }
    }

    /** A version-dependent boolean left null: on from {@code since} and when no version is stated, off before. */
    private static void resolveByVersion(ObjectNode scheduler, String key, VllmVersion version, VllmVersion since) {
        JsonNode given = scheduler.get(key);
        if (given == null || given.isNull()) {
            scheduler.put(key, version == null || version.compareTo(since) >= 0);
        }
    }

    /**
     * A pool's merged engine section under its own {@code kind}: a TensorRT-LLM pool gets the {@code trtllm} defaults
     * (unless it names them), a vLLM pool drops a {@code trtllm} section inherited from the top level (and refuses one
     * of its own).
     */
    private static void poolEngineKind(ObjectNode merged, JsonNode own, String at) {
        JsonNode kind = merged.get("kind");
        String k = kind != null && kind.isString() ? kind.stringValue() : "vllm";
        for (String engine : new String[] {"trtllm", "sglang"}) {
            if (!k.equals(engine)) {
                if (own != null && own.has(engine)) {
                    throw new ConfigException(at + "engine." + engine, "is read only with engine.kind: " + engine);
                }
                merged.remove(engine);
            } else if (!merged.has(engine)) {
                merged.set(engine, defaults().path("engine").path(engine).deepCopy());
            } else if (merged.get(engine) instanceof ObjectNode section) {
                // a pool's own section names only what differs from the engine's defaults
                for (var field : defaults().path("engine").path(engine).properties()) {
                    if (!section.has(field.getKey())) {
                        section.set(field.getKey(), field.getValue().deepCopy());
                    }
                }
            }
        }
    }

    /**
     * {@code engine.kind}: the {@code engine.trtllm} defaults stay only with {@code kind: trtllm} (given with another
     * kind, the section is an error).
     */
    private static void expandEngineKind(ObjectNode tree, boolean trtllmGiven, boolean sglangGiven) {
        if (!(tree.get("engine") instanceof ObjectNode engine)) {
            return;
        }
        JsonNode kind = engine.get("kind");
        String k = kind != null && kind.isString() ? kind.stringValue() : "vllm";
        if (!k.equals("trtllm")) {
            if (trtllmGiven) {
                throw new ConfigException("engine.trtllm", "is read only with engine.kind: trtllm (docs/engines.md)");
            }
            engine.remove("trtllm");
        }
        if (!k.equals("sglang")) {
            if (sglangGiven) {
                throw new ConfigException("engine.sglang", "is read only with engine.kind: sglang (docs/engines.md)");
            }
            engine.remove("sglang");
        }
    }

    /**
     * {@code cluster.mode: disaggregated}: {@code cluster.prefill} and {@code cluster.decode} become the pools
     * {@code prefill} and {@code decode} (in that order, with their roles), each with its {@code router} merged over
     * the top-level one by {@link #expandPools}. In aggregated mode those keys and {@code cluster.disagg} are errors
     * when given, and the {@code disagg} defaults are dropped (they are not part of an aggregated config).
     */
    private static void expandDisaggregation(ObjectNode tree, boolean disaggGiven) {
        if (!(tree.get("cluster") instanceof ObjectNode cluster)) {
            return;
        }
        JsonNode mode = cluster.get("mode");
        boolean disaggregated =
                mode != null && mode.isString() && mode.stringValue().equals("disaggregated");
        if (!disaggregated) {
            for (String key : new String[] {"prefill", "decode"}) {
                if (cluster.has(key)) {
                    throw new ConfigException(
                            "cluster." + key, "is read only with cluster.mode: disaggregated (docs/pd.md)");
                }
            }
            if (disaggGiven) {
                throw new ConfigException(
                        "cluster.disagg", "is read only with cluster.mode: disaggregated (docs/pd.md)");
            }
            cluster.remove("disagg");
            return;
        }
        JsonNode prefill = cluster.remove("prefill");
        JsonNode decode = cluster.remove("decode");
        JsonNode pools = cluster.get("pools");
        boolean poolsGiven = pools instanceof tools.jackson.databind.node.ArrayNode a && !a.isEmpty();
        if (prefill == null && decode == null && poolsGiven) {
            return; // a written config: the pools carry their roles already
        }
        if (poolsGiven) {
            throw new ConfigException(
                    "cluster.pools", "a disaggregated cluster names its pools cluster.prefill and cluster.decode");
        }
        tools.jackson.databind.node.ArrayNode out = cluster.putArray("pools");
        String[] roles = {"prefill", "decode"};
        JsonNode[] given = {prefill, decode};
        for (int i = 0; i < 2; i++) {
            String role = roles[i];
            if (given[i] == null || given[i].isNull()) {
                throw new ConfigException(
                        "cluster." + role,
                        "missing: a disaggregated cluster needs cluster.prefill and cluster.decode, each with its"
                                + " workers (and any engine, timing or router keys that differ)");
            }
            if (!(given[i] instanceof ObjectNode pool)) {
                throw new ConfigException(
                        "cluster." + role, "expected a mapping: {workers: N, engine: {...}, timing: {...}}");
            }
            if (pool.has("role")) {
                throw new ConfigException("cluster." + role + ".role", "is set by the key's name: leave it out");
            }
            ObjectNode copy = pool.deepCopy();
            if (!copy.has("name")) {
                copy.put("name", role);
            }
            copy.put("role", role);
            out.add(copy);
        }
    }

    /**
     * {@code cluster.pools}: each pool's {@code engine} and {@code timing} become the top-level sections with the
     * pool's keys merged over them (a pool names only what differs), and {@code cluster.workers} becomes the pools'
     * sum unless the config gave it (then {@link ClusterConfig} checks that it equals the sum). Malformed pools are
     * left for binding to reject with their paths.
     */
    private static void expandPools(ObjectNode tree, boolean workersGiven) {
        if (!(tree.get("cluster") instanceof ObjectNode cluster)
                || !(cluster.get("pools") instanceof tools.jackson.databind.node.ArrayNode pools)
                || pools.isEmpty()) {
            return;
        }
        long sum = 0;
        boolean sumKnown = true;
        for (int i = 0; i < pools.size(); i++) {
            if (!(pools.get(i) instanceof ObjectNode pool)) {
                sumKnown = false;
                continue;
            }
            String at = "cluster.pools[" + i + "].";
            boolean ownRouter = pool.has("role") || pool.has("router");
            for (String section : new String[] {"engine", "timing", "router"}) {
                if (section.equals("router") && !ownRouter) {
                    continue; // an aggregated pool is behind the cluster's router
                }
                JsonNode baseNode = section.equals("router") ? cluster.get("router") : tree.get(section);
                if (!(baseNode instanceof ObjectNode base)) {
                    continue;
                }
                ObjectNode merged = base.deepCopy();
                JsonNode over = pool.get(section);
                if (over != null && !over.isNull()) {
                    if (!(over instanceof ObjectNode o)) {
                        throw new ConfigException(
                                at + section,
                                "expected a mapping of the keys that differ from the top-level " + section
                                        + " section");
                    }
                    merge(merged, o, at + section);
                }
                if (section.equals("engine")) {
                    poolEngineKind(merged, over, at);
                }
                pool.set(section, merged);
            }
            JsonNode w = pool.get("workers");
            if (w != null && w.isInt()) {
                sum += w.intValue();
            } else {
                sumKnown = false;
            }
        }
        if (!workersGiven && sumKnown && sum <= Integer.MAX_VALUE) {
            cluster.put("workers", (int) sum);
        }
    }

    /**
     * Moves every deprecated key in {@code node} (the tree at dotted path {@code at}, "" for the root) to its new
     * name, recording a warning; both names in the same mapping is an error.
     */
    private static void renameDeprecated(ObjectNode node, String at, SequencedSet<String> warnings) {
        for (Rename r : RENAMED) {
            String rest;
            if (at.isEmpty()) {
                rest = r.section();
            } else if (r.section().equals(at)) {
                rest = "";
            } else if (r.section().startsWith(at + ".")) {
                rest = r.section().substring(at.length() + 1);
            } else {
                continue;
            }
            JsonNode section = node;
            for (String k : rest.isEmpty() ? new String[0] : rest.split("\\.", -1)) {
                section = section.get(k);
                if (!(section instanceof ObjectNode)) {
                    break;
                }
            }
            if (!(section instanceof ObjectNode s) || !s.has(r.oldKey())) {
                continue;
            }
            if (s.has(r.newKey())) {
                throw bothNames(r);
            }
            s.set(r.newKey(), s.remove(r.oldKey()));
            warnings.add(r.warning());
        }
    }

    private static ConfigException bothNames(Rename r) {
        return new ConfigException(
                r.oldPath(), "deprecated name of " + r.newPath() + ", which is also set: keep only " + r.newPath());
    }

    /** The merged reference defaults as a tree (a fresh copy). */
    public static ObjectNode defaults() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream(REFERENCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + REFERENCE);
            }
            return (ObjectNode) MAPPER.readTree(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + REFERENCE, e);
        }
    }

    /** Binds a complete tree to a validated config. */
    public static SimConfig bind(JsonNode tree) {
        try {
            return MAPPER.treeToValue(tree, SimConfig.class);
        } catch (JacksonException e) {
            throw translate(e);
        }
    }

    /** A config as a JSON tree with its snake_case keys. */
    public static JsonNode toTree(SimConfig config) {
        return MAPPER.valueToTree(config);
    }

    /**
     * Serialises a config as YAML with its relative file paths made absolute ({@link SimConfig#resolve}), so the
     * file replays from any directory (a sweep's {@code best.yaml}, written away from the base config).
     */
    public static String toYamlWithAbsolutePaths(SimConfig config) {
        ObjectNode tree = (ObjectNode) MAPPER.valueToTree(config);
        absolute(tree, config, "workload", "trace", "path");
        absolute(tree, config, "timing", "profile", "path");
        absolute(tree, config, "timing", null, "calibration");
        absoluteModel(tree, config, config.timing().model());
        // each pool's timing section names its own files (a pool's profile, calibration or model file)
        if (tree.path("cluster").get("pools") instanceof tools.jackson.databind.node.ArrayNode pools) {
            for (int i = 0; i < pools.size(); i++) {
                if (pools.get(i) instanceof ObjectNode pool) {
                    absolute(pool, config, "timing", "profile", "path");
                    absolute(pool, config, "timing", null, "calibration");
                    absoluteModel(
                            pool,
                            config,
                            config.cluster().pools().get(i).timing().model());
                }
            }
        }
        return MAPPER.writeValueAsString(tree);
    }

    /** A {@code timing.model} that names a file (a path or a .json), made absolute under {@code tree}. */
    private static void absoluteModel(ObjectNode tree, SimConfig config, String model) {
        if (model != null && (model.contains("/") || model.endsWith(".json"))) {
            absolute(tree, config, "timing", null, "model");
        }
    }

    private static void absolute(ObjectNode tree, SimConfig config, String section, String sub, String key) {
        JsonNode node = tree.get(section);
        if (sub != null && node != null) {
            node = node.get(sub);
        }
        if (node instanceof ObjectNode o && o.get(key) != null && o.get(key).isString()) {
            o.put(
                    key,
                    config.resolve(o.get(key).asString())
                            .toAbsolutePath()
                            .normalize()
                            .toString());
        }
    }

    /** Serialises a config as YAML (snake_case keys), e.g. to record what a run used. */
    public static String toYaml(SimConfig config) {
        return MAPPER.writeValueAsString(config);
    }

    private static JsonNode parse(String yaml, String source) {
        try {
            return MAPPER.readTree(yaml);
        } catch (StreamReadException e) {
            TokenStreamLocation loc = e.getLocation();
            String where = loc == null ? source : source + ":" + loc.getLineNr();
            throw new ConfigException("", where + ": malformed YAML: " + e.getOriginalMessage());
        } catch (JacksonException e) {
            throw new ConfigException("", source + ": malformed YAML: " + e.getOriginalMessage());
        }
    }

    /**
     * Deep merge of {@code over} into {@code base}. Objects merge key by key, except that a distribution whose
     * {@code type} differs from the default's replaces it whole (so switching from fixed to uniform does not
     * inherit the fixed one's value). Keys absent from the defaults are kept, and rejected at binding.
     */
    static void merge(ObjectNode base, ObjectNode over, String path) {
        for (Map.Entry<String, JsonNode> e : over.properties()) {
            String key = e.getKey();
            JsonNode value = e.getValue();
            JsonNode existing = base.get(key);
            if (existing instanceof ObjectNode baseChild
                    && value instanceof ObjectNode overChild
                    && !typeChanges(baseChild, overChild)) {
                merge(baseChild, overChild, path.isEmpty() ? key : path + "." + key);
            } else {
                base.set(key, value);
            }
        }
    }

    private static boolean typeChanges(ObjectNode base, ObjectNode over) {
        JsonNode bt = base.get("type");
        JsonNode ot = over.get("type");
        return bt != null
                && ot != null
                && bt.isString()
                && ot.isString()
                && !bt.equals(ot)
                && Named.find(DistributionConfig.Type.class, bt.stringValue()) != null
                && Named.find(DistributionConfig.Type.class, ot.stringValue()) != null;
    }

    private static void applyOverride(
            ObjectNode tree, String override, Map<String, String> spelledAs, SequencedSet<String> warnings) {
        int eq = override.indexOf('=');
        if (eq <= 0) {
            throw new ConfigException("", "--set expects path=value, got '" + override + "'");
        }
        String path = override.substring(0, eq).trim();
        String raw = override.substring(eq + 1);
        for (Rename r : RENAMED) {
            if (path.equals(r.oldPath()) || path.equals(r.newPath())) {
                String other = spelledAs.putIfAbsent(r.newPath(), path);
                if (other != null && !other.equals(path)) {
                    throw bothNames(r);
                }
                if (path.equals(r.oldPath())) {
                    warnings.add(r.warning());
                    path = r.newPath();
                }
                break;
            }
        }
        JsonNode value;
        try {
            value = raw.isBlank() ? MAPPER.getNodeFactory().nullNode() : MAPPER.readTree(raw);
            if (value == null || value.isMissingNode()) {
                value = MAPPER.getNodeFactory().nullNode();
            }
        } catch (JacksonException e) {
            throw new ConfigException(path, "--set value is not valid YAML: " + raw);
        }
        if (value instanceof ObjectNode section) {
            renameDeprecated(section, path, warnings); // e.g. --set engine.kvcr={bandwidth_gbps: 10}
        }
        String[] keys = path.split("\\.", -1);
        ObjectNode node = tree;
        StringBuilder seen = new StringBuilder();
        for (int i = 0; i < keys.length - 1; i++) {
            String k = keys[i];
            if (k.isEmpty()) {
                throw new ConfigException(path, "empty key in --set path");
            }
            seen.append(seen.isEmpty() ? "" : ".").append(k);
            JsonNode child = k.endsWith("]") ? element(node, k, seen.toString()) : node.get(k);
            if (child == null || child.isNull()) {
                // absent here (e.g. min of a fixed distribution): create it; binding rejects keys that do not exist
                child = node.putObject(k);
            }
            if (!(child instanceof ObjectNode childObject)) {
                throw new ConfigException(seen.toString(), "is a value, not a section; cannot set '" + path + "'");
            }
            node = childObject;
        }
        String last = keys[keys.length - 1];
        if (last.isEmpty()) {
            throw new ConfigException(path, "empty key in --set path");
        }
        if (last.endsWith("]")) {
            // a list element, e.g. cluster.pools[1]={name: b, workers: 2}: merged into the element, or replacing it
            JsonNode existing = element(node, last, path);
            if (existing instanceof ObjectNode eo && value instanceof ObjectNode vo) {
                merge(eo, vo, path);
            } else {
                ((tools.jackson.databind.node.ArrayNode) node.get(last.substring(0, last.indexOf('['))))
                        .set(index(last, path), value);
            }
            return;
        }
        JsonNode existing = node.get(last);
        if (existing instanceof ObjectNode eo && value instanceof ObjectNode vo && !typeChanges(eo, vo)) {
            merge(eo, vo, path);
        } else {
            node.set(last, value);
        }
    }

    /**
     * The list element a {@code --set} path names with {@code key[i]} (e.g. {@code cluster.pools[1].workers}): the
     * list must exist and have that element; {@code at} is the path so far, for errors.
     */
    private static JsonNode element(ObjectNode node, String key, String at) {
        String name = key.substring(0, key.indexOf('['));
        int i = index(key, at);
        if (!(node.get(name) instanceof tools.jackson.databind.node.ArrayNode list)) {
            throw new ConfigException(at, "'" + name + "' is not a list here; cannot index it");
        }
        if (i >= list.size()) {
            throw new ConfigException(
                    at, "the list has " + list.size() + " element(s); index " + i + " is past its end");
        }
        return list.get(i);
    }

    private static int index(String key, String at) {
        int open = key.indexOf('[');
        String digits = open > 0 ? key.substring(open + 1, key.length() - 1) : "";
        if (digits.isEmpty() || digits.length() > 6 || !digits.chars().allMatch(Character::isDigit)) {
            throw new ConfigException(at, "expected key[index] with a non-negative whole index, got '" + key + "'");
        }
        return Integer.parseInt(digits);
    }

    private static ConfigException translate(JacksonException e) {
        String path = pathOf(e.getPath());
        Throwable cause = e.getCause();
        if (e instanceof ValueInstantiationException && cause instanceof ConfigException ce) {
            return ce.under(path);
        }
        if (cause instanceof ConfigException ce) {
            return ce.under(path);
        }
        if (e instanceof PropertyBindingException pbe) {
            TreeSet<String> known = new TreeSet<>();
            Collection<Object> ids = pbe.getKnownPropertyIds();
            if (ids != null) {
                for (Object id : ids) {
                    known.add(String.valueOf(id));
                }
                known.remove("base_dir"); // SimConfig.baseDir: set from the config file's location, never written
            }
            String name = pbe.getPropertyName();
            if (name == null || name.isBlank()) { // an empty key: the path alone would not show it
                return new ConfigException(
                        path.isEmpty() ? "(top level)" : path,
                        "empty key '" + (name == null ? "" : name) + "' (allowed: " + String.join(", ", known) + ")");
            }
            return new ConfigException(path, "unknown key (allowed: " + String.join(", ", known) + ")");
        }
        if (e instanceof MismatchedInputException mie && mie.getTargetType() != null) {
            String got = mie.getCurrentToken() == null
                    ? ""
                    : " " + describeToken(mie.getCurrentToken().name());
            if (e instanceof InvalidFormatException ife && ife.getValue() != null) {
                got = " '" + ife.getValue() + "'";
            } else if (e.processor() instanceof JsonParser p
                    && p.currentToken() != null
                    && p.currentToken().isScalarValue()
                    && p.currentToken() != tools.jackson.core.JsonToken.VALUE_NULL) {
                got += " '" + p.getString() + "'";
            }
            return new ConfigException(path, "expected " + describe(mie.getTargetType()) + ", got" + got);
        }
        String msg = e.getOriginalMessage();
        if (msg == null) {
            msg = e.getClass().getSimpleName();
        }
        int nl = msg.indexOf('\n');
        if (nl > 0) {
            msg = msg.substring(0, nl);
        }
        return new ConfigException(path, "bad value: " + msg);
    }

    /** Jackson names Java types; users think in YAML types. */
    private static String describe(Class<?> type) {
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "an integer";
        }
        if (type == double.class || type == Double.class) {
            return "a number";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type.isRecord()) {
            return "a mapping of keys";
        }
        if (type.isEnum() && Named.class.isAssignableFrom(type)) {
            StringBuilder names = new StringBuilder();
            for (Object e : type.getEnumConstants()) {
                names.append(names.isEmpty() ? "" : ", ").append(((Named) e).configName());
            }
            return "one of " + names;
        }
        return "a value of type " + type.getSimpleName();
    }

    private static String describeToken(String token) {
        return switch (token) {
            case "VALUE_STRING" -> "a string";
            case "VALUE_NUMBER_INT" -> "an integer";
            case "VALUE_NUMBER_FLOAT" -> "a decimal number";
            case "VALUE_TRUE", "VALUE_FALSE" -> "a boolean";
            case "START_OBJECT" -> "a mapping";
            case "START_ARRAY" -> "a list";
            case "VALUE_NULL" -> "null";
            default -> token;
        };
    }

    private static String pathOf(List<JacksonException.Reference> refs) {
        StringBuilder path = new StringBuilder();
        for (JacksonException.Reference r : refs) {
            if (r.getPropertyName() != null) {
                path.append(path.isEmpty() ? "" : ".").append(r.getPropertyName());
            } else if (r.getIndex() >= 0) {
                path.append('[').append(r.getIndex()).append(']'); // list items read as events[0].worker
            }
        }
        return path.toString();
    }
}
