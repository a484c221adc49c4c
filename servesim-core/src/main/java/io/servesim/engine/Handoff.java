package io.servesim.engine;

/**
 * One request's way through a disaggregated cluster: its prefill on a prefill worker (or locally on its decode
 * worker), the hold on the prefill blocks until the decode worker has read them, and the KV transfer between the two.
 * Created by dispatch, carried by the request's prefill-side and decode-side {@link Sequence}s, read by the run
 * record. Times are virtual nanoseconds, -1 until they happen.
 */
public final class Handoff {
    private final int id;
    private final boolean local;
    private final int preferredDecodeRank;
    private final long[] promptHashes;
    Sequence prefill;
    EngineRank source;
    Sequence decode;
    EngineRank destination;
    /** Decode side: the pull is still to be staged (vLLM's {@code do_remote_prefill}, cleared once it is). */
    boolean awaitingPull;
    /** The prefill side holds the prompt's blocks (vLLM NIXL's delayed free). */
    boolean held;

    boolean sourceFailed;
    /** Its decode worker failed before reading: the prefill hold waits for its lease to expire. */
    boolean orphaned;

    boolean reprefilled;
    int transferId = -1;
    int localHitBlocks;
    int transferTokens;
    long bytes;
    long prefillDoneNanos = -1;
    long transferStartNanos = -1;
    long transferEndNanos = -1;

    /**
     * A request's handoff.
     *
     * @param id a dense id in dispatch order (deterministic iteration)
     * @param local whether the prompt is prefilled on the decode worker (conditional disaggregation)
     * @param preferredDecodeRank the decode rank chosen at arrival (conditional disaggregation), or -1 to route the
     *     decode side when the prefill ends
     * @param promptHashes the prompt's full-block hashes computed at dispatch (shared, read-only), or null
     */
    public Handoff(int id, boolean local, int preferredDecodeRank, long[] promptHashes) {
        this.id = id;
        this.local = local;
        this.preferredDecodeRank = preferredDecodeRank;
        this.promptHashes = promptHashes;
    }

    /** The prompt's full-block hashes computed at dispatch, or null. */
    public long[] promptHashes() {
        return promptHashes;
    }

    /** The dense id. */
    public int id() {
        return id;
    }

    /** Whether the prompt was prefilled on the decode worker. */
    public boolean local() {
        return local;
    }

    /** The decode rank chosen at arrival, or -1. */
    public int preferredDecodeRank() {
        return preferredDecodeRank;
    }

    /** The prefill-side sequence (null for a local prefill). */
    public Sequence prefill() {
        return prefill;
    }

    /** The prefill worker, or -1 for a local prefill. */
    public int prefillWorker() {
        return source == null ? -1 : source.workerId();
    }

    /** When the prefill step sampled its token (the handoff instant), or -1. */
    public long prefillDoneNanos() {
        return prefillDoneNanos;
    }

    /** When the decode worker staged the pull, or -1. */
    public long transferStartNanos() {
        return transferStartNanos;
    }

    /** When the pulled bytes landed, or -1. */
    public long transferEndNanos() {
        return transferEndNanos;
    }

    /** Bytes moved (charged) by the transfer, 0 without one. */
    public long bytes() {
        return bytes;
    }

    /** Prompt tokens moved by the transfer. */
    public int transferTokens() {
        return transferTokens;
    }

    /** Whether the decode worker recomputed the prompt because its prefill worker failed. */
    public boolean reprefilled() {
        return reprefilled;
    }
}
