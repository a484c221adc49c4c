package io.servesim.kv;

import io.servesim.sim.Mix64;

/**
 * Chained 64-bit block hashes over token ids: hash(block i) = H(hash(block i-1), tokens of block i).
 *
 * <p>vLLM hashes (parent hash, token tuple, extra keys) with SHA-256 ({@code vllm/v1/core/kv_cache_utils.py});
 * any well-mixed 64-bit chained hash gives the same prefix semantics: two blocks have equal hashes exactly when
 * their whole token prefixes are equal (up to a 2^-64 collision chance). Hash 0 is reserved for "not hashed".
 */
public final class BlockHasher {
    /** The parent hash of block 0 (vLLM's NONE_HASH, fixed here so runs are reproducible). */
    public static final long ROOT = 0x0DDBA11CAFEF00DL;

    /** Marker of a block that carries no hash. */
    public static final long NO_HASH = 0L;

    private BlockHasher() {}

    /** Starts hashing a block whose parent block hash is {@code parent}. */
    public static long begin(long parent) {
        return Mix64.fmix(parent ^ 0x6A09E667F3BCC909L);
    }

    private static final long PRIME64_1 = 0x9E3779B185EBCA87L;
    private static final long PRIME64_2 = 0xC2B2AE3D27D4EB4FL;

    /** Adds one token to a block hash in progress (one xxHash64 accumulator round per token). */
    public static long add(long state, int token) {
        return Long.rotateLeft(state + (token & 0xFFFFFFFFL) * PRIME64_2, 31) * PRIME64_1;
    }

    /** Finishes a block hash; the result is never {@link #NO_HASH}. */
    public static long finish(long state) {
        long h = Mix64.fmix(state + 0x3C6EF372FE94F82BL);
        return h == NO_HASH ? 1L : h;
    }

    private static final long HASH_ID_SALT = 0x48A5_1D5B_10C4_0B1EL;

    /**
     * Hash of sub-block {@code sub} of the trace block whose id is {@code hashId}, chained to {@code parent}: the
     * identity {@code Request.promptHashes} derives for hash-id prompts (salted apart from token hashes).
     */
    public static long hashIdBlock(long parent, long hashId, int sub) {
        return hashIdBlockOfKey(parent, hashIdKey(hashId), sub);
    }

    /** The per-id part of {@link #hashIdBlock}: computed once for all the sub-blocks of one trace block id. */
    public static long hashIdKey(long hashId) {
        return Mix64.fmix(hashId ^ HASH_ID_SALT);
    }

    /**
     * {@link #hashIdBlock} from the id's {@link #hashIdKey}: one mix per sub-block. The key is a bijection of the id
     * and {@code sub × odd} of the sub-block, so for one parent distinct (id, sub) pairs collide only when two keys
     * differ in the few bits a sub-block index spans (chance about 2^-58 per pair), and across distinct parents (the
     * previous block's mixed hash) only by the 2^-64 chance of any 64-bit hash.
     */
    public static long hashIdBlockOfKey(long parent, long key, int sub) {
        long h = Mix64.fmix(parent ^ key ^ (sub * 0x9E3779B97F4A7C15L));
        return h == NO_HASH ? 1L : h;
    }

    /** Hash of the block {@code tokens[from, from + blockSize)} whose parent block hash is {@code parent}. */
    public static long hashBlock(long parent, int[] tokens, int from, int blockSize) {
        long s = begin(parent);
        for (int i = from, end = from + blockSize; i < end; i++) {
            s = add(s, tokens[i]);
        }
        return finish(s);
    }

    /**
     * The chained hashes of every full block of a prompt: the one place a request's prompt is hashed. Dispatch
     * computes them once per request; the router and the engine share the array (read-only).
     *
     * @param tokens the array holding the prompt in its first {@code promptLength} positions
     */
    public static long[] promptHashes(int[] tokens, int promptLength, int blockSize) {
        long[] hashes = new long[promptLength / blockSize];
        long parent = ROOT;
        for (int b = 0; b < hashes.length; b++) {
            parent = hashBlock(parent, tokens, b * blockSize, blockSize);
            hashes[b] = parent;
        }
        return hashes;
    }
}
