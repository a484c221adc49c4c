package io.servesim.config;

/**
 * An approximate shared system prompt for trace rows that carry only lengths ({@code workload.trace.shared_prefix}):
 * replayed request <i>i</i> without token or hash ids starts with the first min({@code tokens}, prompt length) tokens
 * of prefix group <i>i</i> mod {@code groups}.
 *
 * @param tokens tokens of each group's shared prefix
 * @param groups how many distinct prefixes
 */
public record SharedPrefixConfig(Integer tokens, Integer groups) {
    /** Validates both counts. */
    public SharedPrefixConfig {
        Check.atLeast("tokens", Check.present("tokens", tokens), 1);
        Check.atLeast("groups", Check.present("groups", groups), 1);
    }
}
