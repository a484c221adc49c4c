package io.servesim.engine;

import io.servesim.kv.BlockHasher;
import io.servesim.kv.BlockTable;
import io.servesim.workload.Request;

/**
 * A request's state inside one rank, as vLLM's {@code Request}: tokens known (prompt + generated), tokens
 * computed (KV written or scheduled), the block table, and the timestamps metrics need.
 */
public final class Sequence {
    private final Request request;
    private long[] promptHashes;
    private final int promptLength;
    private final int maxTokens;
    private final int targetOutputTokens;
    private final BlockTable table = new BlockTable();
    private final Cold cold;
    private int numOutputTokens;
    private int numComputedTokens;
    private int preemptions;
    private long firstTokenNanos = -1;
    private long lastTokenNanos = -1;
    private boolean finished;
    private boolean running;
    // async scheduling: tokens scheduled whose sampled id has not come back yet (vLLM's num_output_placeholders)
    private int placeholders;
    // the most computed tokens its plain decodes may reach without touching its blocks or finishing (-1: unknown)
    private int decodeRunTo = -1;

    Sequence(Request request, int maxModelLen) {
        this(request, RoutingDecision.NONE, null, maxModelLen);
    }

    /**
     * A request entering a rank.
     *
     * @param routing where dispatch placed it
     * @param promptHashes its prompt's full-block hashes (shared, read-only), or null to hash here
     */
    Sequence(Request request, RoutingDecision routing, long[] promptHashes, int maxModelLen) {
        this(request, routing, promptHashes, maxModelLen, null, false);
    }

    /**
     * A request entering a rank of a disaggregated cluster.
     *
     * @param handoff its way through the cluster, or null (aggregated)
     * @param prefillOnly whether this is the prefill-side sequence: it runs with {@code max_tokens = 1} (as vLLM's P/D
     *     proxy sends it) and keeps its blocks when it finishes
     */
    Sequence(
            Request request,
            RoutingDecision routing,
            long[] promptHashes,
            int maxModelLen,
            Handoff handoff,
            boolean prefillOnly) {
        this.request = request;
        this.promptHashes = promptHashes;
        this.cold = new Cold(routing, handoff, prefillOnly);
        this.promptLength = request.promptLength();
        this.maxTokens = prefillOnly ? 1 : request.outputTokens();
        // vLLM stops a request at max_model_len total tokens (FINISHED_LENGTH_CAPPED).
        this.targetOutputTokens = Math.min(maxTokens, maxModelLen - promptLength);
        table.expectTokens(promptLength + Math.max(0, targetOutputTokens));
    }

    /** The request's {@code max_tokens} on this rank: its output length, or 1 for a P/D prefill. */
    public int maxTokens() {
        return maxTokens;
    }

    /** Whether this is the prefill side of a disaggregated request (it keeps its blocks when it finishes). */
    public boolean prefillOnly() {
        return cold.prefillOnly;
    }

    /** Its way through a disaggregated cluster, or null. */
    public Handoff handoff() {
        return cold.handoff;
    }

    /** Whether it is a decode-side request whose prompt KV is still to be pulled from its prefill worker. */
    boolean awaitingRemotePrefill() {
        return cold.handoff != null && cold.handoff.awaitingPull;
    }

    /** The request. */
    public Request request() {
        return request;
    }

    /** Where dispatch placed it. */
    public RoutingDecision routing() {
        return cold.routing;
    }

    /** Prompt length in tokens. */
    public int promptLength() {
        return promptLength;
    }

    /** Prompt plus generated tokens. */
    public int numTokens() {
        return promptLength + numOutputTokens;
    }

    /** Tokens whose KV is computed or scheduled. */
    public int numComputedTokens() {
        return numComputedTokens;
    }

    /** Output tokens generated so far. */
    public int numOutputTokens() {
        return numOutputTokens;
    }

    /** Times preempted. */
    public int preemptions() {
        return preemptions;
    }

    /** Prefix-hit tokens at first admission, or -1 before it. */
    public int cachedTokensAtFirstAdmission() {
        return cold.cachedTokensAtFirstAdmission;
    }

    /**
     * What vLLM reports as the request's {@code num_cached_tokens} ({@code PrefillStats}, set at each prefix lookup
     * until the first output): the hit (local plus external) of its last lookup before its first token. It differs
     * from {@link #cachedTokensAtFirstAdmission()} when the request was preempted before its first token.
     */
    public int reportedCachedTokens() {
        return cold.reportedCachedTokens;
    }

    /** A prefix lookup for it found {@code hitTokens} (local and external); vLLM reports the last one before output. */
    void lookedUp(int hitTokens) {
        if (firstTokenNanos < 0) {
            cold.reportedCachedTokens = hitTokens;
        }
    }

