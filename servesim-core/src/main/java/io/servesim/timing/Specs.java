package io.servesim.timing;

import io.servesim.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Model and GPU specs: the bundled presets ({@code models.yaml}, {@code gpus.yaml} beside this class, each value
 * citing its source) and Hugging Face {@code config.json} files. Unknown names and architectures fail listing what
 * is known; missing fields name the field.
 */
public final class Specs {
    /** Hugging Face architectures servesim can read, dense then MoE. */
    public static final List<String> ARCHITECTURES = List.of(
            "LlamaForCausalLM",
            "MistralForCausalLM",
            "Qwen2ForCausalLM",
            "Qwen3ForCausalLM",
            "GraniteForCausalLM",
            "Phi3ForCausalLM",
            "MixtralForCausalLM",
            "Qwen3MoeForCausalLM",
            "GptOssForCausalLM");

    private static final Map<String, JsonNode> MODEL_PRESETS = load("models.yaml");
    private static final Map<String, JsonNode> GPU_PRESETS = load("gpus.yaml");
    private static final Map<String, JsonNode> MEASURED = load("measured-kernels.yaml");

    /**
     * Mean ratios measured / datasheet over the GPUs {@code measured-kernels.yaml} measures: BF16 compute, FP8
     * compute, weight streaming. A GPU nobody measured reaches its datasheet times these ({@link #achievedFor}).
     */
    private static final double[] FLEET_RATIOS = fleetRatios();

    private Specs() {}

