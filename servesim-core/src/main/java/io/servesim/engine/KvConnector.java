package io.servesim.engine;

import io.servesim.kv.KvCacheManager;

/**
 * The scheduler's port to KV held outside its rank's GPU cache, in the shape of vLLM's KV-connector scheduler calls
 * ({@code vllm/distributed/kv_transfer/kv_connector/v1/base.py}, {@code KVConnectorBase_V1}): the scheduler asks
 * how many tokens beyond its local prefix hit can be loaded ({@code get_num_new_matched_tokens}, always loaded
 * asynchronously here), tells the connector once blocks are allocated for them ({@code update_state_after_alloc}),
 * and reports when a loaded request is admitted or gives its blocks back; at each step's start and end the
 * connector sees the KV manager ({@code build_connector_meta}: stores). Loads that land call back
 * {@link VllmScheduler#copyLanded} ({@code update_connector_output}'s finished receives). The scheduler itself holds
 * only vLLM's rules; G2 host offload and KVCR pulls live behind this port ({@link TieredConnector}).
 */
interface KvConnector {
    /**
     * External blocks that continue {@code s}'s prompt after its {@code localHitBlocks} GPU hits (at most up to
     * {@code maxHitBlocks}); the connector remembers the match for {@link #startLoad}.
     */
    int matchExternal(Sequence s, int localHitBlocks, int maxHitBlocks);

    /** Blocks for the latest match of {@code s} are allocated after its local hits: start the copies. */
    void startLoad(Sequence s, int localHitBlocks);

    /** A request whose copies landed was admitted: what it loaded is consumed. */
    void loadConsumed(Sequence s);

    /** A request whose copies landed gave its blocks back before admission (they stay cached). */
    void loadReleased(Sequence s);

    /**
     * A step starts: deferred stores of what the previous step computed go out now. The vLLM scheduler calls it only
     * when stores are queued ({@link KvCacheManager#storesQueued}), so a connector that queues them must say so there.
     */
    void beforeSchedule(KvCacheManager kv);

    /**
     * The step was scheduled: remember what it cached, for the next step's stores. The vLLM scheduler calls it only
     * when blocks were newly cached ({@link KvCacheManager#hasNewlyCached}).
     */
    void afterSchedule(KvCacheManager kv);

    /** GPU blocks of this rank held by copies in flight (store pins and KVCR source holds). */
    int blocksHeldForCopies();

    /** G1 blocks pinned by stores in flight. */
    int pinnedForStore();

    /** G1 blocks of this rank held as the source of KVCR pulls in flight. */
    int heldForPulls();

    /** The rank failed: cancel its copies in flight. */
    void abortAll();
}
