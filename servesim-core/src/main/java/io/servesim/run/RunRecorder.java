package io.servesim.run;

import io.servesim.engine.EngineRank;
import io.servesim.engine.RoutingDecision;
import io.servesim.engine.Sequence;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestMetrics;
import io.servesim.metrics.RequestRecord;
import io.servesim.metrics.RequestStatus;
import io.servesim.metrics.RequestStream;
import io.servesim.workload.Request;

/**
 * Records how every request ended: builds its one {@link RequestRecord} (the only place a per-request row is
 * assembled), adds it to the summary statistics, and keeps it in the log or streams it to disk.
 */
final class RunRecorder {
    private final RequestMetrics metrics = new RequestMetrics();
    private final RequestLog log = new RequestLog();
    private final long[] workerCompleted;
    /** Per pool of {@code cluster.pools}, the statistics of the requests that ended on it (empty without pools). */
    private final RequestMetrics[] poolMetrics;

    private final int[] poolOfWorker;
    private final boolean disaggregated;
    private final io.servesim.metrics.LatencyDistribution pdPrefillNanos =
            new io.servesim.metrics.LatencyDistribution();
    private final io.servesim.metrics.LatencyDistribution pdDecodeFirstTokenNanos =
            new io.servesim.metrics.LatencyDistribution();
    private RequestStream stream;
    private long lastFinishNanos;

    RunRecorder(io.servesim.config.ClusterConfig cluster, long exactPercentileSamples) {
        this.workerCompleted = new long[cluster.workers()];
        this.disaggregated = cluster.disaggregated();
        pdPrefillNanos.exactLimit(exactPercentileSamples);
        pdDecodeFirstTokenNanos.exactLimit(exactPercentileSamples);
        metrics.exactLimit(exactPercentileSamples);
        this.poolMetrics = new RequestMetrics[cluster.pools().size()];
        for (int p = 0; p < poolMetrics.length; p++) {
            poolMetrics[p] = new RequestMetrics();
            poolMetrics[p].exactLimit(exactPercentileSamples);
        }
        log.poolNames(cluster.poolNamesByWorker());
        this.poolOfWorker = new int[poolMetrics.length == 0 ? 0 : cluster.workers()];
        for (int w = 0; w < poolOfWorker.length; w++) {
            poolOfWorker[w] = cluster.poolOf(w);
        }
    }

    /** Streams rows to disk instead of keeping them (before the run). */
    void streamTo(RequestStream requestStream) {
        this.stream = requestStream;
    }

    /** A rank finished {@code s} at {@code nowNanos}: completed, length-capped, or rejected (prompt too long). */
    void finished(EngineRank rank, Sequence s, boolean rejected, long nowNanos) {
        lastFinishNanos = Math.max(lastFinishNanos, nowNanos);
        RequestStatus status;
        if (rejected) {
            status = RequestStatus.REJECTED_PROMPT_TOO_LONG;
        } else if (s.numOutputTokens() < s.request().outputTokens()) {
            status = RequestStatus.LENGTH_CAPPED;
        } else {
            status = RequestStatus.COMPLETED;
        }
        record(rank.workerId(), rank.rankId(), s, s.request(), s.routing(), status);
        if (status.completed()) {
            workerCompleted[rank.workerId()]++;
        }
    }

    /** The request reached no worker at {@code nowNanos}: every worker had failed or was draining. */
    void rejectedNoWorker(Request request, RoutingDecision facts, long nowNanos) {
        lastFinishNanos = Math.max(lastFinishNanos, nowNanos); // the run lasts until its last request ended
        record(-1, -1, null, request, facts, RequestStatus.REJECTED_NO_WORKER);
    }

    /** A session turn never sent (an earlier turn of its session was rejected), recorded at {@code nowNanos}. */
    void abandoned(Request request, long nowNanos) {
        lastFinishNanos = Math.max(lastFinishNanos, nowNanos);
        record(-1, -1, null, request, RoutingDecision.NONE, RequestStatus.ABANDONED);
    }

    /** The client of {@code s} on {@code rank} gave up on it at {@code nowNanos} ({@code workload.client_timeout_s}). */
    void timedOut(EngineRank rank, Sequence s, long nowNanos) {
        lastFinishNanos = Math.max(lastFinishNanos, nowNanos);
        record(rank.workerId(), rank.rankId(), s, s.request(), s.routing(), RequestStatus.TIMED_OUT);
    }

    /** The run's time limit found {@code s} still on {@code rank}. */
    void incomplete(EngineRank rank, Sequence s) {
        record(rank.workerId(), rank.rankId(), s, s.request(), s.routing(), RequestStatus.INCOMPLETE);
    }

    /** The run stopped at its time limit, which is then its end. */
    void timeLimitReached(long limitNanos) {
        lastFinishNanos = Math.max(lastFinishNanos, limitNanos);
    }

