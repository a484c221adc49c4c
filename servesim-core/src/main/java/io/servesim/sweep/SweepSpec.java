package io.servesim.sweep;

import io.servesim.config.ConfigException;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * A sweep ({@code sweep.yaml}, docs/sweep.md): a base replay config, the space of config paths to vary, the search,
 * the SLOs, the objective, GPU prices and the Pareto axes. Parsed strictly: unknown keys and bad values fail naming
 * their path.
 *
 * @param baseYaml the base replay config's YAML
 * @param baseSource where it came from
 * @param dimensions the varied config paths with their values (YAML/JSON text each), in file order
 * @param search grid, random or bisect
 * @param randomPoints random: how many points
 * @param seed random: the seed
 * @param loadPath bisect: the config path of the load (e.g. workload.arrival.rate)
 * @param low bisect: lowest load
 * @param high bisect: highest load
 * @param iterations bisect: halvings after the two end points
 * @param slos the SLOs
 * @param objective goodput_per_gpu, throughput_per_gpu or cost_per_million_tokens
 * @param gpuCosts GPU $/hour by GPU name ({@code default} for the rest)
 * @param paretoX Pareto axis to minimise
 * @param paretoY Pareto axis to maximise
 * @param baseDir the directory the base config's relative file paths resolve against: its own file's, or the sweep
 *     file's for an inline base (absolute; null when the spec came from no file)
 */