    /** Prompt tokens loaded from G2 at first admission. */
    public int g2TokensAtFirstAdmission() {
        return cold.g2TokensAtFirstAdmission;
    }

    /** Prompt tokens pulled from another worker at first admission. */
    public int remoteTokensAtFirstAdmission() {
        return cold.remoteTokensAtFirstAdmission;
    }

    /** Time from staging to landing of this request's KVCR pull, or -1. */
    public long pullNanos() {
        return cold.pullNanos;
    }

    /** The worker this request pulled from, or -1. */
    public int pullSource() {
        return cold.pullSource;
    }

    /** The block table. */
    public BlockTable table() {
        return table;
    }

    /** Whether the request has finished (or was rejected). */
    public boolean finished() {
        return finished;
    }

    /** Virtual time of the first admission (first scheduled), or -1. */
    public long firstScheduledNanos() {
        return cold.firstScheduledNanos;
    }

    /** Virtual time of the first output token, or -1. */
    public long firstTokenNanos() {
        return firstTokenNanos;
    }

    /** Virtual time of the latest output token, or -1. */
    public long lastTokenNanos() {
        return lastTokenNanos;
    }

    /** Whether it has produced no output token yet (its prompt counts as pending prefill work). */
    boolean awaitingFirstToken() {
        return firstTokenNanos < 0;
    }

    /** Its computed tokens advance to {@code tokens} (schedule time, or admission over a prefix hit). */
    void computedTo(int tokens) {
        numComputedTokens = tokens;
    }

    /**
     * Admitted from waiting with {@code computed} tokens already in KV ({@code g2Tokens} of them loaded from G2 and
     * {@code remoteTokens} pulled); at its first admission the hit and the time are recorded.
     *
     * @return whether this was its first admission
     */
    boolean admitted(long nowNanos, int computed, int g2Tokens, int remoteTokens) {
        numComputedTokens = computed;
        running = true;
        if (cold.cachedTokensAtFirstAdmission >= 0) {
            return false;
        }
        cold.cachedTokensAtFirstAdmission = computed;
        cold.g2TokensAtFirstAdmission = g2Tokens;
        cold.remoteTokensAtFirstAdmission = remoteTokens;
        cold.firstScheduledNanos = nowNanos;
        return true;
    }

    /** Its first admission's step reached the GPU at {@code nanos}. */
    void firstScheduledAt(long nanos) {
        cold.firstScheduledNanos = nanos;
    }

    /** Preempted (recompute): its computed tokens are gone. */
    void preempted() {
        decodeRunTo = -1; // its blocks are freed
        numComputedTokens = 0; // vLLM keeps num_output_placeholders: a token in flight still arrives (ASYNC.md R8)
        preemptions++;
        running = false;
    }

    /** Whether it is on the running list (admitted and not preempted or finished since). */
    boolean running() {
        return running;
    }

    /** Output placeholders: tokens scheduled (async) whose sampled id has not arrived. */
    public int placeholders() {
        return placeholders;
    }

    /** A step that samples for it was scheduled ahead of its output (async scheduling). */
    void placeholderAdded() {
        placeholders++;
    }

    /** Tokens in flight for it will be dropped, not sampled (SGLang's overlap scheduler after a retraction). */
    void placeholdersDropped() {
        placeholders = 0;
    }

    /** The sampled token of an earlier step arrived (async scheduling). */
    void placeholderFilled() {
        placeholders--;
    }

    /**
     * Its first output token arrived with its KV (TensorRT-LLM's P/D: the context server sampled it, {@code
     * firstGenTokens}), unstreamed: the client gets it with the token the generation server samples next.
     */
    void firstTokenReceived() {
        numOutputTokens++;
        cold.firstTokenHeld = true;
    }

    /** Whether a first token received with the KV waits to be streamed ({@link #firstTokenReceived}). */
    boolean firstTokenHeld() {
        return cold.firstTokenHeld;
    }

    /** Streams the held first token at {@code nowNanos} (its time to first token ends here). */
    void streamHeldFirstToken(long nowNanos) {
        cold.firstTokenHeld = false;
        firstTokenNanos = nowNanos;
        lastTokenNanos = nowNanos;
    }

    /**
     * Samples one output token at {@code nowNanos}.
     *
     * @return the gap since its previous token, or -1 for its first token
     */
    long tokenSampled(long nowNanos) {
        numOutputTokens++;
        long gap = firstTokenNanos < 0 ? -1 : nowNanos - lastTokenNanos;
        if (firstTokenNanos < 0) {
            firstTokenNanos = nowNanos;
        }
        lastTokenNanos = nowNanos;
        return gap;
    }