    private static Map<String, JsonNode> load(String resource) {
        try (InputStream in = Specs.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " missing from the jar");
            }
            JsonNode root = YAMLMapper.builder().build().readTree(in);
            Map<String, JsonNode> out = new TreeMap<>();
            for (String name : root.propertyNames()) {
                out.put(name, root.get(name));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Preset model names, sorted. */
    public static List<String> modelPresets() {
        return new ArrayList<>(MODEL_PRESETS.keySet());
    }

    /** Preset GPU names, sorted. */
    public static List<String> gpuPresets() {
        return new ArrayList<>(GPU_PRESETS.keySet());
    }

    /** The published total parameter count of a preset model, in billions (for tests and docs). */
    public static double publishedParamsB(String preset) {
        return MODEL_PRESETS.get(preset).get("published_params_b").asDouble();
    }

    /** The published active parameter count of a preset MoE model in billions, or NaN. */
    public static double publishedActiveParamsB(String preset) {
        JsonNode n = MODEL_PRESETS.get(preset).get("published_active_params_b");
        return n == null ? Double.NaN : n.asDouble();
    }

    /**
     * A model by preset name or by path to a Hugging Face {@code config.json} (a path is anything containing a
     * {@code /} or ending in {@code .json}).
     *
     * @param field the config path reported in errors (e.g. {@code timing.model})
     */
    public static ModelSpec model(String nameOrPath, String field) {
        return model(nameOrPath, field, null);
    }

    /** {@link #model(String, String)} with a relative path resolved against {@code baseDir} (null: working dir). */
    public static ModelSpec model(String nameOrPath, String field, Path baseDir) {
        JsonNode preset = MODEL_PRESETS.get(nameOrPath);
        if (preset != null) {
            return fromHfConfig(nameOrPath, preset.get("config"), field);
        }
        if (nameOrPath.contains("/") || nameOrPath.endsWith(".json")) {
            Path p = io.servesim.config.SimConfig.resolve(baseDir, nameOrPath);
            if (!Files.isRegularFile(p)) {
                throw new ConfigException(field, "no such file: " + nameOrPath);
            }
            JsonNode tree;
            try {
                tree = JsonMapper.builder().build().readTree(p.toFile());
            } catch (JacksonException e) {
                throw new ConfigException(field, nameOrPath + " is not valid JSON: " + e.getOriginalMessage());
            }
            return fromHfConfig(nameOrPath, tree, field);
        }
        throw new ConfigException(
                field,
                "unknown model '" + nameOrPath + "' (presets: " + String.join(", ", MODEL_PRESETS.keySet())
                        + "; or a path to a Hugging Face config.json)");
    }

    /** Reads the architecture fields of a Hugging Face {@code config.json} tree. */
    public static ModelSpec fromHfConfig(String name, JsonNode c, String field) {
        String arch = c.has("architectures")
                        && c.get("architectures").isArray()
                        && !c.get("architectures").isEmpty()
                ? c.get("architectures").get(0).asString()
                : null;
        if (arch == null) {
            throw new ConfigException(field, name + ": missing 'architectures' (e.g. [\"LlamaForCausalLM\"])");
        }
        if (!ARCHITECTURES.contains(arch)) {
            throw new ConfigException(
                    field,
                    name + ": architecture '" + arch + "' is not supported (supported: "
                            + String.join(", ", ARCHITECTURES) + ")");
        }
        int hidden = required(c, "hidden_size", name, field);
        int layers = required(c, "num_hidden_layers", name, field);
        int heads = required(c, "num_attention_heads", name, field);
        int kvHeads = c.has("num_key_value_heads") ? positive(c, "num_key_value_heads", name, field) : heads;
        int headDim = c.has("head_dim") && !c.get("head_dim").isNull()
                ? positive(c, "head_dim", name, field)
                : hidden / heads;
        int intermediate = required(c, "intermediate_size", name, field);
        int vocab = required(c, "vocab_size", name, field);
        boolean tied =
                c.has("tie_word_embeddings") && c.get("tie_word_embeddings").asBoolean();
        int experts = 0;
        int perToken = 0;
        int expertWidth = 0;
        switch (arch) {
            case "MixtralForCausalLM", "GptOssForCausalLM" -> {
                experts = required(c, "num_local_experts", name, field);
                perToken = c.has("num_experts_per_tok")
                        ? positive(c, "num_experts_per_tok", name, field)
                        : required(c, "experts_per_token", name, field);
                expertWidth = intermediate; // these configs give each expert's width as intermediate_size
            }
            case "Qwen3MoeForCausalLM" -> {
                experts = required(c, "num_experts", name, field);
                perToken = required(c, "num_experts_per_tok", name, field);
                expertWidth = required(c, "moe_intermediate_size", name, field);
            }
            default -> {
                // dense
            }
        }
        int window = arch.equals("GptOssForCausalLM")
                        && c.has("sliding_window")
                        && !c.get("sliding_window").isNull()
                ? c.get("sliding_window").asInt()
                : 0;
        int maxPos = c.has("max_position_embeddings")
                ? c.get("max_position_embeddings").asInt()
                : 0;
        return new ModelSpec(
                name,
                arch,
                hidden,
                layers,
                heads,
                kvHeads,
                headDim,
                intermediate,
                vocab,
                experts,
                perToken,
                expertWidth,
                tied,
                window,
                maxPos);
    }

    private static int required(JsonNode c, String key, String name, String field) {
        if (!c.has(key) || c.get(key).isNull()) {
            throw new ConfigException(field, name + ": missing '" + key + "'");
        }
        return positive(c, key, name, field);
    }

    private static int positive(JsonNode c, String key, String name, String field) {
        JsonNode v = c.get(key);
        if (!v.isIntegralNumber() || v.asLong() <= 0 || v.asLong() > Integer.MAX_VALUE) {
            throw new ConfigException(field, name + ": '" + key + "' must be a positive integer, got " + v);
        }
        return v.asInt();
    }

    /** The Hugging Face ids a preset model answers to ({@code hf_ids} in models.yaml). */
    public static List<String> hfIds(String preset) {
        return strings(MODEL_PRESETS.get(preset), "hf_ids");
    }

    /** How tools print a preset GPU ({@code names} in gpus.yaml). */
    public static List<String> gpuNames(String preset) {
        return strings(GPU_PRESETS.get(preset), "names");
    }

    private static List<String> strings(JsonNode preset, String key) {
        List<String> out = new ArrayList<>();
        JsonNode list = preset == null ? null : preset.get(key);
        if (list != null) {
            for (JsonNode n : list) {
                out.add(n.asString());
            }
        }
        return out;
    }

    /**
     * The preset model a Hugging Face id names (e.g. {@code meta-llama/Llama-2-7b-hf}): one of a preset's
     * {@code hf_ids}, or the preset's own name, compared ignoring case; else, for a local path or another
     * organisation's copy ({@code /models/Llama-3.1-8B-Instruct}), the one preset with an id of that repository name.
     *
     * @param field where the id came from, reported in errors (e.g. {@code meta.json: model})
     */
    public static ModelSpec modelByHfId(String id, String field) {
        String want = id == null ? "" : id.strip();
        for (String preset : MODEL_PRESETS.keySet()) {
            if (preset.equalsIgnoreCase(want) || hfIds(preset).stream().anyMatch(a -> a.equalsIgnoreCase(want))) {
                return model(preset, field);
            }
        }
        // a local checkout or a mirror under another organisation (e.g. /models/Llama-3.1-8B-Instruct, as vLLM logs
        // a model served from disk): the repository name alone, when exactly one preset has it
        String tail = repositoryName(want);
        List<String> byTail = new ArrayList<>();
        for (String preset : MODEL_PRESETS.keySet()) {
            if (!tail.isEmpty()
                    && hfIds(preset).stream().anyMatch(a -> repositoryName(a).equalsIgnoreCase(tail))) {
                byTail.add(preset);
            }
        }
        if (byTail.size() == 1) {
            return model(byTail.get(0), field);
        }
        if (byTail.size() > 1) {
            throw new ConfigException(
                    field,
                    "model '" + id + "' could be any of the presets " + String.join(", ", byTail)
                            + ": give the full Hugging Face id");
        }
        List<String> known = new ArrayList<>();
        MODEL_PRESETS.keySet().forEach(p -> known.addAll(hfIds(p)));
        throw new ConfigException(
                field, "unknown model '" + id + "' (known Hugging Face ids: " + String.join(", ", known) + ")");
    }

    /** The part of a Hugging Face id or path after its last {@code /} (trailing ones dropped). */
    private static String repositoryName(String idOrPath) {
        String s = idOrPath.replace('\\', '/');
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        return s.substring(s.lastIndexOf('/') + 1);
    }

    /**
     * The preset GPU a printed name stands for: one of a preset's {@code names} or the preset's own name, ignoring
     * case; else the preset with the longest name that the printed one starts with, followed by a space or
     * {@code (} (so {@code NVIDIA RTX PRO 6000 (96 GB GDDR7, ...)} is {@code rtx-pro-6000}).
     *
     * @param field where the name came from, reported in errors (e.g. {@code meta.json: gpu})
     */
    public static GpuSpec gpuByName(String printed, String field) {
        String want = printed == null ? "" : printed.strip();
        String lower = want.toLowerCase(Locale.ROOT);
        String best = null;
        int bestLength = -1;
        for (String preset : GPU_PRESETS.keySet()) {
            List<String> aliases = new ArrayList<>(gpuNames(preset));
            aliases.add(preset);
            for (String alias : aliases) {
                String a = alias.toLowerCase(Locale.ROOT);
                if (a.equals(lower)) {
                    return gpu(preset, field);
                }
                if (lower.startsWith(a)
                        && (lower.charAt(a.length()) == ' ' || lower.charAt(a.length()) == '(')
                        && a.length() > bestLength) {
                    best = preset;
                    bestLength = a.length();
                }
            }
        }
        if (best != null) {
            return gpu(best, field);
        }
        List<String> known = new ArrayList<>();
        GPU_PRESETS.keySet().forEach(p -> known.addAll(gpuNames(p)));
        throw new ConfigException(
                field,
                "unknown GPU '" + printed + "' (known: " + String.join(", ", known) + "; or a preset name: "
                        + String.join(", ", GPU_PRESETS.keySet()) + ")");
    }

    private static double[] fleetRatios() {
        double[] sum = new double[5];
        int[] n = new int[5];
        for (Map.Entry<String, JsonNode> e : MEASURED.entrySet()) {
            JsonNode g = GPU_PRESETS.get(e.getKey());
            if (g == null) {
                throw new IllegalStateException("measured-kernels.yaml names " + e.getKey() + ", not a GPU preset");
            }
            JsonNode m = e.getValue();
            sum[0] += m.get("bf16_tflops").asDouble() / g.get("bf16_tflops").asDouble();
            n[0]++;
            if (m.has("fp8_tflops") && g.get("fp8_tflops").asDouble() > 0) {
                sum[1] += m.get("fp8_tflops").asDouble() / g.get("fp8_tflops").asDouble();
                n[1]++;
            }
            sum[2] += m.get("gbytes_per_s").asDouble()
                    / g.get("bandwidth_gbytes_per_s").asDouble();
            n[2]++;
            if (m.has("moe_tflops")) { // relative to the measured dense GEMMs, not the datasheet
                sum[3] += m.get("moe_tflops").asDouble() / m.get("bf16_tflops").asDouble();
                n[3]++;
            }
            if (m.has("attention_tflops")) { // likewise
                sum[4] += m.get("attention_tflops").asDouble()
                        / m.get("bf16_tflops").asDouble();
                n[4]++;
            }
        }
        return new double[] {sum[0] / n[0], sum[1] / n[1], sum[2] / n[2], sum[3] / n[3], sum[4] / n[4]};
    }

    /**
     * What vLLM's GEMM kernels reach on a GPU with these datasheet values: each value measured when {@code
     * measured} gives it, else the datasheet value times the mean measured / datasheet ratio over the measured GPUs
     * (BF16 {@code 0.817}, FP8 {@code 0.623}, bandwidth {@code 0.851} with the bundled table). FP8 on a GPU without FP8
     * tensor cores runs at the BF16 value. The fused-MoE rate, when not measured, is the BF16 GEMM rate times the
     * measured GPUs' mean MoE / GEMM ratio ({@code 0.726}), and the prefill attention rate likewise ({@code 0.722}).
     *
     * @param measuredBf16Tflops measured BF16 GEMM TFLOP/s, null when unknown (likewise the next four)
     * @param measuredSource where the measured values come from
     */
    public static GpuSpec.Achieved achievedFor(
            double bandwidthGbytesPerS,
            double bf16Tflops,
            double fp8Tflops,
            Double measuredBf16Tflops,
            Double measuredFp8Tflops,
            Double measuredGbytesPerS,
            Double measuredMoeTflops,
            Double measuredAttentionTflops,
            String measuredSource) {
        boolean anyMeasured = measuredBf16Tflops != null || measuredFp8Tflops != null || measuredGbytesPerS != null;
        boolean allMeasured = measuredBf16Tflops != null
                && measuredGbytesPerS != null
                && (measuredFp8Tflops != null || fp8Tflops == 0);
        double bf16 = measuredBf16Tflops != null ? measuredBf16Tflops : bf16Tflops * FLEET_RATIOS[0];
        double fp8;
        if (fp8Tflops == 0) {
            fp8 = bf16;
        } else {
            fp8 = measuredFp8Tflops != null ? measuredFp8Tflops : fp8Tflops * FLEET_RATIOS[1];
        }
        double gbytes = measuredGbytesPerS != null ? measuredGbytesPerS : bandwidthGbytesPerS * FLEET_RATIOS[2];
        double moe = measuredMoeTflops != null ? measuredMoeTflops : bf16 * FLEET_RATIOS[3];
        double attention = measuredAttentionTflops != null ? measuredAttentionTflops : bf16 * FLEET_RATIOS[4];
        String fallback = String.format(
                Locale.ROOT,
                "datasheet x the measured GPUs' mean ratios (BF16 %.3f, FP8 %.3f, bandwidth %.3f; fused MoE %.3f and"
                        + " prefill attention %.3f of BF16 GEMMs)",
                FLEET_RATIOS[0],
                FLEET_RATIOS[1],
                FLEET_RATIOS[2],
                FLEET_RATIOS[3],
                FLEET_RATIOS[4]);
        String source =
                allMeasured ? measuredSource : anyMeasured ? measuredSource + "; the rest " + fallback : fallback;
        return new GpuSpec.Achieved(bf16, fp8, gbytes, moe, attention, source);
    }

    /** A GPU preset by name. */
    public static GpuSpec gpu(String name, String field) {
        JsonNode g = GPU_PRESETS.get(name);
        if (g == null) {
            throw new ConfigException(
                    field,
                    "unknown GPU '" + name + "' (presets: " + String.join(", ", GPU_PRESETS.keySet())
                            + "; or set timing.gpu: custom with timing.custom_gpu)");
        }
        JsonNode m = MEASURED.get(name);
        GpuSpec.Achieved achieved = achievedFor(
                g.get("bandwidth_gbytes_per_s").asDouble(),
                g.get("bf16_tflops").asDouble(),
                g.get("fp8_tflops").asDouble(),
                measured(m, "bf16_tflops"),
                measured(m, "fp8_tflops"),
                measured(m, "gbytes_per_s"),
                measured(m, "moe_tflops"),
                measured(m, "attention_tflops"),
                "measured: AIConfigurator's vLLM GEMM tables (measured-kernels.yaml)");
        return new GpuSpec(
                name,
                g.get("memory_gib").asDouble(),
                g.get("bandwidth_gbytes_per_s").asDouble(),
                g.get("bf16_tflops").asDouble(),
                g.get("fp8_tflops").asDouble(),
                g.get("link").asString(),
                g.get("link_gbytes_per_s").asDouble(),
                g.get("source").asString(),
                achieved,
                collective(m, name, "allreduce"),
                collective(m, name, "allgather"),
                collective(m, name, "reducescatter"));
    }

    /** A measured collective's table of {@code measured-kernels.yaml}, or null when the GPU has none. */
    private static GpuSpec.CollectiveTable collective(JsonNode m, String name, String key) {
        if (m == null || !m.has(key)) {
            return null;
        }
        JsonNode a = m.get(key);
        double[] elements = doubles(a.get("elements"));
        List<Integer> groups = new ArrayList<>();
        List<double[]> micros = new ArrayList<>();
        for (String field : a.propertyNames()) {
            if (field.startsWith("tp") && field.endsWith("_us")) {
                groups.add(Integer.parseInt(field.substring(2, field.length() - 3)));
                micros.add(doubles(a.get(field)));
            }
        }
        try {
            return new GpuSpec.CollectiveTable(
                    elements, groups.stream().mapToInt(Integer::intValue).toArray(), micros.toArray(new double[0][]));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("measured-kernels.yaml " + name + " " + key + ": " + e.getMessage(), e);
        }
    }

    private static double[] doubles(JsonNode array) {
        double[] out = new double[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asDouble();
        }
        return out;
    }

    private static Double measured(JsonNode m, String field) {
        return m == null || !m.has(field) ? null : m.get(field).asDouble();
    }
}
