package io.servesim.workload.trace;

import io.servesim.config.SharedPrefixConfig;
import io.servesim.config.TraceConfig;
import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Mix64;
import io.servesim.sim.Phase;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.LiveHashIds;
import io.servesim.workload.Request;
import io.servesim.workload.RequestSink;
import io.servesim.workload.Workload;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Replays a trace file, streamed: only rows not yet released are buffered, never the whole file.
 *
 * <p>Rows without a {@code session_id}, and the first row of each session, are <em>first turns</em>: with
 * {@code arrival: trace} they arrive at their timestamps (shifted so the first kept row arrives at 0 and divided
 * by {@code speedup}; they must be in time order), with {@code arrival: concurrency} a new one starts whenever one
 * of the {@code concurrency} active requests or sessions ends. Later rows of a session form a closed loop: a turn is
 * released when the previous turn completes plus its {@code delay} (0 when absent) divided by {@code speedup}; its
 * own timestamp is ignored. A session ends when no further row of it exists (the reader looks ahead, buffering what
 * it passes) or when one of its turns is rejected.
 *
 * <p>Prompt tokens: real token ids when the row has them; otherwise each hash id expands deterministically to
 * {@code block size} token ids (the same id always gives the same tokens, different ids different tokens), so
 * equal hash-id prefixes give equal engine block hashes at any engine block size; otherwise unique pseudo-random
 * tokens (a function of the run's seed, the request and the position; both are computed when read, and the block
 * hashes derive from the ids or the seed without expanding the tokens: {@code Request.promptHashes}), or, when
 * {@code shared_prefix} is set, a prompt keyed by the row's line L (so a time window replays the same content): the
 * first min({@code shared_prefix.tokens}, length) tokens of shared-prefix group (L mod {@code shared_prefix.groups})
 * then tokens drawn from L's own stream; with {@code repeat_period} P, a row as long as the row P lines earlier
 * takes that row's key (the same whole prompt).
 *
 * <p>Why one class of this size: streaming rows, the time window and speedup, session chaining (later turns wait for
 * the previous one) and closed-loop concurrency interleave on the same reader position and session table.
 */
public final class TraceWorkload implements Workload, EventHandler {
    private static final int FIRST_TURN = 1;
    private static final int NEXT_TURN = 2;
    /** Salts the run seed into the token seed of a lengths-only row's unique prompt. */
    static final long UNIQUE_PROMPT_SALT = 0x0A1C_9E5E_ED00_F00DL;

    private static final long SHARED_PREFIX_SEED = 0x5A4EDC0DEL;
    private static final int MAX_SAMPLES = 20;

    private final TraceConfig config;
    private final Path path;
    private final RandomStreams streams;
    private final boolean concurrencyMode;
    private final long startNanos;
    private final long endNanos;
    private final long limit;
    private final int attentionDp;
    private TraceReader reader;

    /** For each hash id, how many unfinished or future requests carry it ({@link #countHashIds}), or null. */
    private LiveHashIds liveHashIds;

    private EventQueue queue;
    private RequestSink sink;

    private final ArrayDeque<Pending> firstTurns = new ArrayDeque<>();
    private final Map<String, Session> sessionsByKey = new HashMap<>();
    private final Long2ObjectOpenHashMap<Session> sessionsById = new Long2ObjectOpenHashMap<>();
    private final Set<String> droppedSessions = new HashSet<>();
    private boolean eof;
    private boolean firstTurnsClosed;
    private long traceOrigin = -1;
    private long arrivalOrigin = -1;
    private long lastFirstTimestamp = Long.MIN_VALUE;
    private long rowsAccepted;
    private long nextSessionId;
    private int created;
    private long badLines;
    private final List<String> badSamples = new ArrayList<>();

    private record Pending(TraceRecord record, Session session) {}

    /** Sessions ended by a rejected turn whose later rows may still be read: each is recorded as abandoned. */
    private final Map<String, Session> abandonedSessions = new HashMap<>();

    private static final class Session {
        final long id;
        final String key;
        final ArrayDeque<TraceRecord> later = new ArrayDeque<>();
        int turns;
        TraceRecord next;
        Request last;

        Session(long id, String key) {
            this.id = id;
            this.key = key;
        }
    }

    /**
     * Creates the workload.
     *
     * @param config the trace options
     * @param path the resolved trace file
     * @param streams the run's random streams (unique prompts of rows without token or hash ids)
     */
    public TraceWorkload(TraceConfig config, Path path, RandomStreams streams) {
        this(config, path, streams, Integer.MAX_VALUE);
    }

