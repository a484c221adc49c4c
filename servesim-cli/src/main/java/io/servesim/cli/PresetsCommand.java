package io.servesim.cli;

import io.servesim.config.TimingConfig;
import io.servesim.timing.GpuSpec;
import io.servesim.timing.ModelSpec;
import io.servesim.timing.Specs;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code servesim presets [models|gpus] [--json]}: the model and GPU presets {@code timing.model} and {@code
 * timing.gpu} accept, with the facts servesim prices them by (sizes, attention, experts, the checkpoint's own types;
 * datasheet rates, link, and which kernels were measured on the GPU) and the Hugging Face ids a model answers to.
 */
@Command(
        name = "presets",
        mixinStandardHelpOptions = true,
        description = "List the model and GPU presets timing.model and timing.gpu accept: a model's size, attention,"
                + " experts, the checkpoint's own types and the Hugging Face ids it answers to; a GPU's memory,"
                + " bandwidth, dense tensor rates, link and the kernels measured on it.")
public final class PresetsCommand implements Callable<Integer> {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Which presets to list. */
    enum Kind {
        models,
        gpus,
        all
    }

    @Parameters(
            index = "0",
            arity = "0..1",
            paramLabel = "KIND",
            defaultValue = "all",
            description = "models, gpus or all (default: ${DEFAULT-VALUE}).")
    Kind kind;