public record SweepSpec(
        String baseYaml,
        String baseSource,
        List<Dimension> dimensions,
        String search,
        int randomPoints,
        long seed,
        String loadPath,
        double low,
        double high,
        int iterations,
        List<Slo> slos,
        String objective,
        List<GpuCost> gpuCosts,
        String paretoX,
        String paretoY,
        String baseDir)
        implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Objectives. */
    public static final List<String> OBJECTIVES =
            List.of("goodput_per_gpu", "throughput_per_gpu", "cost_per_million_tokens");

    /** Searches. */
    public static final List<String> SEARCHES = List.of("grid", "random", "bisect");

    /** A varied config path and its values (each the YAML text of a value). */
    public record Dimension(String path, List<String> values) implements Serializable {
        private static final long serialVersionUID = 1L;

        /** Defensive copy. */
        public Dimension {
            values = List.copyOf(values);
        }
    }

    /**
     * One SLO: a percentile of a per-request latency must stay at or below a threshold.
     *
     * @param key the spec key, e.g. {@code ttft_p90_ms}
     * @param metric ttft, tpot or e2e
     * @param percentile 50, 90, 95 or 99
     * @param thresholdMs the threshold
     */
    public record Slo(String key, String metric, int percentile, double thresholdMs) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** A GPU's price per hour. */
    public record GpuCost(String gpu, double perHour) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** Defensive copies. */
    public SweepSpec {
        dimensions = List.copyOf(dimensions);
        slos = List.copyOf(slos);
        gpuCosts = List.copyOf(gpuCosts);
    }

    /** The price per GPU-hour of {@code gpu} (its entry, else {@code default}, else 0). */
    public double costPerGpuHour(String gpu) {
        double fallback = 0;
        for (GpuCost c : gpuCosts) {
            if (c.gpu().equals(gpu)) {
                return c.perHour();
            }
            if (c.gpu().equals("default")) {
                fallback = c.perHour();
            }
        }
        return fallback;
    }

    /** Reads and validates a sweep file. */
    public static SweepSpec load(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new ConfigException("sweep", "cannot read " + file + ": " + e.getMessage());
        }
        JsonNode root;
        try {
            root = YAMLMapper.builder().build().readTree(text);
        } catch (JacksonException e) {
            throw new ConfigException("sweep", file + ": malformed YAML: " + e.getOriginalMessage());
        }
        Path dir = file.toAbsolutePath().getParent();
        return parse(root, dir, file.toString());
    }

    static SweepSpec parse(JsonNode root, Path dir, String source) {
        if (root == null || !root.isObject()) {
            throw new ConfigException("sweep", source + ": expected a mapping");
        }
        only(root, "", Set.of("base", "space", "search", "slo", "objective", "gpu_cost_per_hour", "pareto"));
        JsonNode base = root.get("base");
        String baseYaml;
        String baseSource;
        Path baseDir = dir;
        if (base == null || base.isNull()) {
            throw new ConfigException("base", "required: a replay config path or an inline mapping");
        } else if (base.isString()) {
            Path p = dir.resolve(base.asString());
            try {
                baseYaml = Files.readString(p);
            } catch (IOException e) {
                throw new ConfigException("base", "cannot read " + p + ": " + e.getMessage());
            }
            baseSource = p.toString();
            baseDir = p.toAbsolutePath().normalize().getParent();
        } else if (base.isObject()) {
            baseYaml = JsonMapper.builder().build().writeValueAsString(base); // JSON is YAML
            baseSource = source + ": base";
        } else {
            throw new ConfigException("base", "expected a path or a mapping");
        }
        List<Dimension> dims = new ArrayList<>();
        JsonNode space = root.get("space");
        if (space != null && !space.isNull()) {
            if (!space.isObject()) {
                throw new ConfigException("space", "expected a mapping of config path to values");
            }
            for (String path : space.propertyNames()) {
                dims.add(new Dimension(path, values(space.get(path), "space." + path)));
            }
        }
        JsonNode search = root.get("search");
        String type = "grid";
        int points = 0;
        long seed = 1;
        String loadPath = null;
        double low = 0;
        double high = 0;
        int iterations = 0;
        if (search != null && !search.isNull()) {
            only(search, "search", Set.of("type", "points", "seed", "load_path", "low", "high", "iterations"));
            type = text(search, "type", "search.type", "grid");
            if (!SEARCHES.contains(type)) {
                throw new ConfigException("search.type", "unknown search '" + type + "' (known: " + SEARCHES + ")");
            }
            if (type.equals("random")) {
                points = (int) number(search, "points", "search.points", 1, 1e7);
                seed = search.has("seed") ? search.get("seed").asLong() : 1;
            }
            if (type.equals("bisect")) {
                loadPath = text(search, "load_path", "search.load_path", "workload.arrival.rate");
                low = number(search, "low", "search.low", 0, Double.MAX_VALUE);
                high = number(search, "high", "search.high", low, Double.MAX_VALUE);
                iterations = (int) number(search, "iterations", "search.iterations", 1, 40);
                if (!(high > low)) {
                    throw new ConfigException("search.high", "must be greater than search.low");
                }
            }
        }
        List<Slo> slos = new ArrayList<>();
        JsonNode slo = root.get("slo");
        if (slo != null && !slo.isNull()) {
            for (String key : slo.propertyNames()) {
                var m = java.util.regex.Pattern.compile("(ttft|tpot|e2e)_p(50|90|95|99)_ms")
                        .matcher(key);
                if (!m.matches()) {
                    throw new ConfigException(
                            "slo." + key, "unknown SLO (use <ttft|tpot|e2e>_<p50|p90|p95|p99>_ms, e.g. ttft_p90_ms)");
                }
                slos.add(new Slo(
                        key, m.group(1), Integer.parseInt(m.group(2)), number(slo, key, "slo." + key, 0, 1e12)));
            }
        }
        if (type.equals("bisect") && slos.isEmpty()) {
            throw new ConfigException("slo", "bisect searches the highest load that meets the SLO: set at least one");
        }
        String objective = root.has("objective") ? root.get("objective").asString() : "goodput_per_gpu";
        if (!OBJECTIVES.contains(objective)) {
            throw new ConfigException("objective", "unknown objective '" + objective + "' (known: " + OBJECTIVES + ")");
        }
        List<GpuCost> costs = new ArrayList<>();
        JsonNode c = root.get("gpu_cost_per_hour");
        if (c != null && !c.isNull()) {
            for (String gpu : c.propertyNames()) {
                costs.add(new GpuCost(gpu, number(c, gpu, "gpu_cost_per_hour." + gpu, 0, 1e9)));
            }
        }
        if (objective.equals("cost_per_million_tokens") && costs.isEmpty()) {
            throw new ConfigException("gpu_cost_per_hour", "the cost objective needs GPU prices (e.g. {default: 2.0})");
        }
        String px = "ttft_p90_ms";
        String py = "throughput_per_gpu";
        JsonNode pareto = root.get("pareto");
        if (pareto != null && !pareto.isNull()) {
            only(pareto, "pareto", Set.of("x", "y"));
            px = text(pareto, "x", "pareto.x", px);
            py = text(pareto, "y", "pareto.y", py);
            for (String[] axis : new String[][] {{"pareto.x", px}, {"pareto.y", py}}) {
                try {
                    PointResult.failed(new RunSpec(0, 0, "", "", null, List.of()), "")
                            .metric(axis[1]);
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(axis[0], "unknown metric '" + axis[1] + "'");
                }
            }
        }
        return new SweepSpec(
                baseYaml,
                baseSource,
                dims,
                type,
                points,
                seed,
                loadPath,
                low,
                high,
                iterations,
                slos,
                objective,
                costs,
                px,
                py,
                baseDir == null ? null : baseDir.toAbsolutePath().normalize().toString());
    }

    private static List<String> values(JsonNode v, String field) {
        JsonMapper json = JsonMapper.builder().build();
        List<String> out = new ArrayList<>();
        if (v.isArray()) {
            for (JsonNode e : v) {
                out.add(e.isString() ? e.asString() : json.writeValueAsString(e));
            }
        } else if (v.isObject() && v.has("values")) {
            only(v, field, Set.of("values"));
            return values(v.get("values"), field + ".values");
        } else if (v.isObject() && v.has("from")) {
            only(v, field, Set.of("from", "to", "step"));
            double from = number(v, "from", field + ".from", -Double.MAX_VALUE, Double.MAX_VALUE);
            double to = number(v, "to", field + ".to", from, Double.MAX_VALUE);
            double step = number(v, "step", field + ".step", Double.MIN_VALUE, Double.MAX_VALUE);
            boolean integral = v.get("from").isIntegralNumber() && v.get("step").isIntegralNumber();
            for (int i = 0; from + i * step <= to + 1e-9 * step; i++) {
                double x = from + i * step;
                out.add(integral ? Long.toString(Math.round(x)) : Double.toString(x));
                if (out.size() > 100_000) {
                    throw new ConfigException(field, "more than 100,000 values");
                }
            }
        } else {
            throw new ConfigException(field, "expected a list, {values: [...]} or {from, to, step}");
        }
        if (out.isEmpty()) {
            throw new ConfigException(field, "no values");
        }
        return out;
    }

    private static void only(JsonNode n, String field, Set<String> allowed) {
        for (String k : n.propertyNames()) {
            if (!allowed.contains(k)) {
                throw new ConfigException(
                        field.isEmpty() ? k : field + "." + k,
                        "unknown key (allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)) + ")");
            }
        }
    }

    private static String text(JsonNode n, String key, String field, String fallback) {
        JsonNode v = n.get(key);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isString()) {
            throw new ConfigException(field, "expected a string");
        }
        return v.asString();
    }

    private static double number(JsonNode n, String key, String field, double min, double max) {
        JsonNode v = n.get(key);
        if (v == null || !v.isNumber()) {
            throw new ConfigException(field, "expected a number");
        }
        double d = v.asDouble();
        if (!(d >= min && d <= max)) {
            throw new ConfigException(field, "must be in [" + min + ", " + max + "], got " + d);
        }
        return d;
    }
}