    /**
     * Creates the workload for a cluster whose workers have {@code attentionDp} ranks (authored {@code dp_rank}
     * values must be below it).
     */
    public TraceWorkload(TraceConfig config, Path path, RandomStreams streams, int attentionDp) {
        this.attentionDp = attentionDp;
        this.config = config;
        this.path = path;
        this.streams = streams;
        this.concurrencyMode = config.arrival() == TraceConfig.Arrival.CONCURRENCY;
        this.startNanos = config.startMs() == null ? Long.MIN_VALUE : Math.round(config.startMs() * 1e6);
        this.endNanos = config.endMs() == null ? Long.MAX_VALUE : Math.round(config.endMs() * 1e6);
        this.limit = config.limit() == null ? Long.MAX_VALUE : config.limit();
    }

    @Override
    public void start(EventQueue eventQueue, RequestSink requestSink) {
        this.queue = eventQueue;
        this.sink = requestSink;
        Long2IntOpenHashMap rowsPerId = countHashIds();
        this.liveHashIds = rowsPerId == null ? null : new LiveHashIds(rowsPerId);
        this.reader = TraceFormats.open(config.format(), path, config.traceBlockSize());
        fillFirstTurns();
        if (firstTurns.isEmpty()) {
            reader.close();
            throw new TraceFormatException(path.getFileName() + ": the trace has no rows to replay"
                    + (badLines > 0 ? " (" + badLines + " malformed rows skipped)" : "")
                    + (config.startMs() != null || config.endMs() != null || config.limit() != null
                            ? " within start_ms/end_ms/limit"
                            : ""));
        }
        if (concurrencyMode) {
            queue.forbidRunAhead(); // each completion sends the next request
            for (int i = 0; i < config.concurrency(); i++) {
                queue.schedule(0, Phase.ARRIVAL, 0, this, FIRST_TURN, 0);
            }
        } else {
            scheduleNextFirstTurn();
        }
    }

    // ---- reading ------------------------------------------------------------------------------------------------

    /** Rows of a hash-id trace that {@link #countHashIds} reads at most; beyond it no block is known unique. */
    static final int MAX_COUNTED_ROWS = 500_000;

    /**
     * For a trace whose rows give hash ids (Mooncake, servesim's native format; both JSONL): how many rows each id
     * appears in, read in one streamed pass before the replay ({@link JsonLinesReader#countHashIds}), so that a
     * released row can tell from which of its hash blocks on no other unfinished or future row shares its prompt
     * ({@link LiveHashIds}, less each request as it ends; the engines then cache those blocks without indexing them).
     * Null for a format without hash ids, when the first row has none, or when more than {@link #MAX_COUNTED_ROWS}
     * rows have them. Malformed rows are left to the replay's own reading, which reports them.
     */
    private Long2IntOpenHashMap countHashIds() {
        if (!config.format().hashIds()) {
            return null;
        }
        return JsonLinesReader.countHashIds(path, MAX_COUNTED_ROWS);
    }

    private void fillFirstTurns() {
        while (firstTurns.isEmpty() && !eof) {
            readRow();
        }
    }

    /** Reads one row (skipping malformed ones when configured) and files it; sets {@code eof} at the end. */
    private void readRow() {
        TraceRecord r;
        try {
            r = reader.next();
        } catch (TraceFormatException e) {
            skipOrThrow(e);
            return;
        }
        if (r == null || rowsAccepted >= limit) {
            eof = true;
            reader.close();
            return;
        }
        if (r.dpRank() >= attentionDp) {
            skipOrThrow(TraceFormatException.field(
                    r.location(),
                    "dp_rank",
                    "is " + r.dpRank() + " but workers have only " + attentionDp
                            + " attention-DP ranks (cluster.attention_dp)"));
            return;
        }
        Session s = r.sessionId() == null ? null : sessionsByKey.get(r.sessionId());
        if (s != null) {
            rowsAccepted++;
            s.later.add(r);
            return;
        }
        if (r.sessionId() != null && droppedSessions.contains(r.sessionId())) {
            return;
        }
        Session ended = r.sessionId() == null ? null : abandonedSessions.get(r.sessionId());
        if (ended != null) {
            rowsAccepted++;
            abandon(r, ended);
            return;
        }
        acceptFirstTurn(r);
    }

