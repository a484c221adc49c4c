package io.servesim.workload;

import io.servesim.kv.BlockHasher;
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
    /**
     * The prompt position {@code promptTokens[0]} holds: 0, or for a session turn that keeps only its tail the start
     * of the previous turn's last partial block.
     */
    private final int tokensFrom;

    private final long[] hashIds;

    /** {@link #trackLiveHashIds}: who else may still carry this prompt's hash ids, or null. */
    private LiveHashIds liveHashIds;

    private final int hashBlockSize;
    /** For a prompt of unique seeded tokens ({@link #ofUniqueTokens}): its seed; else 0. */
    private final long tokenSeed;

    private final int promptLength;
    private final int outputTokens;
    private final long outputSeed;
    private final int[] outputTokenIds;
    private final int dpRank;
    private final boolean migrate;
    /**
     * The previous turn of its session when this prompt extends that turn's prompt token for token (a session
     * workload's append-only buffer), until this prompt is hashed: its full blocks' hashes are reused, not recomputed.
     */
    private Request extendedTurn;
    /** This prompt's block hashes, kept (for {@link #keptHashesBlockSize}-token blocks) until the next turn takes them. */
    private long[] keptHashes;

    private int keptHashesBlockSize;
    /** Whether a later turn's prompt will extend this one ({@link #promptWillBeExtended}): it keeps its hashes. */
    private boolean keepsHashes;
    /** A tail-only prompt's own block hashes ({@code tokensFrom > 0}): what a second lookup returns. */
    private long[] ownHashes;

    private int ownHashesBlockSize;

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
                0,
                promptTokens.length,
                outputTokens,
                outputSeed,
                outputTokenIds,
                -1,
                false);
    }

    /**
     * Creates a request whose prompt is positions {@code tokensFrom} to {@code promptLength - 1} of the token sequence,
     * held from index 0 of {@code tokens}: a session's turns share one append-only buffer (each turn's prompt extends
     * the previous one), so positions past the prompt may hold a later turn's tokens and are never read as this
     * request's. {@code tokensFrom} is 0, or for a session turn that keeps only the end of its prompt the first
     * position after the previous turn's last full KV block (of the run's one block size): its block hashes before
     * that position are the previous turn's, taken over when this turn is hashed ({@link #extendsPromptOf}), so no
     * earlier token is read again, and reading one is an error. Above 0 only for runs that hash every prompt at
     * dispatch with one block size and read tokens only to hash blocks ({@link Workload#keepTokensAfterHashing}).
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
            int tokensFrom,
            int promptLength,
            int outputTokens,
            long outputSeed,
            int[] outputTokenIds,
            int dpRank,
            boolean migrate) {
        this(
                id,
                sessionId,
                turn,
                lastTurn,
                arrivalNanos,
                tokens,
                tokensFrom,
                null,
                0,
                0,
                promptLength,
                outputTokens,
                outputSeed,
                outputTokenIds,
                dpRank,
                migrate);
        if (tokensFrom < 0 || tokensFrom > promptLength) {
            throw new IllegalArgumentException("request " + id + ": tokens from " + tokensFrom + " of " + promptLength);
        }
        if (promptLength - tokensFrom > tokens.length) {
            throw new IllegalArgumentException("request " + id + ": prompt longer than its token array");
        }
    }

    /**
     * Creates a request whose prompt a trace gives as hash ids, each standing for {@code hashBlockSize} tokens
     * (Mooncake's {@code hash_ids}): token j of the block of id h is {@link #hashIdToken}(h, j), computed when read,
     * and when the engine block size divides {@code hashBlockSize} the prompt's block hashes derive from the ids
     * without expanding a token ({@link #promptHashes}).
     *
     * @param hashIds the trace block ids, at least {@code ceil(promptLength / hashBlockSize)} (not copied)
     */
    public static Request ofHashIds(
            int id,
            long sessionId,
            int turn,
            boolean lastTurn,
            long arrivalNanos,
            long[] hashIds,
            int hashBlockSize,
            int promptLength,
            int outputTokens,
            long outputSeed,
            int[] outputTokenIds,
            int dpRank) {
        if (hashBlockSize <= 0 || (long) hashIds.length * hashBlockSize < promptLength) {
            throw new IllegalArgumentException("request " + id + ": hash ids do not cover the prompt");
        }
        return new Request(
                id,
                sessionId,
                turn,
                lastTurn,
                arrivalNanos,
                null,
                0,
                hashIds,
                hashBlockSize,
                0,
                promptLength,
                outputTokens,
                outputSeed,
                outputTokenIds,
                dpRank,
                false);
    }

    /**
     * Creates a request whose prompt is {@code promptLength} unique pseudo-random tokens (a trace row with lengths
     * only): token i is a function of {@code tokenSeed} and i, computed when read, and the prompt's block hashes
     * derive from the seed and the block index ({@link #promptHashes}) — no other prompt shares a block with it,
     * exactly as with hashed random tokens, at one mix per block.
     *
     * @param tokenSeed a seed unique to this prompt (not 0)
     */
    public static Request ofUniqueTokens(
            int id,
            long sessionId,
            int turn,
            boolean lastTurn,
            long arrivalNanos,
            long tokenSeed,
            int promptLength,
            int outputTokens,
            long outputSeed,
            int[] outputTokenIds,
            int dpRank) {
        if (tokenSeed == 0) {
            throw new IllegalArgumentException("request " + id + ": token seed 0 is reserved");
        }
        return new Request(
                id,
                sessionId,
                turn,
                lastTurn,
                arrivalNanos,
                null,
                0,
                null,
                0,
                tokenSeed,
                promptLength,
                outputTokens,
                outputSeed,
                outputTokenIds,
                dpRank,
                false);
    }

    private Request(
            int id,
            long sessionId,
            int turn,
            boolean lastTurn,
            long arrivalNanos,
            int[] tokens,
            int tokensFrom,
            long[] hashIds,
            int hashBlockSize,
            long tokenSeed,
            int promptLength,
            int outputTokens,
            long outputSeed,
            int[] outputTokenIds,
            int dpRank,
            boolean migrate) {
        if (promptLength <= 0 || outputTokens < 1) {
            throw new IllegalArgumentException("request " + id + ": needs >= 1 prompt and output token");
        }
        this.hashIds = hashIds;
        this.hashBlockSize = hashBlockSize;
        this.tokenSeed = tokenSeed;
        this.id = id;
        this.sessionId = sessionId;
        this.turn = turn;
        this.lastTurn = lastTurn;
        this.arrivalNanos = arrivalNanos;
        this.promptTokens = tokens;
        this.tokensFrom = tokensFrom;
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
        if (promptTokens != null) {
            if (i < tokensFrom) {
                throw droppedToken(i);
            }
            return promptTokens[i - tokensFrom];
        }
        if (hashIds != null) {
            return hashIdToken(hashIds[i / hashBlockSize], i % hashBlockSize);
        }
        return (int) ((Mix64.mix(tokenSeed, i) >>> 1) % VOCAB);
    }

    /**
     * The array holding the prompt in its first {@link #promptLength()} positions (shared, read-only by contract; it
     * may be longer than the prompt). A hash-id prompt is expanded into a new array on every call: hot paths use
     * {@link #promptToken} and {@link #promptHashes}.
     */
    public int[] promptTokens() {
        if (tokensFrom > 0) {
            throw droppedToken(0);
        }
        if (promptTokens != null) {
            return promptTokens;
        }
        int[] out = new int[promptLength];
        for (int i = 0; i < promptLength; i++) {
            out[i] = promptToken(i);
        }
        return out;
    }

    /**
     * The chained hashes of the prompt's full blocks of {@code blockSize} tokens (vLLM's block hashes, see
     * {@link BlockHasher}). A hash-id prompt whose trace block size is a multiple of {@code blockSize} derives them
     * from the ids — engine block b is sub-block {@code b mod (hashBlockSize / blockSize)} of trace id
     * {@code hashIds[b / (hashBlockSize / blockSize)]}, chained to block b − 1 — an equivalent identity (equal
     * hash-id prefixes give equal hashes, a different id gives a different one, exactly as hashing the expanded
     * tokens would) at one mix per block instead of hashing every token. Otherwise the tokens are hashed.
     */
    public long[] promptHashes(int blockSize) {
        if (promptTokens != null) {
            return extendedTurn == null && !keepsHashes && tokensFrom == 0
                    ? BlockHasher.promptHashes(promptTokens, promptLength, blockSize)
                    : sessionPromptHashes(blockSize);
        }
        long[] hashes = new long[promptLength / blockSize];
        promptHashesInto(blockSize, hashes, hashes.length);
        return hashes;
    }

    /**
     * Whether the prompt's block hashes derive from what the row states — its unique token seed (a lengths-only row)
     * or its trace hash ids — rather than from a token array, so {@link #promptHashesInto} can write them where they
     * are kept.
     */
    public boolean derivedPromptHashes() {
        return promptTokens == null;
    }

    /**
     * Writes the first {@code count} of a derived prompt's block hashes ({@link #derivedPromptHashes}) to
     * {@code dst[0, count)}, the values {@link #promptHashes} returns: for a seeded prompt block b's identity is
     * (seed, b), chained; for hash ids see {@link #promptHashes}.
     */
    public void promptHashesInto(int blockSize, long[] dst, int count) {
        if (promptTokens != null || count > promptLength / blockSize) {
            throw new IllegalStateException("request " + id + ": no " + count + " derived prompt block hashes");
        }
        long parent = BlockHasher.ROOT;
        if (hashIds == null) {
            long key = BlockHasher.hashIdKey(tokenSeed);
            for (int b = 0; b < count; b++) {
                parent = BlockHasher.hashIdBlockOfKey(parent, key, b);
                dst[b] = parent;
            }
            return;
        }
        if (hashBlockSize % blockSize == 0) {
            int perId = hashBlockSize / blockSize;
            for (int b = 0, id = 0; b < count; id++) {
                long key = BlockHasher.hashIdKey(hashIds[id]);
                for (int sub = 0; sub < perId && b < count; sub++, b++) {
                    parent = BlockHasher.hashIdBlockOfKey(parent, key, sub);
                    dst[b] = parent;
                }
            }
            return;
        }
        for (int b = 0; b < count; b++) {
            long state = BlockHasher.begin(parent);
            for (int i = b * blockSize, end = i + blockSize; i < end; i++) {
                state = BlockHasher.add(state, promptToken(i));
            }
            parent = BlockHasher.finish(state);
            dst[b] = parent;
        }
    }

    /**
     * A session turn's prompt hashes: the previous turn's prompt is a prefix of this one (same tokens), so its full
     * blocks have the same chained hashes and only the blocks after them are hashed — a session of t turns hashes
     * each token once instead of about t/2 times. The previous turn's array is handed over once (then dropped from
     * it), and this turn keeps its own only when a next turn will extend it, so a session holds at most one array.
     * The values are those {@link BlockHasher#promptHashes} gives (a second call, e.g. after a failed worker, hashes
     * what it cannot reuse again — or, for a turn that keeps only its tail, returns the hashes of the first call).
     */
    private long[] sessionPromptHashes(int blockSize) {
        if (ownHashes != null && ownHashesBlockSize == blockSize) {
            return ownHashes; // a tail-only prompt looked up again (e.g. re-dispatched after its worker failed)
        }
        long[] hashes = new long[promptLength / blockSize];
        int reused = 0;
        Request previous = extendedTurn;
        extendedTurn = null;
        if (previous != null && previous.keptHashes != null && previous.keptHashesBlockSize == blockSize) {
            reused = Math.min(previous.keptHashes.length, hashes.length);
            System.arraycopy(previous.keptHashes, 0, hashes, 0, reused);
            previous.keptHashes = null;
        }
        long parent = reused == 0 ? BlockHasher.ROOT : hashes[reused - 1];
        if (reused < hashes.length && reused * blockSize < tokensFrom) {
            throw droppedToken(reused * blockSize);
        }
        for (int b = reused; b < hashes.length; b++) {
            parent = BlockHasher.hashBlock(parent, promptTokens, b * blockSize - tokensFrom, blockSize);
            hashes[b] = parent;
        }
        if (keepsHashes) {
            keptHashes = hashes;
            keptHashesBlockSize = blockSize;
        }
        if (tokensFrom > 0) {
            ownHashes = hashes; // its dropped tokens cannot be hashed again
            ownHashesBlockSize = blockSize;
        }
        return hashes;
    }

    /**
     * Declares that this prompt starts with {@code previous}'s whole prompt, token for token (the session workload's
     * turns), so {@link #promptHashes} may reuse its hashes.
     */
    void extendsPromptOf(Request previous) {
        this.extendedTurn = previous;
    }

    /** Declares that a later turn's prompt will start with this whole prompt: its hashes are kept for that turn. */
    void promptWillBeExtended() {
        this.keepsHashes = true;
    }

    private IllegalStateException droppedToken(int position) {
        return new IllegalStateException("request " + id + " keeps its prompt only from token " + tokensFrom
                + " (a session turn's tail, Workload.keepTokensAfterHashing): token " + position + " was dropped");
    }

    private static final long HASH_TOKEN_SEED = 0x7EACE5EEDL;

    /** Token j of the block that trace hash id {@code hashId} stands for (deterministic, ids differ in tokens). */
    public static int hashIdToken(long hashId, int j) {
        return (int) ((Mix64.mix(HASH_TOKEN_SEED ^ hashId, j) >>> 1) % VOCAB);
    }

    /**
     * Whether no other request can share any of its KV blocks: a standalone prompt of unique seeded tokens
     * ({@link #ofUniqueTokens}). Its block hashes chain from a seed unique to it, and no later turn repeats its
     * tokens, so only the request itself could ever look them up (after a preemption).
     */
    public boolean blocksUnique() {
        return tokenSeed != 0 && sessionId < 0;
    }

    /**
     * Lets this request ask {@code live} which of its hash ids no other unfinished or future request carries
     * ({@link #privateFromBlock}); the workload calls {@link #ended} when it leaves the system.
     */
    public void trackLiveHashIds(LiveHashIds live) {
        if (hashIds == null || sessionId >= 0) {
            throw new IllegalArgumentException("request " + id + ": live hash ids need hash ids and no session");
        }
        liveHashIds = live;
    }

    /**
     * The first engine block of {@code blockSize} tokens that no other request can share now or later, or -1: none
     * is known, the request is a session turn (a later turn may repeat its tokens), or the engine block does not
     * divide the trace's hash block. A block chains over every hash id up to its own, so from the first id that only
     * this request still carries on ({@link LiveHashIds}) no other request can carry its hash; the answer can only
     * move earlier as other requests end.
     */
    public int privateFromBlock(int blockSize) {
        if (liveHashIds == null || hashBlockSize % blockSize != 0) {
            return -1;
        }
        int covering = (int) Math.min(hashIds.length, ((long) promptLength + hashBlockSize - 1) / hashBlockSize);
        int sole = liveHashIds.firstSole(hashIds, covering);
        return sole < 0 ? -1 : sole * (hashBlockSize / blockSize);
    }

    /** The request left the system: it looks none of its hash ids up again ({@link #trackLiveHashIds}). Idempotent. */
    public void ended() {
        if (liveHashIds != null) {
            liveHashIds.ended(hashIds);
            liveHashIds = null;
        }
    }

    /** The seed of a prompt of unique seeded tokens ({@link #ofUniqueTokens}), unique to this request; else 0. */
    public long uniqueTokenSeed() {
        return tokenSeed;
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
        return i < promptLength ? promptToken(i) : outputToken(i - promptLength);
    }
}