    /**
     * Catches up with a decode run's steps applied to the run as a whole ({@link VllmScheduler}): {@code steps} more
     * computed tokens, {@code outputs} more sampled tokens, the latest at {@code lastNanos}, and with async scheduling
     * the placeholders of the steps whose outputs are still to come — what {@code steps} calls of {@link #computedTo}
     * (one token each) and {@link #placeholderAdded}, and {@code outputs} of {@link #tokenSampled} and {@link
     * #placeholderFilled}, would have left.
     */
    void catchUp(int steps, int outputs, long lastNanos, boolean async) {
        numComputedTokens += steps;
        if (outputs > 0) {
            numOutputTokens += outputs;
            lastTokenNanos = lastNanos;
        }
        if (async) {
            placeholders += steps - outputs;
        }
    }

    /** Whether it has all the output tokens it will get (requested, or capped by max_model_len). */
    boolean reachedTarget() {
        return numOutputTokens >= targetOutputTokens;
    }

    /** Output tokens it will still generate (to its requested length, capped by the context limit). */
    int remainingOutputTokens() {
        return targetOutputTokens - numOutputTokens;
    }

    /** Whether {@code moreTokens} more sampled tokens would reach its output length. */
    boolean mayFinishWithin(int moreTokens) {
        return numOutputTokens + moreTokens >= targetOutputTokens;
    }

    /**
     * The most tokens this request may have computed after a plain decode step (one token on a complete context) such
     * that the step changed nothing but its computed tokens: its slot was already held and no block filled or needed
     * a hash ({@code kvBound}: {@link io.servesim.kv.KvCacheManager#decodeRunBound}), it stayed below the context
     * limit, and its outputs cannot finish it. With {@code known + placeholders = computed} after such a step, a step
     * that computes to {@code c} may sample the last token once {@code c >= prompt + target - 1}.
     */
    int decodeLimit(int kvBound, int maxModelLen) {
        int finishBound = promptLength + targetOutputTokens - 2;
        return Math.min(kvBound, Math.min(finishBound, maxModelLen - 1));
    }

    /**
     * {@link #decodeLimit} as of its latest plain decode on the full path, or -1: while it keeps decoding, a step that
     * computes to at most this value is a plain decode with nothing else to do (VllmScheduler's fast entries).
     */
    int decodeRunTo() {
        return decodeRunTo;
    }

    /** Sets {@link #decodeRunTo()} (-1: none known). */
    void decodeRunTo(int limit) {
        decodeRunTo = limit;
    }

    /**
     * Whether its client gave up on it ({@code workload.client_timeout_s}): it was recorded as timed out then, and
     * whatever the engine does with it afterwards (its abort, or a finish before the abort) records nothing more.
     */
    public boolean clientGone() {
        return cold.clientGone;
    }

    /** Its client gave up on it ({@link #clientGone}). */
    void clientGave() {
        cold.clientGone = true;
    }

    /** Whether it finishes with its next sampled token whatever its length (SGLang's {@code to_finish}). */
    boolean finishAtNextOutput() {
        return cold.finishAtNextOutput;
    }

    /** It finishes with its next sampled token ({@link #finishAtNextOutput}). */
    void finishAtNextOutput(boolean yes) {
        cold.finishAtNextOutput = yes;
    }

    /** It leaves the rank: finished, or rejected at submission. */
    void finish() {
        finished = true;
        running = false;
    }

    /** Copies into it started: {@code g2Tokens} from G2, {@code remoteTokens} pulled; blocks up to {@code target}. */
    void loadStarted(int g2Tokens, int remoteTokens, int target, int copies) {
        cold.pendingG2Tokens = g2Tokens;
        cold.pendingRemoteTokens = remoteTokens;
        cold.targetBlocks = target;
        cold.pendingCopies = copies;
    }

    /** One of its copies landed; true when none is left. */
    boolean copyLanded() {
        return --cold.pendingCopies == 0;
    }

    /** Blocks it will hold once its copies land (its local hits plus the copied ones). */
    int targetBlocks() {
        return cold.targetBlocks;
    }

    /** Its copies landed: it holds {@code heldBlocks} cached blocks and waits at the head to be admitted. */
    void landed(int heldBlocks) {
        cold.loaded = true;
        cold.loadedBlocks = heldBlocks;
    }

    /** Whether its copies landed and it has not been admitted since. */
    boolean loaded() {
        return cold.loaded;
    }

    /** Blocks held after its copies landed. */
    int loadedBlocks() {
        return cold.loadedBlocks;
    }

    /** Tokens its G2 load brings. */
    int pendingG2Tokens() {
        return cold.pendingG2Tokens;
    }

    /** Tokens its KVCR pull brings (0 once consumed, released or aborted). */
    int pendingRemoteTokens() {
        return cold.pendingRemoteTokens;
    }