    private void acceptFirstTurn(TraceRecord r) {
        if (firstTurnsClosed) {
            dropSession(r);
            return;
        }
        if (!concurrencyMode) {
            if (r.timestampNanos() < 0) {
                skipOrThrow(TraceFormatException.field(
                        r.location(),
                        "timestamp",
                        "is required for a request or first session turn with arrival: trace"));
                return;
            }
            if (r.timestampNanos() < lastFirstTimestamp) {
                skipOrThrow(TraceOrder.outOfOrder(r, lastFirstTimestamp));
                return;
            }
            lastFirstTimestamp = r.timestampNanos();
            if (traceOrigin < 0) {
                traceOrigin = r.timestampNanos();
            }
            long rel = r.timestampNanos() - traceOrigin;
            if (rel < startNanos) {
                dropSession(r);
                return;
            }
            if (rel >= endNanos) {
                firstTurnsClosed = true; // rows are in time order: no later first turn can be in the window
                dropSession(r);
                return;
            }
        }
        rowsAccepted++;
        Session s = null;
        if (r.sessionId() != null) {
            queue.forbidRunAhead(); // a finished turn now schedules the next: completions create arrivals
            s = new Session(nextSessionId++, r.sessionId());
            sessionsByKey.put(r.sessionId(), s);
            sessionsById.put(s.id, s);
        }
        firstTurns.add(new Pending(r, s));
    }

    private void dropSession(TraceRecord r) {
        if (r.sessionId() != null) {
            droppedSessions.add(r.sessionId());
        }
    }

    private void skipOrThrow(TraceFormatException e) {
        if (!config.skipBadLines()) {
            throw e;
        }
        badLines++;
        if (badSamples.size() < MAX_SAMPLES) {
            badSamples.add(e.getMessage());
        }
    }

    // ---- releasing ----------------------------------------------------------------------------------------------

    private void scheduleNextFirstTurn() {
        fillFirstTurns();
        Pending p = firstTurns.peek();
        if (p == null) {
            return;
        }
        long ts = p.record().timestampNanos();
        if (arrivalOrigin < 0) {
            arrivalOrigin = ts;
        }
        long at = Math.round((ts - arrivalOrigin) / config.speedup());
        queue.schedule(Math.max(at, queue.nowNanos()), Phase.ARRIVAL, 0, this, FIRST_TURN, 0);
    }

    @Override
    public void onEvent(int kind, long payload) {
        if (kind == FIRST_TURN) {
            fillFirstTurns();
            Pending p = firstTurns.poll();
            if (p == null) {
                return; // concurrency mode: the trace is exhausted
            }
            release(p.record(), p.session());
            if (!concurrencyMode) {
                scheduleNextFirstTurn();
            }
        } else {
            Session s = sessionsById.get(payload);
            TraceRecord r = s.next;
            s.next = null;
            release(r, s);
        }
    }

    private void release(TraceRecord r, Session s) {
        int id = created++;
        int output = outputLength(r);
        int turn = 0;
        long sessionId = -1;
        if (s != null) {
            turn = s.turns++;
            sessionId = s.id;
        }
        long outputSeed = Mix64.mix(streams.seed() ^ 0x5EED0CAFEL, id);
        Request req;
        if (r.inputTokenIds() == null && r.hashIds() != null) {
            // tokens expand from the ids when read; block hashes derive from the ids (Request.promptHashes)
            req = Request.ofHashIds(
                    id,
                    sessionId,
                    turn,
                    s == null,
                    queue.nowNanos(),
                    r.hashIds(),
                    r.hashBlockSize(),
                    r.inputLength(),
                    output,
                    outputSeed,
                    r.outputTokenIds(),
                    Math.max(-1, r.dpRank()));
            if (s == null && liveHashIds != null) {
                req.trackLiveHashIds(liveHashIds);
            }
        } else if (r.inputTokenIds() == null && config.sharedPrefix() == null) {
            // lengths only: unique tokens, expanded when read; block hashes derive from the seed (Request)
            long seed = Mix64.mix(streams.seed() ^ UNIQUE_PROMPT_SALT, id);
            req = Request.ofUniqueTokens(
                    id,
                    sessionId,
                    turn,
                    s == null,
                    queue.nowNanos(),
                    seed == 0 ? 1 : seed,
                    r.inputLength(),
                    output,
                    outputSeed,
                    r.outputTokenIds(),
                    Math.max(-1, r.dpRank()));
        } else {
            int[] prompt = promptOf(r);
            req = new Request(
                    id,
                    sessionId,
                    turn,
                    s == null,
                    queue.nowNanos(),
                    prompt,
                    0,
                    prompt.length,
                    output,
                    outputSeed,
                    r.outputTokenIds(),
                    Math.max(-1, r.dpRank()),
                    false);
        }
        if (s != null) {
            s.last = req;
        }
        sink.submit(req);
    }