    @Option(names = "--json", description = "Write JSON (an object with models and gpus arrays) instead of tables.")
    boolean json;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        boolean models = kind != Kind.gpus;
        boolean gpus = kind != Kind.models;
        if (json) {
            ObjectNode root = JSON.createObjectNode();
            if (models) {
                ArrayNode a = root.putArray("models");
                for (String name : Specs.modelPresets()) {
                    a.add(modelJson(name, Specs.model(name, "timing.model")));
                }
            }
            if (gpus) {
                ArrayNode a = root.putArray("gpus");
                for (String name : Specs.gpuPresets()) {
                    a.add(gpuJson(Specs.gpu(name, "timing.gpu")));
                }
            }
            out.println(root.toPrettyString());
            return 0;
        }
        if (models) {
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {
                "model",
                "params",
                "active",
                "layers",
                "hidden",
                "attention",
                "experts",
                "checkpoint",
                "context",
                "hugging face ids"
            });
            for (String name : Specs.modelPresets()) {
                ModelSpec m = Specs.model(name, "timing.model");
                rows.add(new String[] {
                    name,
                    billions(m.totalParams()),
                    billions(m.activeParams()),
                    Integer.toString(m.numLayers()),
                    Integer.toString(m.hiddenSize()),
                    attention(m),
                    experts(m),
                    checkpoint(m),
                    Integer.toString(m.maxPositionEmbeddings()),
                    String.join(", ", Specs.hfIds(name))
                });
            }
            out.print(table(rows));
        }
        if (models && gpus) {
            out.println();
        }
        if (gpus) {
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {
                "gpu",
                "memory GiB",
                "GB/s",
                "bf16 TFLOP/s",
                "fp8",
                "fp4",
                "link",
                "link GB/s",
                "attention",
                "measured kernels"
            });
            for (String name : Specs.gpuPresets()) {
                GpuSpec g = Specs.gpu(name, "timing.gpu");
                List<String> kernels = measured(g);
                rows.add(new String[] {
                    name,
                    number(g.memoryGib()),
                    number(g.bandwidthGbytesPerS()),
                    number(g.bf16Tflops()),
                    g.fp8Tflops() > 0 ? number(g.fp8Tflops()) : "-",
                    g.fp4Tflops() > 0 ? number(g.fp4Tflops()) : "-",
                    g.link(),
                    number(g.linkGbytesPerS()),
                    g.attentionKernel().configName(),
                    kernels.isEmpty() ? "none (datasheet x the measured GPUs' ratios)" : String.join(", ", kernels)
                });
            }
            out.print(table(rows));
        }
        out.flush();
        return 0;
    }

    private static ObjectNode modelJson(String name, ModelSpec m) {
        ObjectNode o = JSON.createObjectNode();
        o.put("name", name);
        o.put("architecture", m.architecture());
        o.put("params", m.totalParams());
        o.put("active_params", m.activeParams());
        o.put("layers", m.numLayers());
        o.put("hidden_size", m.hiddenSize());
        o.put("attention_heads", m.numHeads());
        o.put("kv_heads", m.numKvHeads());
        o.put("latent_attention", m.mla() != null);
        o.put("experts", m.numExperts());
        o.put("experts_per_token", m.moe() ? m.expertsPerToken() : 0);
        o.put("max_position_embeddings", m.maxPositionEmbeddings());
        o.put("weight_dtype", dtype(m.checkpointDtype()));
        o.put("expert_dtype", dtype(m.checkpointExpertDtype()));
        o.put("kv_dtype", dtype(m.checkpointKvDtype()));
        ArrayNode ids = o.putArray("hf_ids");
        Specs.hfIds(name).forEach(ids::add);
        return o;
    }

    private static ObjectNode gpuJson(GpuSpec g) {
        ObjectNode o = JSON.createObjectNode();
        o.put("name", g.name());
        o.put("memory_gib", g.memoryGib());
        o.put("bandwidth_gbytes_per_s", g.bandwidthGbytesPerS());
        o.put("bf16_tflops", g.bf16Tflops());
        o.put("fp8_tflops", g.fp8Tflops());
        o.put("fp4_tflops", g.fp4Tflops());
        o.put("link", g.link());
        o.put("link_gbytes_per_s", g.linkGbytesPerS());
        o.put("attention_kernel", g.attentionKernel().configName());
        ArrayNode kernels = o.putArray("measured_kernels");
        measured(g).forEach(kernels::add);
        o.put("source", g.source());
        return o;
    }

    /** The checkpoint's type, or null where the model states none (the deployment's stated types apply). */
    private static String dtype(TimingConfig.Dtype d) {
        return d == null ? null : d.configName();
    }

    /** The measured tables that price this GPU, by the names docs/timing.md gives them. */
    static List<String> measured(GpuSpec g) {
        List<String> out = new ArrayList<>();
        if (g.achieved().source().startsWith("measured")) {
            out.add("gemm");
        }
        if (g.allReduce() != null) {
            out.add("allreduce");
        }
        if (g.fusedMoe() != null) {
            out.add("fused_moe");
        }
        if (g.mxfp4Moe() != null) {
            out.add("mxfp4_moe");
        }
        if (g.blockFp8Gemm() != null) {
            out.add("fp8_block_gemm");
        }
        if (g.nvfp4() != null) {
            out.add("nvfp4");
        }
        return out;
    }

    private static String attention(ModelSpec m) {
        if (m.mla() != null) {
            return "MLA, " + m.numHeads() + " heads";
        }
        String kind = m.numKvHeads() == m.numHeads() ? "MHA" : m.numKvHeads() == 1 ? "MQA" : "GQA";
        return kind + ", " + m.numHeads() + "/" + m.numKvHeads() + " heads"
                + (m.slidingWindow() > 0 ? ", window " + m.slidingWindow() : "");
    }

    private static String experts(ModelSpec m) {
        return m.moe() ? m.numExperts() + ", top " + m.expertsPerToken() : "-";
    }

    private static String checkpoint(ModelSpec m) {
        List<String> parts = new ArrayList<>();
        if (m.checkpointDtype() != null) {
            parts.add(m.checkpointDtype().configName());
        }
        if (m.checkpointExpertDtype() != null) {
            parts.add("experts " + m.checkpointExpertDtype().configName());
        }
        if (m.checkpointKvDtype() != null) {
            parts.add("kv " + m.checkpointKvDtype().configName());
        }
        return parts.isEmpty() ? "-" : String.join(", ", parts);
    }

    private static String billions(long params) {
        return String.format(Locale.ROOT, "%.2f B", params / 1e9);
    }

    private static String number(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }

    /** Left-aligned columns two spaces apart, the last one unpadded. */
    private static String table(List<String[]> rows) {
        int columns = rows.get(0).length;
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                sb.append(i == columns - 1 ? r[i] : String.format(Locale.ROOT, "%-" + (width[i] + 2) + "s", r[i]));
            }
            sb.append(System.lineSeparator());
        }
        return sb.toString();
    }
}
