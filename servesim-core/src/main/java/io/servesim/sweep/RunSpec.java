package io.servesim.sweep;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import java.io.Serializable;
import java.util.List;

/**
 * One sweep point: the base config's YAML text and the {@code --set}-style overrides of this point. Small and
 * serializable (it is what Spark ships to an executor); a trace is read by the task from its path, never shipped.
 *
 * @param pointId position in the sweep (results are ordered by it)
 * @param deployment index of the deployment this point belongs to (bisect: all load levels of one deployment)
 * @param baseYaml the base replay config
 * @param baseSource where the base came from (for error messages)
 * @param baseDir the directory the base's relative file paths resolve against, or null (the working directory)
 * @param overrides {@code path=value} in application order
 */
public record RunSpec(
        int pointId, int deployment, String baseYaml, String baseSource, String baseDir, List<String> overrides)
        implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Defensive copy. */
    public RunSpec {
        overrides = List.copyOf(overrides);
    }

    /** The point's full config. */
    public SimConfig config() {
        return ConfigLoader.fromYaml(baseYaml, baseSource, overrides)
                .withBaseDir(baseDir == null ? null : java.nio.file.Path.of(baseDir));
    }
}
