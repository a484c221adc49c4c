package io.servesim.workload;

import io.servesim.sim.Mix64;

/**
 * One inference request: its prompt token ids, how many output tokens it asks for, and where it came from.
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
    private int dpRank = -1;
    private boolean migrate;
    private boolean migrated;
    private int hintWorker = -1;
    private int hintRank = -1;
    private int hintBlocks;
    private int restarts;
    private long[] blockHashes;
    private int blockHashSize;

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
                outputTokenIds);
    }

    /**
     * Creates a request whose prompt is the first {@code promptLength} ids of {@code tokens}: a session's turns share
     * one append-only buffer (each turn's prompt extends the previous one), so positions past the prompt may hold a
     * later turn's tokens and are never read as this request's.
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
            int[] outputTokenIds) {
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
    }

    /** The attention-DP rank the trace authored for this request, or -1 (the router chooses). */
    public int dpRank() {
        return dpRank;
    }

    /** Sets the authored attention-DP rank (before submission). */
    public Request dpRank(int rank) {
        this.dpRank = rank;
        return this;
    }

    /**
     * Chained hashes of the prompt's full blocks at {@code blockSize}, computed once by whoever needed them first
     * (a KV-aware router), so the engine does not hash the prompt again.
     */
    public void blockHashes(long[] hashes, int blockSize) {
        this.blockHashes = hashes;
        this.blockHashSize = blockSize;
    }

    /** Precomputed prompt block hashes at {@code blockSize}, or null. */
    public long[] blockHashes(int blockSize) {
        return blockHashSize == blockSize ? blockHashes : null;
    }

    /** Whether this follow-up turn must go to a different worker than the session's previous turn. */
    public boolean migrate() {
        return migrate;
    }

    /** Marks this follow-up turn for migration (before submission). */
    public Request migrate(boolean value) {
        this.migrate = value;
        return this;
    }

    /**
     * Records routing facts: whether the turn was migrated, and the hint (previous worker and rank of the session,
     * and how many of this prompt's leading blocks that rank holds), or -1 when there is no hint.
     */
    public void routed(boolean wasMigrated, int worker, int rank, int blocks) {
        this.migrated = wasMigrated;
        this.hintWorker = worker;
        this.hintRank = rank;
        this.hintBlocks = blocks;
    }

    /** Whether this turn was sent away from the session's previous worker on purpose. */
    public boolean migrated() {
        return migrated;
    }

    /** Restarts from scratch so far (its worker failed while it was in flight). */
    public int restarts() {
        return restarts;
    }

    /** Records a restart: the request's worker failed and it starts over elsewhere. */
    public void restarted() {
        restarts++;
    }

    /** The hint's worker (the session's previous worker when the target differs), or -1. */
    public int hintWorker() {
        return hintWorker;
    }

    /** The hint's rank within {@link #hintWorker()}, or -1. */
    public int hintRank() {
        return hintRank;
    }

    /** Leading prompt blocks the hinted rank holds (0 without a hint). */
    public int hintBlocks() {
        return hintBlocks;
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
