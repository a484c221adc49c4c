package io.servesim.engine;

import io.servesim.kv.KvCacheManager;

/**
 * One rank's {@link KvConnector} over its G2 host tier ({@link HostOffload}) and KVCR pulls ({@link KvcrRegistry}):
 * the external match is the G2 run that continues the local hit, then, for a hinted request, what the hinted source
 * holds beyond that, if KVCR accepts the pull (source alive and not draining, and with {@code decision: cost}
 * cheaper than recomputing). Either part may be absent.
 */
final class TieredConnector implements KvConnector {
    private final EngineRank owner;
    private final int blockSize;
    private HostOffload offload;
    private KvcrRegistry kvcr;
    private PdTransfers pd;
    private int matchedG2Blocks;
    private int matchedRemoteBlocks;
    private int matchedPdBlocks;

    TieredConnector(EngineRank owner, int blockSize) {
        this.owner = owner;
        this.blockSize = blockSize;
    }

    void offload(HostOffload hostOffload) {
        this.offload = hostOffload;
    }

    void kvcr(KvcrRegistry registry) {
        this.kvcr = registry;
    }

    void pd(PdTransfers transfers) {
        this.pd = transfers;
    }

    /** The cluster's P/D transfers, or null. */
    PdTransfers pd() {
        return pd;
    }

    /** This rank's G2 link, or null. */
    HostOffload offload() {
        return offload;
    }

    @Override
    public int matchExternal(Sequence s, int localHitBlocks, int maxHitBlocks) {
        if (s.awaitingRemotePrefill()) {
            // a P/D decode request: the rest of its prompt comes from its prefill worker (PdTransfers)
            matchedG2Blocks = 0;
            matchedRemoteBlocks = 0;
            matchedPdBlocks = pd.blocksToPull(s, localHitBlocks, maxHitBlocks);
            return matchedPdBlocks;
        }
        matchedPdBlocks = 0;
        long[] hashes = s.table().hashesView();
        int g2 = offload == null ? 0 : offload.readyRun(hashes, localHitBlocks, maxHitBlocks);
        int remote = 0;
        if (kvcr != null && s.routing().hasHint()) {
            int local = localHitBlocks + g2;
            KvcrRegistry.PullRejection rejection = kvcr.rejection(s);
            int extra = rejection == KvcrRegistry.PullRejection.FAILED_SOURCE
                    ? 0
                    : kvcr.sourceBlocks(s, maxHitBlocks) - local;
            if (rejection == KvcrRegistry.PullRejection.FAILED_SOURCE) {
                kvcr.rejectedFailedSource(); // the hinted worker and its cache are gone: recompute
            } else if (extra > 0 && rejection == KvcrRegistry.PullRejection.DRAINING_SOURCE) {
                kvcr.rejectedDrainingSource(); // a draining worker is no pull source: recompute
            } else if (extra > 0 && kvcr.worthPulling(extra, blockSize, local * blockSize, owner.timing())) {
                remote = extra;
            }
        }
        matchedG2Blocks = g2;
        matchedRemoteBlocks = remote;
        return g2 + remote;
    }

    @Override
    public void startLoad(Sequence s, int localHitBlocks) {
        if (matchedPdBlocks > 0) {
            int pdBlocks = matchedPdBlocks;
            matchedPdBlocks = 0;
            int tokens = pd.stage(owner, s, localHitBlocks, blockSize);
            s.loadStarted(0, tokens, localHitBlocks + pdBlocks, 1);
            return;
        }
        int g2 = matchedG2Blocks;
        int remote = matchedRemoteBlocks;
        s.loadStarted(
                g2 * blockSize,
                remote * blockSize,
                localHitBlocks + g2 + remote,
                (g2 > 0 ? 1 : 0) + (remote > 0 ? 1 : 0));
        if (g2 > 0) {
            offload.startLoad(s, localHitBlocks, g2, s.table().hashesView());
        }
        if (remote > 0) {
            kvcr.stage(owner, s, localHitBlocks + g2, remote);
        }
    }

    @Override
    public void loadConsumed(Sequence s) {
        if (s.pendingRemoteTokens() > 0 && kvcr != null) {
            kvcr.pullConsumed(); // the landed pull is consumed by this admission
        }
    }

    @Override
    public void loadReleased(Sequence s) {
        if (s.pendingRemoteTokens() > 0 && kvcr != null) {
            kvcr.pullDetached();
        }
    }

    @Override
    public void beforeSchedule(KvCacheManager kv) {
        if (offload != null) {
            offload.storePrevious(kv); // the offloading connector defers stores to the next step's start
        }
    }

    @Override
    public void afterSchedule(KvCacheManager kv) {
        if (offload != null) {
            offload.collect(kv);
        }
    }

    @Override
    public int blocksHeldForCopies() {
        return pinnedForStore() + heldForPulls();
    }

    @Override
    public int pinnedForStore() {
        return offload == null ? 0 : offload.pinnedForStore();
    }

    @Override
    public int heldForPulls() {
        return kvcr == null ? 0 : kvcr.sourceHolds(owner);
    }

    @Override
    public void abortAll() {
        if (offload != null) {
            offload.abortAll();
        }
    }
}
