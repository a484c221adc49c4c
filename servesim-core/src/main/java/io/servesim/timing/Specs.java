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
            "MixtralForCausalLM",
            "Qwen3MoeForCausalLM",
            "GptOssForCausalLM");

    private static final Map<String, JsonNode> MODEL_PRESETS = load("models.yaml");
    private static final Map<String, JsonNode> GPU_PRESETS = load("gpus.yaml");

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
        JsonNode preset = MODEL_PRESETS.get(nameOrPath);
        if (preset != null) {
            return fromHfConfig(nameOrPath, preset.get("config"), field);
        }
        if (nameOrPath.contains("/") || nameOrPath.endsWith(".json")) {
            Path p = Path.of(nameOrPath);
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
     * {@code hf_ids}, or the preset's own name, compared ignoring case.
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
        List<String> known = new ArrayList<>();
        MODEL_PRESETS.keySet().forEach(p -> known.addAll(hfIds(p)));
        throw new ConfigException(
                field, "unknown model '" + id + "' (known Hugging Face ids: " + String.join(", ", known) + ")");
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

    /** A GPU preset by name. */
    public static GpuSpec gpu(String name, String field) {
        JsonNode g = GPU_PRESETS.get(name);
        if (g == null) {
            throw new ConfigException(
                    field,
                    "unknown GPU '" + name + "' (presets: " + String.join(", ", GPU_PRESETS.keySet())
                            + "; or set timing.gpu: custom with timing.custom_gpu)");
        }
        return new GpuSpec(
                name,
                g.get("memory_gib").asDouble(),
                g.get("bandwidth_gbytes_per_s").asDouble(),
                g.get("bf16_tflops").asDouble(),
                g.get("fp8_tflops").asDouble(),
                g.get("link").asString(),
                g.get("link_gbytes_per_s").asDouble(),
                g.get("source").asString());
    }
}
