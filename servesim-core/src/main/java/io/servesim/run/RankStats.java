package io.servesim.run;

/**
 * What one rank did during a run.
 *
 * @param worker worker id
 * @param rank rank index within the worker
 * @param requests requests routed to it
 * @param busyNanos virtual time spent in passes it took part in
 * @param passes passes (engine steps) it took part in
 * @param prefillTokens prompt (prefill and recompute) tokens computed
 * @param decodeTokens decode tokens computed
 * @param peakUsedBlocks highest number of KV blocks in use
 * @param usableBlocks KV blocks it can use
 * @param preemptions preemptions on this rank
 */
public record RankStats(
        int worker,
        int rank,
        long requests,
        long busyNanos,
        long passes,
        long prefillTokens,
        long decodeTokens,
        int peakUsedBlocks,
        int usableBlocks,
        long preemptions) {
    /** A rank's statistics so far. */
    public static RankStats of(io.servesim.engine.EngineRank r) {
        return new RankStats(
                r.workerId(),
                r.rankId(),
                r.requests(),
                r.busyNanos(),
                r.passes(),
                r.prefillTokens(),
                r.decodeTokens(),
                r.peakUsedBlocks(),
                r.scheduler().pool().usableBlocks(),
                r.scheduler().preemptions());
    }

    /** Peak KV usage as a fraction of usable blocks. */
    public double peakKvUsage() {
        return usableBlocks == 0 ? 0 : (double) peakUsedBlocks / usableBlocks;
    }
}
