package io.servesim.sim;

import java.util.SplittableRandom;

/**
 * Seeded random streams: one root seed per run, one derived {@link SplittableRandom} per component or entity.
 *
 * <p>A stream is derived from (run seed, domain, index) by hashing, not by splitting in creation order, so a
 * request's prompt or a session's think times do not change when an unrelated component draws more numbers
 * (common random numbers across the points of a sweep). {@code SplittableRandom} gives identical sequences on
 * every JDK.
 */
public final class RandomStreams {
    /** Domain: arrival process. */
    public static final long ARRIVALS = 1;
    /** Domain: per-request lengths and tokens. */
    public static final long REQUESTS = 2;
    /** Domain: per-session lengths, tokens and think times. */
    public static final long SESSIONS = 3;
    /** Domain: router randomness. */
    public static final long ROUTER = 4;
    /** Domain: shared prefixes. */
    public static final long PREFIXES = 5;
    /** Domain: session migration draws (per session and turn). */
    public static final long MIGRATION = 6;

    /** Domain of a disaggregated cluster's prefill router. */
    public static final long PREFILL_ROUTER = 7;

    /** Domain of engines' own draws (SGLang's {@code random} policy), one stream per rank. */
    public static final long ENGINE = 8;

    private final long seed;

    /** Creates the streams of one run. */
    public RandomStreams(long seed) {
        this.seed = seed;
    }

    /** The run seed. */
    public long seed() {
        return seed;
    }

    /** A fresh stream for (domain, index); the same arguments always give the same sequence. */
    public SplittableRandom stream(long domain, long index) {
        return new SplittableRandom(Mix64.mix(Mix64.mix(seed ^ 0x5E17E5E17E5E17EL, domain), index));
    }
}
