package io.servesim.engine;

import io.servesim.kv.BlockHasher;
import io.servesim.kv.BlockTable;
import io.servesim.workload.Request;

/**
 * A request's state inside one rank, as vLLM's {@code Request}: tokens known (prompt + generated), tokens
 * computed (KV written or scheduled), the block table, and the timestamps metrics need.
 */
public final class Sequence {
    final Request request;
    final RoutingDecision routing;
    private long[] promptHashes;
    final int promptLength;
    final int targetOutputTokens;
    final BlockTable table = new BlockTable();
    int numOutputTokens;
    int numComputedTokens;
    int preemptions;
    int cachedTokensAtFirstAdmission = -1;
    long firstScheduledNanos = -1;
    long firstTokenNanos = -1;
    long lastTokenNanos = -1;
    boolean running;
    boolean finished;
    /** A G2 load for this request landed; it is scheduled from the head of waiting. */
    boolean loaded;
    /** Blocks held after the load (G1 hits + loaded blocks). */
    int loadedBlocks;

    int g1TokensAtFirstAdmission;
    int remoteTokensAtFirstAdmission;
    int pendingRemoteTokens;
    int pendingCopies;
    int targetBlocks;
    long pullNanos = -1;
    int pullSource = -1;
    int g2TokensAtFirstAdmission;
    int pendingG2Tokens;

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
        this.request = request;
        this.routing = routing;
        this.promptHashes = promptHashes;
        this.promptLength = request.promptLength();
        // vLLM stops a request at max_model_len total tokens (FINISHED_LENGTH_CAPPED).
        this.targetOutputTokens = Math.min(request.outputTokens(), maxModelLen - promptLength);
    }

    /** The request. */
    public Request request() {
        return request;
    }

    /** Where dispatch placed it. */
    public RoutingDecision routing() {
        return routing;
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
        return cachedTokensAtFirstAdmission;
    }

    /** Prompt tokens hit in G1 at first admission. */
    public int g1TokensAtFirstAdmission() {
        return g1TokensAtFirstAdmission;
    }

    /** Prompt tokens loaded from G2 at first admission. */
    public int g2TokensAtFirstAdmission() {
        return g2TokensAtFirstAdmission;
    }

    /** Prompt tokens pulled from another worker at first admission. */
    public int remoteTokensAtFirstAdmission() {
        return remoteTokensAtFirstAdmission;
    }

    /** Time from staging to landing of this request's KVCR pull, or -1. */
    public long pullNanos() {
        return pullNanos;
    }

    /** The worker this request pulled from, or -1. */
    public int pullSource() {
        return pullSource;
    }

    /** The block table. */
    public BlockTable table() {
        return table;
    }

    /** Whether the request has finished. */
    public boolean finished() {
        return finished;
    }

    /** Virtual time of the first admission (first scheduled), or -1. */
    public long firstScheduledNanos() {
        return firstScheduledNanos;
    }

    /** Virtual time of the first output token, or -1. */
    public long firstTokenNanos() {
        return firstTokenNanos;
    }

    /** Virtual time of the latest output token, or -1. */
    public long lastTokenNanos() {
        return lastTokenNanos;
    }

    /** Extends the table's chained hashes to every full block of the known tokens. */
    void ensureHashes(int blockSize) {
        int fullBlocks = numTokens() / blockSize;
        int have = table.numHashes();
        if (have >= fullBlocks) {
            return;
        }
        table.ensureHashCapacity(fullBlocks);
        if (have == 0 && promptHashes != null) {
            long[] pre = promptHashes;
            promptHashes = null; // the table holds them from now on
            int n = Math.min(pre.length, fullBlocks);
            for (int b = 0; b < n; b++) {
                table.addHash(pre[b]);
            }
            have = n;
            if (have >= fullBlocks) {
                return;
            }
        }
        int[] prompt = request.promptTokens();
        long parent = have == 0 ? BlockHasher.ROOT : table.hash(have - 1);
        for (int b = have; b < fullBlocks; b++) {
            int from = b * blockSize;
            long h;
            if (from + blockSize <= promptLength) {
                h = BlockHasher.hashBlock(parent, prompt, from, blockSize);
            } else {
                long s = BlockHasher.begin(parent);
                for (int i = from, end = from + blockSize; i < end; i++) {
                    s = BlockHasher.add(s, request.tokenAt(i));
                }
                h = BlockHasher.finish(s);
            }
            table.addHash(h);
            parent = h;
        }
    }
}
