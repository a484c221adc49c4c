package io.servesim.workload;

import io.servesim.config.ArrivalConfig;
import io.servesim.config.SessionsConfig;
import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;
import io.servesim.sim.RandomStreams;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.SplittableRandom;

/**
 * Synthetic multi-turn sessions (chat): sessions start open loop (Poisson or constant rate) or closed loop (a fixed
 * number of active sessions); turns within a session are closed loop: turn k+1 arrives {@code think_time_ms} after
 * turn k completes, and its prompt is turn k's prompt + turn k's generated tokens + new tokens, so it hits the
 * prefix cache of the worker that served turn k. Each session draws from its own random stream in turn order.
 * A rejected turn ends its session.
 */
public final class SessionWorkload implements Workload, EventHandler {
    private static final int START_SESSION = 1;
    private static final int NEXT_TURN = 2;

    private final SessionsConfig config;
    private final ArrivalConfig arrival;
    private final RandomStreams streams;
    private final SplittableRandom arrivalRng;
    private final Prompts prompts;
    private final long maxSessions;
    private final long horizonNanos;
    private final Long2ObjectOpenHashMap<Session> active = new Long2ObjectOpenHashMap<>();
    private EventQueue queue;
    private RequestSink sink;
    private long sessionsStarted;
    private int created;
    private int tailBlockSize; // > 0: each turn keeps only its prompt's tail (keepTokensAfterHashing)

    private static final class Session {
        final long id;
        final SplittableRandom rng;
        int nextTurn;
        int[] tokens; // every turn's prompt is a prefix of this (reallocated when it grows), from tokensFrom on
        int tokensFrom; // the prompt position tokens[0] holds (0 unless turns keep only their tails)
        int length; // the latest turn's prompt length
        Request lastRequest;
        int lastGenerated;

        Session(long id, SplittableRandom rng) {
            this.id = id;
            this.rng = rng;
        }
    }

    /** Creates the workload for one run. */
    public SessionWorkload(SessionsConfig config, ArrivalConfig arrival, RandomStreams streams) {
        this.config = config;
        this.arrival = arrival;
        this.streams = streams;
        this.arrivalRng = streams.stream(RandomStreams.ARRIVALS, 0);
        this.prompts = new Prompts(streams, config.sharedPrefixTokens(), config.prefixGroups());
        this.maxSessions = config.sessions() == null ? Long.MAX_VALUE : config.sessions();
        this.horizonNanos = config.durationS() == null ? Long.MAX_VALUE : Math.round(config.durationS() * 1e9);
    }

    @Override
    public void start(EventQueue eventQueue, RequestSink requestSink) {
        this.queue = eventQueue;
        this.sink = requestSink;
        queue.forbidRunAhead(); // a finished turn schedules the session's next one
        switch (arrival.type()) {
            case CONCURRENCY -> {
                long n = Math.min(arrival.concurrency(), maxSessions);
                for (long i = 0; i < n; i++) {
                    queue.schedule(arrival.clientStartNanos(i, n), Phase.ARRIVAL, 0, this, START_SESSION, 0);
                }
            }
            case POISSON -> scheduleStart(Distributions.exponentialGapNanos(arrivalRng, arrival.rate()));
            case CONSTANT -> scheduleStart(0);
        }
    }

    private void scheduleStart(long atNanos) {
        if (atNanos <= horizonNanos) {
            queue.schedule(atNanos, Phase.ARRIVAL, 0, this, START_SESSION, 0);
        }
    }

