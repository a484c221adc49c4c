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
