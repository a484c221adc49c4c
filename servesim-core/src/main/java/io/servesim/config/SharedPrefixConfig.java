package io.servesim.config;

/**
 * An approximate prompt structure for trace rows that carry only lengths ({@code workload.trace.shared_prefix}):
 * the row on line <i>L</i> (its prompt's identity) starts with the first min({@code tokens}, prompt length) tokens of
 * prefix group <i>L</i> mod {@code groups}; with {@code repeat_period} P, a row whose length equals that of the row P
 * lines earlier repeats that row's whole prompt (a benchmark cycling through a fixed list of P prompts).
 *
 * @param tokens tokens of each group's shared prefix
 * @param groups how many distinct prefixes
 * @param repeatPeriod rows after which a prompt of the same length repeats, or null (every prompt unique)
 */
public record SharedPrefixConfig(Integer tokens, Integer groups, Integer repeatPeriod) {
    /** Validates the counts. */
    public SharedPrefixConfig {
        Check.atLeast("tokens", Check.present("tokens", tokens), 1);
        Check.atLeast("groups", Check.present("groups", groups), 1);
        if (repeatPeriod != null) {
            Check.atLeast("repeat_period", repeatPeriod, 1);
        }
    }

    /** A shared prefix without repetition. */
    public SharedPrefixConfig(Integer tokens, Integer groups) {
        this(tokens, groups, null);
    }
}
