package io.servesim.workload;

import io.servesim.sim.RandomStreams;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import java.util.SplittableRandom;

/** Builds prompts as (shared group prefix) + unique random tokens; prefixes are derived once per group. */
final class Prompts {
    private final RandomStreams streams;
    private final int sharedPrefixTokens;
    private final int prefixGroups;
    private final Int2ObjectOpenHashMap<int[]> prefixes = new Int2ObjectOpenHashMap<>();

    Prompts(RandomStreams streams, int sharedPrefixTokens, int prefixGroups) {
        this.streams = streams;
        this.sharedPrefixTokens = sharedPrefixTokens;
        this.prefixGroups = prefixGroups;
    }

    /** A prompt of {@code length} tokens whose first min(length, shared) tokens are group {@code key}'s prefix. */
    int[] build(long key, int length, SplittableRandom rng) {
        int[] p = new int[length];
        int shared = Math.min(length, sharedPrefixTokens);
        if (shared > 0) {
            int group = (int) Math.floorMod(key, (long) prefixGroups);
            int[] prefix = prefixes.get(group);
            if (prefix == null) {
                prefix = new int[sharedPrefixTokens];
                SplittableRandom pr = streams.stream(RandomStreams.PREFIXES, group);
                for (int i = 0; i < prefix.length; i++) {
                    prefix[i] = pr.nextInt(Request.VOCAB);
                }
                prefixes.put(group, prefix);
            }
            System.arraycopy(prefix, 0, p, 0, shared);
        }
        for (int i = shared; i < length; i++) {
            p[i] = rng.nextInt(Request.VOCAB);
        }
        return p;
    }
}
