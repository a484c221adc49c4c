package io.servesim.workload;

import io.servesim.config.ArrivalConfig;
import io.servesim.config.SyntheticConfig;
import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;
import io.servesim.sim.RandomStreams;
import java.util.SplittableRandom;

/**
 * Independent synthetic requests arriving open loop (Poisson or constant rate) or closed loop (a fixed number in
 * flight). Only the next arrival is ever scheduled, so memory does not grow with the request count. Request i's
 * lengths and tokens come from its own random stream, so they do not depend on timing.
 */
public final class SyntheticWorkload implements Workload, EventHandler {
    private static final int ARRIVE = 1;
    private static final long STABLE_ID = 0;

    private final SyntheticConfig config;
    private final ArrivalConfig arrival;
    private final RandomStreams streams;
    private final SplittableRandom arrivalRng;
    private final Prompts prompts;
    private final long maxRequests;
    private final long horizonNanos;
    private EventQueue queue;
    private RequestSink sink;
    private int created;
    private long rejectStreak;
    private long rejectStreakNanos = -1;

    /**
     * Rejections in a row at one virtual instant after which a closed loop is declared unable to progress: a rejected
     * request costs no time, so a loop whose every request is rejected would re-issue at the same instant forever.
     */
    static final long MAX_REJECT_STREAK = 100_000;

    /** Sampled lengths are capped here (a long-tailed distribution's rare sample included). */
    private static final long MAX_TOKENS = (long) io.servesim.config.DistributionConfig.MAX_TOKENS;

    /** Creates the workload for one run. */
    public SyntheticWorkload(SyntheticConfig config, ArrivalConfig arrival, RandomStreams streams) {
        this.config = config;
        this.arrival = arrival;
        this.streams = streams;
        this.arrivalRng = streams.stream(RandomStreams.ARRIVALS, 0);
        this.prompts = new Prompts(streams, config.sharedPrefixTokens(), config.prefixGroups());
        this.maxRequests = config.requests() == null ? Long.MAX_VALUE : config.requests();
        this.horizonNanos = config.durationS() == null ? Long.MAX_VALUE : Math.round(config.durationS() * 1e9);
    }

    @Override
    public void start(EventQueue eventQueue, RequestSink requestSink) {
        this.queue = eventQueue;
        this.sink = requestSink;
        switch (arrival.type()) {
            case CONCURRENCY -> {
                queue.forbidRunAhead(); // each completion sends the next request
                long n = Math.min(arrival.concurrency(), maxRequests);
                for (long i = 0; i < n; i++) {
                    queue.schedule(arrival.clientStartNanos(i, n), Phase.ARRIVAL, STABLE_ID, this, ARRIVE, 0);
                }
            }
            case POISSON -> scheduleAt(Distributions.exponentialGapNanos(arrivalRng, arrival.rate()));
            case CONSTANT -> scheduleAt(0);
        }
    }

    private void scheduleAt(long atNanos) {
        if (atNanos <= horizonNanos) {
            queue.schedule(atNanos, Phase.ARRIVAL, STABLE_ID, this, ARRIVE, 0);
        }
    }

    @Override
    public void onEvent(int kind, long payload) {
        if (created >= maxRequests) {
            return;
        }
        long now = queue.nowNanos();
        int id = created++;
        SplittableRandom rng = streams.stream(RandomStreams.REQUESTS, id);
        int input = (int) Math.min(MAX_TOKENS, Distributions.sample(config.inputTokens(), rng, 1));
        int output = (int) Math.min(MAX_TOKENS, Distributions.sample(config.outputTokens(), rng, 1));
        long outputSeed = rng.nextLong();
        int[] prompt = prompts.build(id, input, rng);
        Request request = new Request(id, -1, 0, true, now, prompt, output, outputSeed);
        if (created < maxRequests) {
            switch (arrival.type()) {
                case POISSON -> scheduleAt(now + Distributions.exponentialGapNanos(arrivalRng, arrival.rate()));
                case CONSTANT -> scheduleAt(Math.round(created * 1e9 / arrival.rate()));
                case CONCURRENCY -> {
                    // closed loop: the next request is released when one finishes
                }
            }
        }
        sink.submit(request);
    }

    @Override
    public void onRequestDone(Request request, int generatedTokens, boolean rejected) {
        if (arrival.type() == ArrivalConfig.Type.CONCURRENCY
                && created < maxRequests
                && queue.nowNanos() <= horizonNanos) {
            long now = queue.nowNanos();
            if (rejected) {
                rejectStreak = now == rejectStreakNanos ? rejectStreak + 1 : 1;
                rejectStreakNanos = now;
                if (rejectStreak > Math.max(MAX_REJECT_STREAK, 100L * arrival.concurrency())) {
                    throw new io.servesim.config.ConfigException(
                            "workload.arrival",
                            "the closed loop (type: concurrency) cannot progress: " + rejectStreak
                                    + " requests in a row were rejected at t=" + now / 1_000_000 + " ms without"
                                    + " virtual time advancing (are the prompts longer than engine.max_model_len?);"
                                    + " fix the lengths, or bound the loop with workload.synthetic.requests");
                }
            } else {
                rejectStreak = 0;
            }
            queue.schedule(now, Phase.ARRIVAL, STABLE_ID, this, ARRIVE, 0);
        }
    }

    @Override
    public int requestsCreated() {
        return created;
    }
}
