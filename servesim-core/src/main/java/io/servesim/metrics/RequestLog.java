package io.servesim.metrics;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;

/**
 * Final per-request records, stored column-wise (struct of arrays) in the order requests finished. Times are
 * virtual nanoseconds; -1 marks "never happened" (e.g. no first token for a rejected request).
 */
public final class RequestLog {
    private final IntArrayList requestId = new IntArrayList();
    private final LongArrayList sessionId = new LongArrayList();
    private final IntArrayList turn = new IntArrayList();
    private final IntArrayList worker = new IntArrayList();
    private final IntArrayList rank = new IntArrayList();
    private final LongArrayList arrivalNanos = new LongArrayList();
    private final LongArrayList firstScheduledNanos = new LongArrayList();
    private final LongArrayList firstTokenNanos = new LongArrayList();
    private final LongArrayList lastTokenNanos = new LongArrayList();
    private final IntArrayList inputTokens = new IntArrayList();
    private final IntArrayList outputTokens = new IntArrayList();
    private final IntArrayList cachedTokens = new IntArrayList();
    private final IntArrayList reportedCachedTokens = new IntArrayList();
    private final IntArrayList preemptions = new IntArrayList();
    private final it.unimi.dsi.fastutil.objects.ObjectArrayList<RequestStatus> status =
            new it.unimi.dsi.fastutil.objects.ObjectArrayList<>();
    private final IntArrayList g2Tokens = new IntArrayList();
    private final IntArrayList remoteTokens = new IntArrayList();
    private final LongArrayList pullNanos = new LongArrayList();
    private final IntArrayList pullSource = new IntArrayList();
    private final IntArrayList hintWorker = new IntArrayList();
    private final IntArrayList hintRank = new IntArrayList();
    private final IntArrayList hintBlocks = new IntArrayList();
    private final IntArrayList migrated = new IntArrayList();
    private final IntArrayList restarts = new IntArrayList();
    private final it.unimi.dsi.fastutil.objects.ObjectArrayList<PdFacts> pd =
            new it.unimi.dsi.fastutil.objects.ObjectArrayList<>();
    private boolean disaggregated;

    /** Appends one finished request. */
    public void add(RequestRecord r) {
        requestId.add(r.requestId());
        sessionId.add(r.sessionId());
        turn.add(r.turn());
        worker.add(r.worker());
        rank.add(r.rank());
        arrivalNanos.add(r.arrivalNanos());
        firstScheduledNanos.add(r.firstScheduledNanos());
        firstTokenNanos.add(r.firstTokenNanos());
        lastTokenNanos.add(r.lastTokenNanos());
        inputTokens.add(r.inputTokens());
        outputTokens.add(r.outputTokens());
        cachedTokens.add(r.cachedTokens());
        reportedCachedTokens.add(r.reportedCachedTokens());
        preemptions.add(r.preemptions());
        status.add(r.status());
        g2Tokens.add(r.g2Tokens());
        remoteTokens.add(r.remoteTokens());
        pullNanos.add(r.pullNanos());
        pullSource.add(r.pullSource());
        hintWorker.add(r.hintWorker());
        hintRank.add(r.hintRank());
        hintBlocks.add(r.hintBlocks());
        migrated.add(r.migrated() ? 1 : 0);
        restarts.add(r.restarts());
        pd.add(r.pd());
        disaggregated |= r.pd() != null;
    }

    /** Whether its records carry prefill/decode facts (a disaggregated run). */
    public boolean disaggregated() {
        return disaggregated;
    }

    /** The prefill/decode facts of record i, or null. */
    public PdFacts pd(int i) {
        return pd.get(i);
    }

    /** Record i as a {@link RequestRecord}. */
    public RequestRecord get(int i) {
        return new RequestRecord(
                requestId.getInt(i),
                sessionId.getLong(i),
                turn.getInt(i),
                worker.getInt(i),
                rank.getInt(i),
                arrivalNanos.getLong(i),
                firstScheduledNanos.getLong(i),
                firstTokenNanos.getLong(i),
                lastTokenNanos.getLong(i),
                inputTokens.getInt(i),
                outputTokens.getInt(i),
                cachedTokens.getInt(i),
                reportedCachedTokens.getInt(i),
                g2Tokens.getInt(i),
                remoteTokens.getInt(i),
                preemptions.getInt(i),
                status.get(i),
                hintWorker.getInt(i),
                hintRank.getInt(i),
                hintBlocks.getInt(i),
                migrated.getInt(i) != 0,
                pullNanos.getLong(i),
                pullSource.getInt(i),
                restarts.getInt(i),
                pd.get(i));
    }