    /** The row's token ids, or (with {@code shared_prefix}) its prompt keyed by line: its group's prefix, then own. */
    private int[] promptOf(TraceRecord r) {
        if (r.inputTokenIds() != null) {
            return r.inputTokenIds();
        }
        int n = r.inputLength();
        int[] p = new int[n];
        SharedPrefixConfig shared = config.sharedPrefix();
        long key = promptKey(r.line(), n, shared.repeatPeriod());
        int common = Math.min(n, shared.tokens());
        long group = key % shared.groups();
        for (int i = 0; i < common; i++) {
            p[i] = sharedPrefixToken(group, i);
        }
        SplittableRandom rng = streams.stream(RandomStreams.REQUESTS, key);
        for (int i = common; i < n; i++) {
            p[i] = rng.nextInt(Request.VOCAB);
        }
        return p;
    }

    /**
     * The identity of line {@code line}'s prompt: the key of the line {@code period} lines earlier when that line was
     * seen and had the same length, else the line itself (rows outside a replayed time window are not seen, so the
     * chain restarts there).
     */
    private long promptKey(long line, int length, Integer period) {
        if (period == null) {
            return line;
        }
        if (repeatLines == null) {
            repeatLines = new long[period];
            repeatLengths = new int[period];
            repeatKeys = new long[period];
            java.util.Arrays.fill(repeatLines, -1);
        }
        int slot = (int) (line % period);
        long key = repeatLines[slot] == line - period && repeatLengths[slot] == length ? repeatKeys[slot] : line;
        repeatLines[slot] = line;
        repeatLengths[slot] = length;
        repeatKeys[slot] = key;
        return key;
    }

    private long[] repeatLines;
    private int[] repeatLengths;
    private long[] repeatKeys;

    /** Token j of shared-prefix group {@code group} ({@code workload.trace.shared_prefix}). */
    static int sharedPrefixToken(long group, int j) {
        return (int) ((Mix64.mix(SHARED_PREFIX_SEED ^ group, j) >>> 1) % Request.VOCAB);
    }

    @Override
    public void onRequestLost(Request request) {
        onRequestDone(request, 0, true); // its session's later rows are abandoned, not lost (bounded by the rows)
    }

    @Override
    public void onRequestDone(Request request, int generatedTokens, boolean rejected) {
        request.ended(); // it looks none of its hash ids up again (LiveHashIds)
        long now = queue.nowNanos();
        if (request.sessionId() < 0) {
            if (concurrencyMode) {
                queue.schedule(now, Phase.ARRIVAL, 0, this, FIRST_TURN, 0);
            }
            return;
        }
        Session s = sessionsById.get(request.sessionId());
        if (s == null || s.last != request) {
            return;
        }
        if (!rejected) {
            while (s.later.isEmpty() && !eof) {
                readRow(); // look ahead for this session's next row, buffering what we pass
            }
        }
        if (rejected || s.later.isEmpty()) {
            endSession(s, rejected);
            return;
        }
        TraceRecord next = s.later.poll();
        s.next = next;
        long delay = next.delayNanos() < 0 ? 0 : Math.round(next.delayNanos() / config.speedup());
        queue.schedule(now + delay, Phase.ARRIVAL, s.id + 1, this, NEXT_TURN, s.id);
    }

    private void endSession(Session s, boolean rejected) {
        sessionsByKey.remove(s.key);
        sessionsById.remove(s.id);
        if (rejected) {
            // its later turns are never sent: each is recorded as abandoned, now or when its row is read
            for (TraceRecord r : s.later) {
                abandon(r, s);
            }
            s.later.clear();
            if (!eof) {
                abandonedSessions.put(s.key, s);
            }
        }
        sink.sessionEnded(s.id);
        if (concurrencyMode) {
            queue.schedule(queue.nowNanos(), Phase.ARRIVAL, 0, this, FIRST_TURN, 0);
        }
    }

    /** The row's output length after {@code output_tokens_override} / {@code output_tokens_cap}. */
    private int outputLength(TraceRecord r) {
        if (config.outputTokensOverride() != null) {
            return config.outputTokensOverride();
        }
        int output = r.outputLength();
        return config.outputTokensCap() != null ? Math.min(output, config.outputTokensCap()) : output;
    }

    /** Records a row of a session ended by a rejection as an abandoned request (it gets an id; it is never sent). */
    private void abandon(TraceRecord r, Session s) {
        int id = created++;
        long seed = Mix64.mix(streams.seed() ^ UNIQUE_PROMPT_SALT, id);
        sink.abandoned(Request.ofUniqueTokens(
                id,
                s.id,
                s.turns++,
                false,
                queue.nowNanos(),
                seed == 0 ? 1 : seed,
                r.inputLength(),
                outputLength(r),
                0,
                r.outputTokenIds(),
                -1));
    }

    @Override
    public int requestsCreated() {
        return created;
    }

    @Override
    public long badLinesSkipped() {
        return badLines;
    }

    @Override
    public List<String> badLineSamples() {
        return List.copyOf(badSamples);
    }
}