    @Override
    public void onEvent(int kind, long payload) {
        long now = queue.nowNanos();
        if (kind == START_SESSION) {
            if (sessionsStarted >= maxSessions) {
                return;
            }
            long id = sessionsStarted++;
            Session s = new Session(id, streams.stream(RandomStreams.SESSIONS, id));
            active.put(id, s);
            if (sessionsStarted < maxSessions) {
                switch (arrival.type()) {
                    case POISSON -> scheduleStart(now + Distributions.exponentialGapNanos(arrivalRng, arrival.rate()));
                    case CONSTANT -> scheduleStart(Math.round(sessionsStarted * 1e9 / arrival.rate()));
                    case CONCURRENCY -> {
                        // closed loop: a new session starts when one ends
                    }
                }
            }
            releaseTurn(s, now);
        } else {
            Session s = active.get(payload);
            releaseTurn(s, now);
        }
    }

    private void releaseTurn(Session s, long now) {
        int turn = s.nextTurn++;
        SplittableRandom rng = s.rng;
        int length;
        if (turn == 0) {
            int input = (int) Math.min(
                    (long) io.servesim.config.DistributionConfig.MAX_TOKENS,
                    Distributions.sample(config.firstInputTokens(), rng, 1));
            // room for the expected whole session, so later turns append without copying (sizing only: results
            // do not depend on it)
            double perTurn = Math.max(0, Distributions.mean(config.newInputTokens()))
                    + Math.max(0, Distributions.mean(config.outputTokens()));
            long expected = input + (long) Math.ceil(perTurn * (config.turns() - 1));
            boolean room = tailBlockSize == 0 && expected > input && expected < (1 << 24);
            s.tokens = prompts.build(s.id, input, room ? (int) expected : input, rng);
            length = input;
        } else {
            // this prompt = previous prompt + its output + new tokens: appended to the session's one buffer, or, when
            // turns keep only their tails, in a new array from the previous prompt's last full block on (the blocks
            // before it are hashed already, and their hashes are reused)
            Request prev = s.lastRequest;
            int generated = s.lastGenerated;
            int fresh = (int) Math.min(
                    (long) io.servesim.config.DistributionConfig.MAX_TOKENS,
                    Distributions.sample(config.newInputTokens(), rng, 0));
            int base = s.length;
            length = base + generated + fresh;
            if (tailBlockSize > 0) {
                int from = base / tailBlockSize * tailBlockSize;
                int[] tail = new int[length - from];
                System.arraycopy(s.tokens, from - s.tokensFrom, tail, 0, base - from);
                s.tokens = tail;
                s.tokensFrom = from;
            } else if (length > s.tokens.length) {
                s.tokens = java.util.Arrays.copyOf(s.tokens, Math.max(length, s.tokens.length * 2));
            }
            int[] buf = s.tokens;
            int at = base - s.tokensFrom;
            for (int i = 0; i < generated; i++) {
                buf[at + i] = prev.outputToken(i);
            }
            for (int i = at + generated; i < length - s.tokensFrom; i++) {
                buf[i] = rng.nextInt(Request.VOCAB);
            }
        }
        int output = (int) Math.min(
                (long) io.servesim.config.DistributionConfig.MAX_TOKENS,
                Distributions.sample(config.outputTokens(), rng, 1));
        long outputSeed = rng.nextLong();
        boolean last = turn == config.turns() - 1;
        boolean migrate =
                turn > 0 && config.migrateFraction() > 0 && migrates(streams, s.id, turn, config.migrateFraction());
        Request r = new Request(
                created++,
                s.id,
                turn,
                last,
                now,
                s.tokens,
                s.tokensFrom,
                length,
                output,
                outputSeed,
                null,
                -1,
                migrate);
        if (turn > 0) {
            r.extendsPromptOf(s.lastRequest); // the shared buffer: this prompt starts with the previous one
        }
        if (!last) {
            r.promptWillBeExtended();
        }
        s.length = length;
        s.lastRequest = r;
        sink.submit(r);
    }

    @Override
    public void onRequestLost(Request request) {
        Session s = active.get(request.sessionId());
        if (s == null || s.lastRequest != request) {
            return;
        }
        // as after a rejection, except that a closed loop starts no new session into a fleet with no worker (it
        // would be rejected at the same instant, again and again)
        abandonRest(s, request, queue.nowNanos());
        active.remove(s.id);
        sink.sessionEnded(s.id);
    }