    /** Every record, in request-id order. */
    public java.util.stream.Stream<RequestRecord> byRequestId() {
        return java.util.Arrays.stream(indicesByRequestId()).mapToObj(this::get);
    }

    /** Times record i restarted from scratch because its worker failed. */
    public int restarts(int i) {
        return restarts.getInt(i);
    }

    /** Number of records. */
    public int size() {
        return requestId.size();
    }

    /** Request id of record i. */
    public int requestId(int i) {
        return requestId.getInt(i);
    }

    /** Session id of record i, or -1. */
    public long sessionId(int i) {
        return sessionId.getLong(i);
    }

    /** Turn of record i. */
    public int turn(int i) {
        return turn.getInt(i);
    }

    /** Worker of record i. */
    public int worker(int i) {
        return worker.getInt(i);
    }

    /** Rank (within its worker) of record i. */
    public int rank(int i) {
        return rank.getInt(i);
    }

    /** Arrival time of record i. */
    public long arrivalNanos(int i) {
        return arrivalNanos.getLong(i);
    }

    /** First time record i was scheduled, or -1. */
    public long firstScheduledNanos(int i) {
        return firstScheduledNanos.getLong(i);
    }

    /** Time of record i's first output token, or -1. */
    public long firstTokenNanos(int i) {
        return firstTokenNanos.getLong(i);
    }

    /** Time of record i's last output token, or -1. */
    public long lastTokenNanos(int i) {
        return lastTokenNanos.getLong(i);
    }

    /** Prompt tokens of record i. */
    public int inputTokens(int i) {
        return inputTokens.getInt(i);
    }

    /** Output tokens generated by record i. */
    public int outputTokens(int i) {
        return outputTokens.getInt(i);
    }

    /** Prompt tokens found in the prefix cache at record i's first admission. */
    public int cachedTokens(int i) {
        return cachedTokens.getInt(i);
    }

    /** Times record i was preempted. */
    public int preemptions(int i) {
        return preemptions.getInt(i);
    }

    /** Status of record i. */
    public RequestStatus status(int i) {
        return status.get(i);
    }

    /** The hint's worker of record i (the session's previous worker when the target differed), or -1. */
    public int hintWorker(int i) {
        return hintWorker.getInt(i);
    }

    /** The hint's rank of record i, or -1. */
    public int hintRank(int i) {
        return hintRank.getInt(i);
    }

    /** Leading prompt blocks the hinted rank held when record i was routed. */
    public int hintBlocks(int i) {
        return hintBlocks.getInt(i);
    }

    /** Whether record i was a migrated session turn. */
    public boolean migrated(int i) {
        return migrated.getInt(i) != 0;
    }

    /** Of record i's cached tokens at first admission, those loaded from G2 (the rest hit G1). */
    public int g2Tokens(int i) {
        return g2Tokens.getInt(i);
    }

    /** Of record i's cached tokens at first admission, those pulled from another worker (KVCR). */
    public int remoteTokens(int i) {
        return remoteTokens.getInt(i);
    }

    /** Staging-to-landing time of record i's KVCR pull, or -1. */
    public long pullNanos(int i) {
        return pullNanos.getLong(i);
    }

    /** The worker record i pulled from, or -1. */
    public int pullSource(int i) {
        return pullSource.getInt(i);
    }

    /** Record indices ordered by request id. */
    public int[] indicesByRequestId() {
        int n = size();
        int maxId = -1;
        for (int i = 0; i < n; i++) {
            maxId = Math.max(maxId, requestId.getInt(i));
        }
        int[] slot = new int[maxId + 1];
        java.util.Arrays.fill(slot, -1);
        for (int i = 0; i < n; i++) {
            slot[requestId.getInt(i)] = i;
        }
        int[] out = new int[n];
        int k = 0;
        for (int s : slot) {
            if (s >= 0) {
                out[k++] = s;
            }
        }
        return out;
    }
}
