package io.servesim.workload;

import io.servesim.sim.RandomStreams;
import java.util.SplittableRandom;

/**
 * Builds prompts as (shared group prefix) + unique random tokens; each group's prefix is derived once, on first use,
 * from its own random stream.
 */
final class Prompts {
    private final RandomStreams streams;
    private final int sharedPrefixTokens;
    private final int prefixGroups;
    private final int[][] prefixes;

    Prompts(RandomStreams streams, int sharedPrefixTokens, int prefixGroups) {
        this.streams = streams;
        this.sharedPrefixTokens = sharedPrefixTokens;
        this.prefixGroups = prefixGroups;
        this.prefixes = new int[sharedPrefixTokens > 0 ? prefixGroups : 0][];
    }

    /** A prompt of {@code length} tokens whose first min(length, shared) tokens are group {@code key}'s prefix. */
    int[] build(long key, int length, SplittableRandom rng) {
        return build(key, length, length, rng);
    }

    /** As {@link #build(long, int, SplittableRandom)}, in an array of {@code capacity >= length} (the rest zero). */
    int[] build(long key, int length, int capacity, SplittableRandom rng) {
        int[] p = new int[capacity];
        int shared = Math.min(length, sharedPrefixTokens);
        if (shared > 0) {
            int group = (int) Math.floorMod(key, (long) prefixGroups);
            int[] prefix = prefixes[group];
            if (prefix == null) {
                prefix = new int[sharedPrefixTokens];
                SplittableRandom pr = streams.stream(RandomStreams.PREFIXES, group);
                for (int i = 0; i < prefix.length; i++) {
                    prefix[i] = pr.nextInt(Request.VOCAB);
                }
                prefixes[group] = prefix;
            }
            System.arraycopy(prefix, 0, p, 0, shared);
        }
        for (int i = shared; i < length; i++) {
            p[i] = rng.nextInt(Request.VOCAB);
        }
        return p;
    }
}
