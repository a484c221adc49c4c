package io.servesim.workload;

import io.servesim.sim.Mix64;

/**
 * One inference request as the workload states it (immutable): its prompt token ids, how many output tokens it asks
 * for, where it came from, and its placement wishes (an authored attention-DP rank, a session turn that must
 * migrate). Where it was routed lives in the engine's {@code RoutingDecision}; its progress in the engine's
 * {@code Sequence}.
 *
 * <p>Output token ids are a deterministic function of {@code outputSeed} and the position, so a session's next turn
 * can contain exactly the tokens the engine "generated" for the previous one, without storing them.
 */
public final class Request {
    /** Token ids are drawn below this bound (the Llama-3 vocabulary size). */
    public static final int VOCAB = 128_256;

    private final int id;
    private final long sessionId;
    private final int turn;
    private final boolean lastTurn;
    private final long arrivalNanos;
    private final int[] promptTokens;
    private final int promptLength;
    private final int outputTokens;
    private final long outputSeed;
    private final int[] outputTokenIds;
    private final int dpRank;
    private final boolean migrate;

    /**
     * Creates a request.
     *
     * @param id dense id in creation order, from 0
     * @param sessionId session id, or -1 for a standalone request
     * @param turn turn index within its session (0 for standalone requests)
     * @param lastTurn whether no later turn of the session follows
     * @param arrivalNanos arrival time
     * @param promptTokens prompt token ids (not copied; must not be modified)
     * @param outputTokens requested output tokens, at least 1
     * @param outputSeed seed of the generated token ids
     */
    public Request(
            int id,
            long sessionId,
            int turn,
            boolean lastTurn,
            long arrivalNanos,
            int[] promptTokens,
            int outputTokens,
            long outputSeed) {
        this(id, sessionId, turn, lastTurn, arrivalNanos, promptTokens, outputTokens, outputSeed, null);
    }

    /**
     * Creates a request whose first generated tokens are given (a trace's real output tokens); positions past
     * {@code outputTokenIds} fall back to seeded pseudo-random ids.
     */
    public Request(
            int id,
            long sessionId,
            int turn,
            boolean lastTurn,
            long arrivalNanos,
            int[] promptTokens,
            int outputTokens,
            long outputSeed,
            int[] outputTokenIds) {
        this(
                id,
                sessionId,
                turn,
                lastTurn,
                arrivalNanos,
                promptTokens,
                promptTokens.length,
                outputTokens,
                outputSeed,
                outputTokenIds,
                -1,
                false);
    }

    /**
     * Creates a request whose prompt is the first {@code promptLength} ids of {@code tokens}: a session's turns share
     * one append-only buffer (each turn's prompt extends the previous one), so positions past the prompt may hold a
     * later turn's tokens and are never read as this request's.
     *
     * @param dpRank the attention-DP rank the trace authored, or -1 (the router chooses)
     * @param migrate whether this follow-up turn must go to another worker than its session's previous turn
     */
    public Request(
            int id,
            long sessionId,
            int turn,
            boolean lastTurn,
            long arrivalNanos,
            int[] tokens,
            int promptLength,
            int outputTokens,
            long outputSeed,
            int[] outputTokenIds,
            int dpRank,
            boolean migrate) {
        if (promptLength <= 0 || promptLength > tokens.length || outputTokens < 1) {
            throw new IllegalArgumentException("request " + id + ": needs >= 1 prompt and output token");
        }
        this.id = id;
        this.sessionId = sessionId;
        this.turn = turn;
        this.lastTurn = lastTurn;
        this.arrivalNanos = arrivalNanos;
        this.promptTokens = tokens;
        this.promptLength = promptLength;
        this.outputTokens = outputTokens;
        this.outputSeed = outputSeed;
        this.outputTokenIds = outputTokenIds;
        this.dpRank = dpRank;
        this.migrate = migrate;
    }

    /** The attention-DP rank the trace authored for this request, or -1 (the router chooses). */
    public int dpRank() {
        return dpRank;
    }

    /** Whether this follow-up turn must go to a different worker than the session's previous turn. */
    public boolean migrate() {
        return migrate;
    }

    /** Dense id in creation order. */
    public int id() {
        return id;
    }

    /** Session id, or -1. */
    public long sessionId() {
        return sessionId;
    }

    /** Turn index within the session. */
    public int turn() {
        return turn;
    }

    /** Whether this is the last turn of its session (true for standalone requests). */
    public boolean lastTurn() {
        return lastTurn;
    }

    /** Arrival time in nanoseconds. */
    public long arrivalNanos() {
        return arrivalNanos;
    }

    /** Prompt length in tokens. */
    public int promptLength() {
        return promptLength;
    }

    /** Prompt token at position i. */
    public int promptToken(int i) {
        return promptTokens[i];
    }

    /**
     * The array holding the prompt in its first {@link #promptLength()} positions (shared, read-only by contract; it
     * may be longer than the prompt).
     */
    public int[] promptTokens() {
        return promptTokens;
    }

    /** Requested output tokens. */
    public int outputTokens() {
        return outputTokens;
    }

    /** The i-th generated token id. */
    public int outputToken(int i) {
        if (outputTokenIds != null && i < outputTokenIds.length) {
            return outputTokenIds[i];
        }
        return (int) ((Mix64.mix(outputSeed, i) >>> 1) % VOCAB);
    }

    /** Token at position i of prompt followed by generated tokens. */
    public int tokenAt(int i) {
        return i < promptLength ? promptTokens[i] : outputToken(i - promptLength);
    }
}
