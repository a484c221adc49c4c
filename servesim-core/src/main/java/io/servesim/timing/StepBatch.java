package io.servesim.timing;

import java.util.Arrays;

/**
 * The composition of one engine step as a timing model sees it: per scheduled request, the tokens computed this
 * step and the context already computed before it, plus aggregates. Reused across steps (no allocation).
 */
public final class StepBatch {
    private int size;
    private int[] newTokens = new int[16];
    private int[] contextTokens = new int[16];
    private boolean[] decode = new boolean[16];
    private long prefillTokens;
    private int prefillRequests;
    private int decodeRequests;
    private long decodeContextTokens;
    private long prefillContextTokens;
    private long kvCapacityTokens;
    private double newTokensSum;
    private double causalPairs;
    private double kvTokens;
    // a decode run's step (addDecodeRun): request i decodes on runContexts[i] + runOffset, nothing in the arrays above
    private int[] runContexts;
    private int runOffset;

    /** Clears the batch for a new step on a rank whose KV pool holds {@code capacityTokens} tokens. */
    public void reset(long capacityTokens) {
        size = 0;
        prefillTokens = 0;
        prefillRequests = 0;
        decodeRequests = 0;
        decodeContextTokens = 0;
        prefillContextTokens = 0;
        kvCapacityTokens = capacityTokens;
        newTokensSum = 0;
        causalPairs = 0;
        kvTokens = 0;
        runContexts = null;
    }

    /**
     * Adds one scheduled request.
     *
     * @param tokens tokens computed this step
     * @param context tokens already computed before this step
     * @param isDecode true when the request is generating (one token on top of a complete context)
     */
    public void add(int tokens, int context, boolean isDecode) {
        if (size == newTokens.length) {
            grow();
        }
        newTokens[size] = tokens;
        contextTokens[size] = context;
        decode[size] = isDecode;
        size++;
        // the aggregates a roofline step needs, summed in batch order (so they equal a loop over the batch exactly)
        newTokensSum += tokens;
        causalPairs += tokens * (context + (tokens + 1) / 2.0);
        kvTokens += context + tokens;
        if (isDecode) {
            decodeRequests++;
            decodeContextTokens += (long) context + tokens;
        } else {
            prefillRequests++;
            prefillTokens += tokens;
            prefillContextTokens += context;
        }
    }

    /**
     * {@link #add}{@code (1, context, true)}: one decode token on {@code context} computed ones, with the same sums
     * ({@code 1 × (context + 2 / 2.0)} is {@code context + 1.0} exactly).
     */
    public void addDecode(int context) {
        if (size == newTokens.length) {
            grow();
        }
        newTokens[size] = 1;
        contextTokens[size] = context;
        decode[size] = true;
        size++;
        newTokensSum += 1;
        causalPairs += context + 1.0;
        kvTokens += context + 1;
        decodeRequests++;
        decodeContextTokens += (long) context + 1;
    }

    /**
     * Fills the (reset) batch with {@code n} decodes at once, request i on {@code baseContexts[i] + offset} computed
     * tokens, whose sum is {@code contextSum}: the same aggregates as {@code n} calls of {@link #addDecode} (every
     * partial sum is an integer below 2^53, so the doubles are exact whatever the order), in O(1). The array is read
     * by the per-request accessors until the next {@link #reset} and must not change before.
     */
    public void addDecodeRun(int[] baseContexts, int n, int offset, long contextSum) {
        if (size != 0) {
            throw new IllegalStateException("a decode run fills a whole batch");
        }
        runContexts = baseContexts;
        runOffset = offset;
        size = n;
        newTokensSum = n;
        long kv = contextSum + n;
        causalPairs = kv;
        kvTokens = kv;
        decodeRequests = n;
        decodeContextTokens = kv;
    }

    private void grow() {
        int cap = size * 2;
        newTokens = Arrays.copyOf(newTokens, cap);
        contextTokens = Arrays.copyOf(contextTokens, cap);
        decode = Arrays.copyOf(decode, cap);
    }

    /** New tokens of the step, summed in batch order. */
    public double newTokensSum() {
        return newTokensSum;
    }

    /**
     * (new token, context token) pairs attention computes, causal: a chunk of n new tokens after c computed ones
     * attends {@code n × (c + (n + 1) / 2)} pairs; summed in batch order.
     */
    public double causalPairs() {
        return causalPairs;
    }

    /** KV tokens the step reads: every request's computed plus new tokens, summed in batch order. */
    public double kvTokens() {
        return kvTokens;
    }

    /** Number of scheduled requests. */
    public int size() {
        return size;
    }

    /** Tokens computed this step by request i. */
    public int newTokens(int i) {
        return runContexts != null ? 1 : newTokens[i];
    }

    /** Tokens of request i computed before this step. */
    public int contextTokens(int i) {
        return runContexts != null ? runContexts[i] + runOffset : contextTokens[i];
    }

    /** Whether request i is a decode (generating one token). */
    public boolean isDecode(int i) {
        return runContexts != null || decode[i];
    }

    /** Tokens computed by prefill (and recompute) chunks this step. */
    public long prefillTokens() {
        return prefillTokens;
    }

    /** Requests with a prefill chunk this step. */
    public int prefillRequests() {
        return prefillRequests;
    }

    /** Requests decoding this step. */
    public int decodeRequests() {
        return decodeRequests;
    }

    /** Sum over decoding requests of their context length including the token computed this step. */
    public long decodeContextTokens() {
        return decodeContextTokens;
    }

    /** Sum over prefill chunks of the context computed before this step. */
    public long prefillContextTokens() {
        return prefillContextTokens;
    }

    /** Tokens the rank's KV pool can hold. */
    public long kvCapacityTokens() {
        return kvCapacityTokens;
    }

    /** All tokens computed this step. */
    public long totalTokens() {
        return prefillTokens + decodeRequests;
    }
}