    private void record(int worker, int rank, Sequence s, Request r, RoutingDecision d, RequestStatus status) {
        io.servesim.engine.Handoff h = s == null ? null : s.handoff();
        Sequence prefill = h == null || s.prefillOnly() ? null : h.prefill();
        if (prefill != null) {
            recordHandedOff(worker, rank, s, prefill, h, r, d, status);
            return;
        }
        io.servesim.metrics.PdFacts pd = null;
        if (disaggregated) {
            pd = h == null
                    ? io.servesim.metrics.PdFacts.NONE
                    : new io.servesim.metrics.PdFacts(worker, h.local(), -1, -1, -1, 0, 0, false);
        }
        RequestRecord record = new RequestRecord(
                r.id(),
                r.sessionId(),
                r.turn(),
                worker,
                rank,
                r.arrivalNanos(),
                s == null ? -1 : s.firstScheduledNanos(),
                s == null ? -1 : s.firstTokenNanos(),
                s == null ? -1 : s.lastTokenNanos(),
                r.promptLength(),
                s == null ? 0 : s.numOutputTokens(),
                s == null ? 0 : Math.max(0, s.cachedTokensAtFirstAdmission()),
                s == null ? 0 : s.reportedCachedTokens(),
                s == null ? 0 : s.g2TokensAtFirstAdmission(),
                s == null ? 0 : s.remoteTokensAtFirstAdmission(),
                s == null ? 0 : s.preemptions(),
                status,
                d.hintWorker(),
                d.hintRank(),
                d.hintBlocks(),
                d.migrated(),
                s == null ? -1 : s.pullNanos(),
                s == null ? -1 : s.pullSource(),
                d.restarts(),
                pd);
        add(record, worker);
    }

    /**
     * A disaggregated request that reached its decode worker: one row stitched from both sides. Its queue time,
     * prefix hit and reported cached tokens are its prefill's (where its prompt ran); its tokens, worker and status
     * are its decode side's, so TTFT spans prefill queueing, the prefill, the transfer and the first decode step.
     */
    private void recordHandedOff(
            int worker,
            int rank,
            Sequence s,
            Sequence prefill,
            io.servesim.engine.Handoff h,
            Request r,
            RoutingDecision d,
            RequestStatus status) {
        pdPrefillNanos.record(h.prefillDoneNanos() - r.arrivalNanos());
        if (status.completed() && h.transferEndNanos() >= 0) {
            pdDecodeFirstTokenNanos.record(s.firstTokenNanos() - h.transferEndNanos());
        }
        RequestRecord record = new RequestRecord(
                r.id(),
                r.sessionId(),
                r.turn(),
                worker,
                rank,
                r.arrivalNanos(),
                prefill.firstScheduledNanos(),
                s.firstTokenNanos(),
                s.lastTokenNanos(),
                r.promptLength(),
                s.numOutputTokens(),
                Math.max(0, prefill.cachedTokensAtFirstAdmission()),
                prefill.reportedCachedTokens(),
                0,
                0,
                prefill.preemptions() + s.preemptions(),
                status,
                -1,
                -1,
                0,
                false,
                -1,
                -1,
                d.restarts(),
                new io.servesim.metrics.PdFacts(
                        h.prefillWorker(),
                        false,
                        h.prefillDoneNanos(),
                        h.transferStartNanos(),
                        h.transferEndNanos(),
                        h.bytes(),
                        h.transferTokens(),
                        h.reprefilled()));
        add(record, worker);
        // the prefill pool's view of the request (its pool statistics, not a row): one output token at the prefill
        // end, so the pool's TTFT and E2E are arrival to prefill end
        RequestRecord prefillSide = new RequestRecord(
                r.id(),
                r.sessionId(),
                r.turn(),
                h.prefillWorker(),
                prefill.routing().rank(),
                r.arrivalNanos(),
                prefill.firstScheduledNanos(),
                h.prefillDoneNanos(),
                h.prefillDoneNanos(),
                r.promptLength(),
                1,
                Math.max(0, prefill.cachedTokensAtFirstAdmission()),
                prefill.reportedCachedTokens(),
                0,
                0,
                prefill.preemptions(),
                io.servesim.metrics.RequestStatus.COMPLETED,
                -1,
                -1,
                0,
                false,
                -1,
                -1,
                d.restarts());
        poolMetrics[poolOfWorker[h.prefillWorker()]].record(prefillSide);
    }

    private void add(RequestRecord record, int worker) {
        metrics.record(record);
        if (poolMetrics.length > 0 && worker >= 0) {
            poolMetrics[poolOfWorker[worker]].record(record);
        }
        if (stream == null) {
            log.add(record);
        } else {
            stream.add(record);
        }
    }

    /** Arrival to prefill end of requests handed to a decode worker. */
    io.servesim.metrics.LatencyDistribution pdPrefillNanos() {
        return pdPrefillNanos;
    }

    /** Transfer landing to first token of completed handed-off requests. */
    io.servesim.metrics.LatencyDistribution pdDecodeFirstTokenNanos() {
        return pdDecodeFirstTokenNanos;
    }

    /** Summary statistics so far. */
    RequestMetrics metrics() {
        return metrics;
    }

    /** Statistics of the requests that ended on pool {@code p} of {@code cluster.pools}. */
    RequestMetrics poolMetrics(int p) {
        return poolMetrics[p];
    }

    /** Kept rows (empty when streamed). */
    RequestLog log() {
        return log;
    }

    /** Requests that completed on worker {@code w} so far. */
    long completedOn(int w) {
        return workerCompleted[w];
    }

    /** Requests ended (completed or rejected) so far. */
    long ended() {
        return metrics.completed + metrics.rejected;
    }

    /** The latest request end (or the time limit). */
    long lastFinishNanos() {
        return lastFinishNanos;
    }

    /** Closes the row stream, returning its SHA-256, or null when rows were kept. */
    String closeStream() {
        if (stream == null) {
            return null;
        }
        stream.close();
        return stream.sha256();
    }
}
