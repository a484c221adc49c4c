package io.servesim.metrics;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;

/**
 * Final per-request records, stored column-wise (struct of arrays) in the order requests finished. Times are
 * virtual nanoseconds; -1 marks "never happened" (e.g. no first token for a rejected request).
 *
 * <p>Columns that most runs leave at one value (sessions, preemptions, G2 and KVCR facts, hints, restarts, P/D facts)
 * hold no array until a record differs from that value, and the status is one byte: a run without sessions, tiers or
 * failures keeps about 60 bytes per request instead of about 125 (what lets a 2 M-row trace replay in a 256 MB heap).
 */
public final class RequestLog {
    private final IntArrayList requestId = new IntArrayList();
    private final SparseLongs sessionId = new SparseLongs(-1L);
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
    private final SparseInts preemptions = new SparseInts(0);
    private byte[] status = new byte[16]; // ordinals; the first size() are used
    private final SparseInts g2Tokens = new SparseInts(0);
    private final SparseInts remoteTokens = new SparseInts(0);
    private final SparseLongs pullNanos = new SparseLongs(-1L);
    private final SparseInts pullSource = new SparseInts(-1);
    private final SparseInts hintWorker = new SparseInts(-1);
    private final SparseInts hintRank = new SparseInts(-1);
    private final SparseInts hintBlocks = new SparseInts(0);
    private final SparseInts migrated = new SparseInts(0);
    private final SparseInts restarts = new SparseInts(0);
    private final SparseObjects<PdFacts> pd = new SparseObjects<>();
    private static final RequestStatus[] STATUSES = RequestStatus.values();
    private boolean disaggregated;

    /** Appends one finished request. */
    @SuppressWarnings("EnumOrdinal") // the ordinal indexes STATUSES in memory only; it is never written out
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
        int at = requestId.size() - 1; // this record's index (requestId was appended above)
        if (at == status.length) {
            status = java.util.Arrays.copyOf(status, at + (at >> 1) + 16);
        }
        status[at] = (byte) r.status().ordinal();
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

    private String[] poolByWorker;

    /** Sets each worker's pool name (requests.csv's {@code pool} column), or null for none. */
    public void poolNames(String[] byWorker) {
        this.poolByWorker = byWorker == null ? null : byWorker.clone();
    }

    /** Each worker's pool name, or null when the run has no {@code pool} column. */
    public String[] poolNames() {
        return poolByWorker == null ? null : poolByWorker.clone();
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
                sessionId.get(i),
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
                g2Tokens.get(i),
                remoteTokens.get(i),
                preemptions.get(i),
                STATUSES[status[java.util.Objects.checkIndex(i, size())]],
                hintWorker.get(i),
                hintRank.get(i),
                hintBlocks.get(i),
                migrated.get(i) != 0,
                pullNanos.get(i),
                pullSource.get(i),
                restarts.get(i),
                pd.get(i));
    }

    /** Every record, in request-id order. */
    public java.util.stream.Stream<RequestRecord> byRequestId() {
        return java.util.Arrays.stream(indicesByRequestId()).mapToObj(this::get);
    }

    /** Times record i restarted from scratch because its worker failed. */
    public int restarts(int i) {
        return restarts.get(i);
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
        return sessionId.get(i);
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
        return preemptions.get(i);
    }

    /** Status of record i. */
    public RequestStatus status(int i) {
        return STATUSES[status[java.util.Objects.checkIndex(i, size())]];
    }

    /** The hint's worker of record i (the session's previous worker when the target differed), or -1. */
    public int hintWorker(int i) {
        return hintWorker.get(i);
    }

    /** The hint's rank of record i, or -1. */
    public int hintRank(int i) {
        return hintRank.get(i);
    }

    /** Leading prompt blocks the hinted rank held when record i was routed. */
    public int hintBlocks(int i) {
        return hintBlocks.get(i);
    }

    /** Whether record i was a migrated session turn. */
    public boolean migrated(int i) {
        return migrated.get(i) != 0;
    }

    /** Of record i's cached tokens at first admission, those loaded from G2 (the rest hit G1). */
    public int g2Tokens(int i) {
        return g2Tokens.get(i);
    }

    /** Of record i's cached tokens at first admission, those pulled from another worker (KVCR). */
    public int remoteTokens(int i) {
        return remoteTokens.get(i);
    }

    /** Staging-to-landing time of record i's KVCR pull, or -1. */
    public long pullNanos(int i) {
        return pullNanos.get(i);
    }

    /** The worker record i pulled from, or -1. */
    public int pullSource(int i) {
        return pullSource.get(i);
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

    /** An int column that holds no array while every value equals its default. */
    private static final class SparseInts {
        private final int defaultValue;
        private IntArrayList values;
        private int size;

        SparseInts(int defaultValue) {
            this.defaultValue = defaultValue;
        }

        void add(int v) {
            if (values == null) {
                if (v == defaultValue) {
                    size++;
                    return;
                }
                values = new IntArrayList(Math.max(16, size + 1));
                values.size(size);
                java.util.Arrays.fill(values.elements(), 0, size, defaultValue);
            }
            values.add(v);
            size++;
        }

        int get(int i) {
            java.util.Objects.checkIndex(i, size);
            return values == null ? defaultValue : values.getInt(i);
        }
    }

    /** A long column that holds no array while every value equals its default. */
    private static final class SparseLongs {
        private final long defaultValue;
        private LongArrayList values;
        private int size;

        SparseLongs(long defaultValue) {
            this.defaultValue = defaultValue;
        }

        void add(long v) {
            if (values == null) {
                if (v == defaultValue) {
                    size++;
                    return;
                }
                values = new LongArrayList(Math.max(16, size + 1));
                values.size(size);
                java.util.Arrays.fill(values.elements(), 0, size, defaultValue);
            }
            values.add(v);
            size++;
        }

        long get(int i) {
            java.util.Objects.checkIndex(i, size);
            return values == null ? defaultValue : values.getLong(i);
        }
    }

    /** An object column that holds no array while every value is null. */
    private static final class SparseObjects<T> {
        private it.unimi.dsi.fastutil.objects.ObjectArrayList<T> values;
        private int size;

        void add(T v) {
            if (values == null) {
                if (v == null) {
                    size++;
                    return;
                }
                values = new it.unimi.dsi.fastutil.objects.ObjectArrayList<>(Math.max(16, size + 1));
                values.size(size);
            }
            values.add(v);
            size++;
        }

        T get(int i) {
            java.util.Objects.checkIndex(i, size);
            return values == null ? null : values.get(i);
        }
    }
}