    @Override
    public void onRequestDone(Request request, int generatedTokens, boolean rejected) {
        Session s = active.get(request.sessionId());
        if (s == null || s.lastRequest != request) {
            return;
        }
        long now = queue.nowNanos();
        if (rejected || request.lastTurn()) {
            if (rejected) {
                abandonRest(s, request, now);
            }
            active.remove(s.id);
            sink.sessionEnded(s.id);
            if (arrival.type() == ArrivalConfig.Type.CONCURRENCY
                    && sessionsStarted < maxSessions
                    && now <= horizonNanos) {
                queue.schedule(now, Phase.ARRIVAL, 0, this, START_SESSION, 0);
            }
            return;
        }
        s.lastGenerated = generatedTokens;
        long think = Math.round(Distributions.sampleDouble(config.thinkTimeMs(), s.rng) * 1e6);
        queue.schedule(now + think, Phase.ARRIVAL, s.id + 1, this, NEXT_TURN, s.id);
    }

    /**
     * A turn of {@code s} was rejected (its prompt too long, or no worker left): the session's later turns will never
     * be sent, and each is recorded now as an abandoned request, so every configured turn is accounted for (as a
     * trace row would be). Their lengths are drawn from the session's own stream, which nothing else reads once the
     * session ends: a new-input draw and an output draw per turn, the prompt growing as if each unsent turn had
     * generated its requested output.
     */
    private void abandonRest(Session s, Request rejected, long now) {
        int length = rejected.promptLength();
        int output = rejected.outputTokens();
        for (int turn = s.nextTurn; turn < config.turns(); turn++) {
            int fresh = (int) Math.min(
                    (long) io.servesim.config.DistributionConfig.MAX_TOKENS,
                    Distributions.sample(config.newInputTokens(), s.rng, 0));
            length = (int) Math.min(Integer.MAX_VALUE, (long) length + output + fresh);
            output = (int) Math.min(
                    (long) io.servesim.config.DistributionConfig.MAX_TOKENS,
                    Distributions.sample(config.outputTokens(), s.rng, 1));
            int id = created++;
            long seed = io.servesim.sim.Mix64.mix(streams.seed() ^ ABANDONED_PROMPT_SALT, id);
            sink.abandoned(Request.ofUniqueTokens(
                    id,
                    s.id,
                    turn,
                    turn == config.turns() - 1,
                    now,
                    seed == 0 ? 1 : seed,
                    length,
                    output,
                    0,
                    null,
                    -1));
        }
        s.nextTurn = config.turns();
    }

    private static final long ABANDONED_PROMPT_SALT = 0xABA4D0EDL;

    /** Whether follow-up {@code turn} of {@code session} migrates: its own seeded draw is below the fraction. */
    public static boolean migrates(RandomStreams streams, long session, int turn, double fraction) {
        return streams.stream(RandomStreams.MIGRATION, io.servesim.sim.Mix64.mix(session, turn))
                        .nextDouble()
                < fraction;
    }

    @Override
    public int requestsCreated() {
        return created;
    }

    /**
     * Keeps only each turn's prompt tail from the second turn on: the previous prompt's tokens after its last full
     * block of {@code blockSize}, the previous output and the new tokens (a turn's blocks before that are hashed
     * already and reused: Request's {@code tokensFrom}). Same tokens and random draws as keeping everything, so
     * the same results; a session then holds about one turn of tokens instead of its whole conversation (at thousands
     * of workers these buffers were most of the live heap, and the collector copied them).
     */
    @Override
    public void keepTokensAfterHashing(int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size " + blockSize);
        }
        if (sessionsStarted > 0) {
            throw new IllegalStateException("sessions already started");
        }
        this.tailBlockSize = blockSize;
    }
}
