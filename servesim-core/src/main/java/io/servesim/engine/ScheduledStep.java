package io.servesim.engine;

import java.util.Arrays;

/**
 * One scheduled step of a rank whose engine keeps steps until their outputs are applied (two in flight with an
 * overlap scheduler): per entry the request, its tokens, whether it was its first admission, whether it computes
 * context, whether it samples a token, and its preemption count when scheduled (a later preemption drops the token).
 *
 * <p>Layout: an entry's tokens, flags and preemption count pack into one long, and the first entry lives in the
 * record's own fields (most steps of a lightly loaded rank have one or two entries), the rest in two arrays. At
 * thousands of ranks every array a step reaches is a cache miss; six parallel arrays made that six.
 */
final class ScheduledStep {
    private static final long TOKENS_MASK = 0xFFFF_FFFFL;
    private static final long FIRST = 1L << 32;
    private static final long CONTEXT = 1L << 33;
    private static final long SAMPLES = 1L << 34;
    private static final long PLAIN = 1L << 35;
    private static final int PREEMPTIONS_SHIFT = 36;
    private static final long PLAIN_DECODE = 1 | PLAIN | SAMPLES;

    private Sequence seq0;
    private long info0;
    private Sequence[] seqs = new Sequence[8];
    private long[] infos = new long[8];

    /** Entries. */
    int count;

    /** Whether any entry is its request's first admission ({@link #markFirst}). */
    boolean anyFirst;

    /** Whether applying its outputs may finish a request. */
    boolean mayFinish;

    /** Whether it is a step of a decode run ({@link VllmScheduler}): its outputs only sample tokens. */
    boolean decodeRun;

    /**
     * A decode run's requests when every entry is a plain decode of one of them, in order ({@link #planRun}), or
     * null: such a step keeps no entries of its own.
     */
    Sequence[] run;

    /** The next step in its scheduler's in-flight or spare list ({@link RankScheduler}), or null. */
    ScheduledStep next;

    /** Appends an entry; {@code samples} and {@code preemptions} are set when the step is finalised. */
    void add(Sequence r, int n, boolean isFirst, boolean isContext) {
        append(r, (n & TOKENS_MASK) | (isFirst ? FIRST : 0) | (isContext ? CONTEXT : 0));
        anyFirst |= isFirst;
    }

    private void append(Sequence r, long info) {
        if (count == 0) {
            seq0 = r;
            info0 = info;
        } else {
            int i = count - 1;
            if (i == seqs.length) {
                seqs = Arrays.copyOf(seqs, i * 2);
                infos = Arrays.copyOf(infos, i * 2);
            }
            seqs[i] = r;
            infos[i] = info;
        }
        count++;
    }

    /**
     * Appends a plain decode (VllmScheduler's fast entries: one token that samples, nothing else to do at schedule or
     * output time).
     */
    void addPlainDecode(Sequence r) {
        append(r, PLAIN_DECODE);
    }

    /**
     * Makes this (empty) record a plain decode of each of the first {@code n} requests of {@code requests}, in order,
     * without copying them: a decode run's step ({@link VllmScheduler}); the array must not change while the step is
     * in flight.
     */
    void planRun(Sequence[] requests, int n) {
        run = requests;
        count = n;
    }

    /** Whether entry {@code k} is a plain decode ({@link #addPlainDecode}). */
    boolean plainDecode(int k) {
        return (info(k) & PLAIN) != 0;
    }

    private long info(int k) {
        if (run != null) {
            return PLAIN_DECODE;
        }
        return k == 0 ? info0 : infos[k - 1];
    }

    private void info(int k, long info) {
        if (run != null) {
            throw new IllegalStateException("a decode run's step has no entries to change");
        }
        if (k == 0) {
            info0 = info;
        } else {
            infos[k - 1] = info;
        }
    }

    /** The request of entry {@code k}. */
    Sequence seq(int k) {
        if (run != null) {
            return run[k];
        }
        return k == 0 ? seq0 : seqs[k - 1];
    }

    /** Tokens of entry {@code k}. */
    int tokens(int k) {
        return (int) (info(k) & TOKENS_MASK);
    }

    /** Sets the tokens of entry {@code k}. */
    void tokens(int k, int n) {
        info(k, (info(k) & ~TOKENS_MASK) | (n & TOKENS_MASK));
    }

    /** Whether entry {@code k} is its request's first admission. */
    boolean first(int k) {
        return (info(k) & FIRST) != 0;
    }

    /** Sets whether the last entry is its request's first admission. */
    void markFirst(boolean isFirst) {
        int k = count - 1;
        info(k, isFirst ? info(k) | FIRST : info(k) & ~FIRST);
        anyFirst |= isFirst;
    }

    /** Whether entry {@code k} computes context. */
    boolean context(int k) {
        return (info(k) & CONTEXT) != 0;
    }

    /** Whether entry {@code k} samples a token. */
    boolean samples(int k) {
        return (info(k) & SAMPLES) != 0;
    }

    /** Sets whether entry {@code k} samples a token. */
    void samples(int k, boolean samples) {
        info(k, samples ? info(k) | SAMPLES : info(k) & ~SAMPLES);
    }

    /** The preemption count of entry {@code k}'s request when the step was finalised. */
    int preemptions(int k) {
        return (int) (info(k) >>> PREEMPTIONS_SHIFT);
    }

    /** Records the preemption count of entry {@code k}'s request (below 2^27). */
    void preemptions(int k, int preemptions) {
        if (preemptions < 0 || preemptions >= 1 << 27) {
            throw new IllegalStateException("preemption count out of range: " + preemptions);
        }
        info(k, (info(k) & ((1L << PREEMPTIONS_SHIFT) - 1)) | ((long) preemptions << PREEMPTIONS_SHIFT));
    }

    /** Empties it for reuse. */
    void clear() {
        seq0 = null;
        if (run != null) {
            run = null;
        } else if (count > 1) {
            Arrays.fill(seqs, 0, count - 1, null);
        }
        count = 0;
        mayFinish = false;
        anyFirst = false;
        decodeRun = false;
    }
}
