package io.servesim.kv;

/**
 * Receives a rank's KV cache events, as vLLM publishes BlockStored / BlockRemoved for Dynamo's KV router
 * ({@code vllm/v1/core/block_pool.py}, KV events): a hash is <em>stored</em> when the rank's pool first holds it
 * and <em>removed</em> when its last copy is evicted. Delivered synchronously, in event order.
 */
public interface KvEventSink {
    /** Rank {@code rank} now holds a block with {@code blockHash}. */
    void stored(int rank, long blockHash);

    /** Rank {@code rank} no longer holds any block with {@code blockHash}. */
    void removed(int rank, long blockHash);
}
