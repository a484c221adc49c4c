package io.servesim.config;

/** A user mistake in configuration, naming the offending key path (e.g. {@code engine.kv_cache.block_size}). */
public final class ConfigException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String path;
    private final String problem;

    /** Creates an error about {@code path}; {@code problem} says what was expected and what was found. */
    public ConfigException(String path, String problem) {
        super(path.isEmpty() ? problem : path + ": " + problem);
        this.path = path;
        this.problem = problem;
    }

    /** The key path relative to where the error was raised (joined into a full path by the loader). */
    public String path() {
        return path;
    }

    /** What is wrong, without the path. */
    public String problem() {
        return problem;
    }

    /** The same error with {@code prefix} prepended to its path. */
    public ConfigException under(String prefix) {
        if (prefix.isEmpty()) {
            return this;
        }
        String joined = path.isEmpty() ? prefix : prefix + (path.startsWith("[") ? "" : ".") + path;
        return new ConfigException(joined, problem);
    }
}