    /** Admission consumed what its copies loaded. */
    void loadConsumed() {
        cold.loaded = false;
        cold.pendingRemoteTokens = 0;
        cold.pendingG2Tokens = 0;
    }

    /** It gave back the blocks its copies filled (they stay cached) before admission. */
    void loadReleased() {
        cold.pendingRemoteTokens = 0;
        cold.loaded = false;
        cold.loadedBlocks = 0;
    }

    /** Its KVCR pull from worker {@code sourceWorker} was staged. */
    void pullStaged(int sourceWorker) {
        cold.pullSource = sourceWorker;
    }

    /** Its KVCR pull landed {@code nanos} after staging. */
    void pullLanded(long nanos) {
        cold.pullNanos = nanos;
    }

    /** Its KVCR pull was aborted (the source failed): it will hold blocks only up to {@code from}. */
    void pullAborted(int from) {
        cold.targetBlocks = from;
        cold.pendingRemoteTokens = 0;
        cold.pullNanos = -1;
        cold.pullSource = -1;
    }

    /** Extends the table's chained hashes to every full block of the known tokens. */
    void ensureHashes(int blockSize) {
        int have = table.numHashes();
        if ((have + 1) * blockSize > numTokens()) {
            return; // every full block is hashed: floor(tokens / block) <= have (per step: no division)
        }
        int fullBlocks = numTokens() / blockSize;
        if (have == 0) {
            // the prompt's blocks: hashed once per request by dispatch (BlockHasher.promptHashes), or here when it
            // dispatched none — a prompt of a seed or hash ids that nothing else reads (Cluster.dispatchHashes), hashed
            // straight into the table — or a sequence made without them (scheduler tests)
            int capacity = Math.max(fullBlocks, table.expectedTokens() / blockSize);
            int n;
            if (promptHashes == null && request.derivedPromptHashes()) {
                n = Math.min(request.promptLength() / blockSize, fullBlocks);
                request.promptHashesInto(blockSize, table.startHashes(n, capacity), n);
            } else {
                long[] pre = promptHashes != null ? promptHashes : request.promptHashes(blockSize);
                promptHashes = null; // the table holds them from now on
                n = Math.min(pre.length, fullBlocks);
                table.initHashes(pre, n, capacity);
            }
            have = n;
        } else {
            table.ensureHashCapacity(fullBlocks, blockSize);
        }
        // blocks that reach into generated tokens, as they fill
        long parent = have == 0 ? BlockHasher.ROOT : table.hash(have - 1);
        long seed = request.uniqueTokenSeed();
        if (table.isPrivate() && seed != 0) {
            // nobody else can hold this chain (BlockTable.markPrivate): the request's unique token seed and the block
            // index are an equivalent identity (as for its prompt blocks), at one mix per block instead of hashing its
            // tokens; the seed matters when the prompt has no full block (the chain then starts at the root). A
            // hash-id row whose first id is its own (markPrivateFrom(0)) has no such seed: its tokens are hashed.
            long key = BlockHasher.hashIdKey(seed);
            for (int b = have; b < fullBlocks; b++) {
                parent = BlockHasher.hashIdBlockOfKey(parent, key, b);
                table.addHash(parent);
            }
            return;
        }
        for (int b = have; b < fullBlocks; b++) {
            long state = BlockHasher.begin(parent);
            for (int i = b * blockSize, end = i + blockSize; i < end; i++) {
                state = BlockHasher.add(state, request.tokenAt(i));
            }
            parent = BlockHasher.finish(state);
            table.addHash(parent);
        }
    }

    /**
     * What a step does not read: routing, P/D, first-admission and copy state. Kept apart so the fields a decode step
     * reads (tokens, times, flags, the table) fit in fewer cache lines (at thousands of ranks each is a miss).
     */
    private static final class Cold {
        final RoutingDecision routing;
        final Handoff handoff;
        final boolean prefillOnly;
        int cachedTokensAtFirstAdmission = -1;
        int reportedCachedTokens;
        int g2TokensAtFirstAdmission;
        int remoteTokensAtFirstAdmission;
        long firstScheduledNanos = -1;
        // copies in flight or landed before admission (G2 loads, KVCR pulls; see KvConnector)
        boolean loaded;
        int loadedBlocks;
        int pendingCopies;
        int targetBlocks;
        int pendingG2Tokens;
        int pendingRemoteTokens;
        long pullNanos = -1;
        int pullSource = -1;
        boolean firstTokenHeld;
        boolean clientGone;
        boolean finishAtNextOutput;

        Cold(RoutingDecision routing, Handoff handoff, boolean prefillOnly) {
            this.routing = routing;
            this.handoff = handoff;
            this.prefillOnly = prefillOnly;
        }
    }
}
