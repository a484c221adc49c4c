package io.servesim.api;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds a config in code: a base (the defaults, or YAML text) and settings by key path with Java values (numbers,
 * strings, booleans, lists, maps), applied in order and validated on {@link #build()} exactly like a YAML file with
 * {@code --set}: an unknown key or a bad value fails with its path.
 */
public final class ConfigBuilder {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final String baseYaml;
    private final String source;
    private final List<String> settings = new ArrayList<>();

    ConfigBuilder(String baseYaml, String source) {
        this.baseYaml = baseYaml;
        this.source = source;
    }

    /**
     * Sets {@code path} (dotted, as in the YAML file, e.g. {@code engine.scheduler.max_num_seqs}) to {@code value}.
     */
    public ConfigBuilder set(String path, Object value) {
        settings.add(path + "=" + JSON.writeValueAsString(value)); // JSON is YAML: one encoder for every type
        return this;
    }

    /** Applies a {@code path=yamlValue} setting as written on the command line. */
    public ConfigBuilder set(String pathEqualsYaml) {
        settings.add(pathEqualsYaml);
        return this;
    }

    /** The validated config. */
    public SimConfig build() {
        return ConfigLoader.fromYaml(baseYaml, source, settings);
    }
}
