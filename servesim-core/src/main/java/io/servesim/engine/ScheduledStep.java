package io.servesim.engine;

import java.util.Arrays;

/**
 * One scheduled step of a rank whose engine keeps steps until their outputs are applied (two in flight with an
 * overlap scheduler): per entry the request, its tokens, whether it was its first admission, whether it computes
 * context, whether it samples a token, and its preemption count when scheduled (a later preemption drops the token).
 */
final class ScheduledStep {
    Sequence[] seqs = new Sequence[16];
    int[] tokens = new int[16];
    boolean[] first = new boolean[16];
    boolean[] context = new boolean[16];
    boolean[] samples = new boolean[16];
    int[] preemptions = new int[16];
    int count;

    /** Whether any entry is its request's first admission ({@link #markFirst}). */
    boolean anyFirst;

    /** Whether applying its outputs may finish a request. */
    boolean mayFinish;

    /** The next step in its scheduler's in-flight or spare list ({@link RankScheduler}), or null. */
    ScheduledStep next;

    /** Appends an entry; {@code samples} and {@code preemptions} are set when the step is finalised. */
    void add(Sequence r, int n, boolean isFirst, boolean isContext) {
        if (count == seqs.length) {
            int grown = count * 2;
            seqs = Arrays.copyOf(seqs, grown);
            tokens = Arrays.copyOf(tokens, grown);
            first = Arrays.copyOf(first, grown);
            context = Arrays.copyOf(context, grown);
            samples = Arrays.copyOf(samples, grown);
            preemptions = Arrays.copyOf(preemptions, grown);
        }
        seqs[count] = r;
        tokens[count] = n;
        first[count] = isFirst;
        anyFirst |= isFirst;
        context[count] = isContext;
        samples[count] = false;
        count++;
    }

    /** Sets whether the last entry is its request's first admission. */
    void markFirst(boolean isFirst) {
        first[count - 1] = isFirst;
        anyFirst |= isFirst;
    }

    /** Empties it for reuse. */
    void clear() {
        Arrays.fill(seqs, 0, count, null);
        count = 0;
        mayFinish = false;
        anyFirst = false;
    }
}
