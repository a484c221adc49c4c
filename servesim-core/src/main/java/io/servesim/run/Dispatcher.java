package io.servesim.run;

import io.servesim.engine.EngineRank;
import io.servesim.engine.RoutingDecision;
import io.servesim.engine.Sequence;
import io.servesim.workload.Request;
import io.servesim.workload.RequestSink;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;

/**
 * Places arriving requests: asks the router (or, for a migrating session turn, the router excluding the session's
 * previous worker), steps around failed workers, lets an authored {@code dp_rank} choose the rank, computes the
 * hint (where the session's previous turn ran and how much of this prompt that rank still holds), and hands the
 * engine the request with an immutable {@link RoutingDecision}. Requests orphaned by a failed worker come back here
 * and start over.
 */
final class Dispatcher implements RequestSink {
    private final Cluster cluster;
    private final RouterGroup group;
    private final io.servesim.engine.PdTransfers pd;
    private final int maxLocalPrefillTokens;
    private int nextHandoff;
    private final RunRecorder recorder;
    private final Long2IntOpenHashMap sessionRank = new Long2IntOpenHashMap();
    private final long[] workerRequests;
    private final io.servesim.sim.EventQueue queue;
    private java.util.function.Consumer<Request> lost = r -> {};
    private java.util.function.Consumer<Request> timedOut = r -> {};
    private final long clientTimeoutNanos;
    private final ClientDeadlines deadlines;

    /** Who hears of a request that reached no worker (the workload: {@code Workload.onRequestLost}). */
    void onLost(java.util.function.Consumer<Request> listener) {
        this.lost = listener;
    }

    /** Who hears of a request whose client gave up on it (the workload: it ends as a rejected one does). */
    void onTimedOut(java.util.function.Consumer<Request> listener) {
        this.timedOut = listener;
    }

    Dispatcher(
            Cluster cluster,
            RunRecorder recorder,
            io.servesim.sim.EventQueue queue,
            long clientTimeoutNanos,
            boolean workersMayFail) {
        this.cluster = cluster;
        this.clientTimeoutNanos = clientTimeoutNanos;
        this.deadlines = new ClientDeadlines(workersMayFail);
        this.queue = queue;
        this.group = cluster.groups()[0];
        this.pd = cluster.pd();
        this.maxLocalPrefillTokens = cluster.maxLocalPrefillTokens();
        this.recorder = recorder;
        this.workerRequests = new long[cluster.numWorkers()];
        sessionRank.defaultReturnValue(-1);
    }

    @Override
    public void submit(Request request) {
        dispatch(request, RoutingDecision.NONE, 0);
    }

    @Override
    public void abandoned(Request request) {
        recorder.abandoned(request, queue.nowNanos());
    }

    @Override
    public void sessionEnded(long sessionId) {
        for (RouterGroup g : cluster.groups()) {
            g.router().onSessionEnded(sessionId);
        }
        sessionRank.remove(sessionId);
    }

    /**
     * Requests of a failed worker start over elsewhere, in request-id order (their clients retry), keeping their
     * arrival times so the lost work shows in their latency.
     */
    void restart(ObjectArrayList<Sequence> orphans) {
        orphans.sort((a, b) -> Integer.compare(a.request().id(), b.request().id()));
        for (Sequence s : orphans) {
            deadlines.restarted(s.request()); // its client retries: a new request, a new deadline
            dispatch(s.request(), s.routing(), s.routing().restarts() + 1);
        }
    }

    /** Requests routed to each worker so far. */
    long[] workerRequests() {
        return workerRequests.clone();
    }

    /** Routes {@code request}; {@code previous} is its last decision if it is starting over, else NONE. */
    private void dispatch(Request request, RoutingDecision previous, int restarts) {
        if (pd != null) {
            dispatchDisaggregated(request, previous, restarts);
            return;
        }
        if (cluster.acceptingWorkers() == 0) {
            // every worker failed or drains: nothing takes new work (a router would fall back to a draining one)
            recorder.rejectedNoWorker(request, previous.unplaced(restarts), queue.nowNanos());
            lost.accept(request); // a session's later turns are abandoned, not lost
            return;
        }
        int dp = cluster.ranksPerWorker();
        long session = request.sessionId();
        int before = session >= 0 ? sessionRank.get(session) : -1;
        if (before >= 0 && cluster.isFailed(before / dp)) {
            before = -1; // the session's worker failed: its cache is gone, there is nothing to hint or avoid
        }
        long[] hashes = cluster.dispatchHashes(request);
        boolean migrating = request.migrate() && before >= 0 && cluster.numWorkers() > 1;
        int g = migrating ? group.routeExcluding(request, hashes, before / dp) : group.route(request, hashes);
        if (cluster.isFailed(g / dp)) {
            // every live worker drains or is excluded, so the router fell back to a failed one: take the next live
            // worker instead (only reached in that corner, so the scan does not cost per request)
            int w = g / dp;
            do {
                w = (w + 1) % cluster.numWorkers();
            } while (cluster.isFailed(w));
            g = w * dp + g % dp;
        }
        if (request.dpRank() >= 0) {
            // an authored dp_rank wins over the router's rank choice (the router still picks the worker)
            g = (g / dp) * dp + request.dpRank();
        }
        RoutingDecision decision;
        if (before >= 0 && before / dp != g / dp) {
            // the hint: where the session's previous turn ran, and how much of this prompt that rank still holds
            int held = cluster.rank(before).cachedPrefixBlocks(hashes);
            decision = new RoutingDecision(g / dp, g % dp, migrating, before / dp, before % dp, held, restarts);
        } else {
            decision = new RoutingDecision(g / dp, g % dp, false, -1, -1, 0, restarts);
        }
        if (session >= 0) {
            sessionRank.put(session, g);
        }
        EngineRank rank = cluster.rank(g);
        workerRequests[rank.workerId()]++;
        Sequence s = rank.submit(request, decision, hashes);
        if (clientTimeoutNanos > 0 && s != null) {
            deadlines.watch(rank, s, deadlineNanos(request, restarts), null);
        }
    }

    /** Deadline events in the queue now (0 or 1): they stand for no work ({@link ClientDeadlines}). */
    int deadlineEvents() {
        return deadlines.armed ? 1 : 0;
    }

    /**
     * A request's client deadline: when its client gives up, and the rank holding it as that rank holds it (in a
     * disaggregated cluster its prefill side, then its decode side).
     */
    private static final class Deadline {
        final long nanos;
        final io.servesim.engine.Handoff handoff;
        EngineRank rank;
        Sequence sequence;
        boolean retried; // its worker failed and the request started over under a new deadline

        Deadline(EngineRank rank, Sequence sequence, long nanos, io.servesim.engine.Handoff handoff) {
            this.rank = rank;
            this.sequence = sequence;
            this.nanos = nanos;
            this.handoff = handoff;
        }
    }

    /**
     * The clients' deadlines ({@code workload.client_timeout_s}): a request not finished by its deadline is given up
     * by its client — recorded as timed out with what it had received, heard of by the workload as a rejected one
     * (a session ends there; a closed loop sends its next request), and aborted by its rank. Requests are dispatched
     * when they arrive and every deadline is arrival plus the one timeout, so deadlines come in dispatch order: one
     * FIFO and one event in the queue at a time, at the earliest deadline of a request not known to have finished
     * (finished requests at the head are dropped when it fires). That event may outlive the last request; it stands
     * for no work ({@link #deadlineEvents}).
     *
     * <p>Where workers may fail, a request of a failed worker starts over, and its client sends it again: the old
     * deadline is void (left in the FIFO, skipped), and the new one, the retry instant plus the timeout, is at or after
     * every deadline in the FIFO, so the order holds. A request whose client had already given up is not retried
     * ({@code FleetEvents}).
     */
    private final class ClientDeadlines implements io.servesim.sim.EventHandler {
        private final java.util.ArrayDeque<Deadline> pending = new java.util.ArrayDeque<>();
        // with failing workers: each watched request's deadline by request id, to void it when the request restarts
        private final it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap<Deadline> byRequest;
        // the deadlines of requests handed from a prefill worker to a decode worker, by handoff id
        private final it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap<Deadline> byHandoff =
                new it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap<>();
        private long lastNanos = Long.MIN_VALUE;
        private boolean armed;

        ClientDeadlines(boolean workersMayFail) {
            this.byRequest = workersMayFail ? new it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap<>() : null;
        }

        /** {@code request} starts over on another worker: the deadline watched for it is void. */
        void restarted(Request request) {
            Deadline d = byRequest == null ? null : byRequest.remove(request.id());
            if (d != null) {
                d.retried = true;
                if (d.handoff != null) {
                    byHandoff.remove(d.handoff.id());
                }
            }
        }

        void watch(EngineRank rank, Sequence s, long deadlineNanos, io.servesim.engine.Handoff h) {
            Deadline known = h == null ? null : byHandoff.get(h.id());
            if (known != null) {
                known.rank = rank; // the decode side of a request whose prefill side was watched
                known.sequence = s;
                return;
            }
            if (deadlineNanos < lastNanos) {
                throw new IllegalStateException(
                        "client deadlines out of order: " + deadlineNanos + " after " + lastNanos);
            }
            lastNanos = deadlineNanos;
            Deadline d = new Deadline(rank, s, deadlineNanos, h);
            pending.addLast(d);
            if (h != null && !h.local()) {
                byHandoff.put(h.id(), d);
            }
            if (byRequest != null) {
                byRequest.put(s.request().id(), d);
            }
            if (!armed) {
                arm();
            }
        }

        private void arm() {
            // (a prefill side that finished and went on has been replaced by its decode side at that instant, so a
            // finished sequence here is a request that ended)
            while (!pending.isEmpty()
                    && (pending.peekFirst().retried
                            || pending.peekFirst().sequence.finished())) {
                forget(pending.pollFirst());
            }
            armed = !pending.isEmpty();
            if (armed) {
                queue.schedule(pending.peekFirst().nanos, io.servesim.sim.Phase.ARRIVAL, 0, this, 0, 0);
            }
        }

        private void forget(Deadline d) {
            if (d.retried) {
                return; // its entries went when it was voided, and its request's may now be a newer deadline's
            }
            if (d.handoff != null) {
                byHandoff.remove(d.handoff.id());
            }
            if (byRequest != null) {
                byRequest.remove(d.sequence.request().id());
            }
        }

        @Override
        public void onEvent(int kind, long payload) {
            long now = queue.nowNanos();
            while (!pending.isEmpty() && pending.peekFirst().nanos <= now) {
                Deadline d = pending.pollFirst();
                if (d.retried) {
                    continue;
                }
                forget(d);
                Sequence s = d.sequence;
                if (d.rank.clientTimedOut(s)) { // (it settles the request first: read it after)
                    recorder.timedOut(d.rank, s, now);
                    timedOut.accept(s.request());
                    if (s.handoff() != null && !s.prefillOnly() && !s.handoff().local()) {
                        pd.decodeAborted(s.handoff()); // a read not started is never made: the hold runs out
                    }
                }
            }
            arm();
        }
    }

    /**
     * Dispatch in a disaggregated cluster (docs/pd.md). With {@code max_local_prefill_tokens > 0} the decode worker
     * is chosen first and the prompt is prefilled there when what it lacks of the prompt is at most the threshold
     * (Dynamo's conditional disaggregation); otherwise the prefill router picks a prefill worker, which runs the
     * prompt with {@code max_tokens = 1}, and the decode worker is chosen when the prefill ends ({@link #handoff}), as
     * vLLM's P/D proxy does. Without a prefill worker taking work, prompts are prefilled on their decode worker; a
     * prompt longer than the decode pool's context goes to a decode worker, which rejects it.
     */
    private void dispatchDisaggregated(Request request, RoutingDecision previous, int restarts) {
        RouterGroup prefill = cluster.groups()[io.servesim.config.ClusterConfig.PREFILL_POOL];
        RouterGroup decode = cluster.groups()[io.servesim.config.ClusterConfig.DECODE_POOL];
        if (decode.acceptingWorkers() == 0) {
            recorder.rejectedNoWorker(request, previous.unplaced(restarts), queue.nowNanos());
            lost.accept(request);
            return;
        }
        long[] hashes = cluster.promptHashes(request);
        int prompt = request.promptLength();
        boolean tooLong = prompt >= cluster.maxModelLenOfPool(io.servesim.config.ClusterConfig.DECODE_POOL);
        int chosenDecode = -1;
        boolean local = false;
        if (maxLocalPrefillTokens > 0 || prefill.acceptingWorkers() == 0 || tooLong) {
            chosenDecode = pick(decode, request, hashes);
            int hitTokens = cluster.rank(chosenDecode).cachedPrefixBlocks(hashes) * cluster.blockSize();
            local = tooLong || prefill.acceptingWorkers() == 0 || prompt - hitTokens <= maxLocalPrefillTokens;
        }
        io.servesim.engine.Handoff h =
                new io.servesim.engine.Handoff(nextHandoff++, local, local ? -1 : chosenDecode, hashes);
        if (local) {
            pd.localPrefill();
            submit(chosenDecode, request, hashes, h, false, restarts);
            return;
        }
        submit(pick(prefill, request, hashes), request, hashes, h, true, restarts);
    }

    /**
     * The prefill of {@code s} finished on {@code prefillRank}: its blocks stay held, and the request goes to its
     * decode worker at the same instant (the one chosen at arrival, or the decode router's choice now).
     */
    void handoff(EngineRank prefillRank, Sequence s) {
        io.servesim.engine.Handoff h = s.handoff();
        pd.prefillDone(h, prefillRank, s);
        RouterGroup decode = cluster.groups()[io.servesim.config.ClusterConfig.DECODE_POOL];
        Request request = s.request();
        if (decode.acceptingWorkers() == 0) {
            pd.abandon(h);
            recorder.rejectedNoWorker(request, s.routing().unplaced(s.routing().restarts()), queue.nowNanos());
            lost.accept(request);
            return;
        }
        int g = h.preferredDecodeRank();
        if (g < 0 || !cluster.isAccepting(cluster.workerOfRank(g))) {
            g = pick(decode, request, h.promptHashes());
        }
        submit(g, request, h.promptHashes(), h, false, s.routing().restarts());
    }

    /** The group's router's choice, stepped around failed workers, with an authored {@code dp_rank} applied. */
    private int pick(RouterGroup g, Request request, long[] hashes) {
        int rank = g.route(request, hashes);
        int w = cluster.workerOfRank(rank);
        if (cluster.isFailed(w)) {
            // every live worker of the group drains, so the router fell back to a failed one: take the next live one
            int r = rank - cluster.firstRankOf(w);
            do {
                w = g.firstWorker() + (w - g.firstWorker() + 1) % g.workers();
            } while (cluster.isFailed(w));
            rank = cluster.firstRankOf(w) + r;
        }
        if (request.dpRank() >= 0) {
            rank = cluster.firstRankOf(w) + request.dpRank();
        }
        return rank;
    }

    private void submit(
            int g, Request request, long[] hashes, io.servesim.engine.Handoff h, boolean prefillOnly, int restarts) {
        int w = cluster.workerOfRank(g);
        RoutingDecision decision = new RoutingDecision(w, g - cluster.firstRankOf(w), false, -1, -1, 0, restarts);
        EngineRank rank = cluster.rank(g);
        workerRequests[rank.workerId()]++;
        Sequence s = rank.submit(request, decision, hashes, h, prefillOnly);
        if (s == null && h != null && !prefillOnly && !h.local()) {
            // the decode worker refused the request its prefill worker ran (workload.max_tokens_sent): no read comes,
            // and the prefill worker holds the blocks until their lease expires, as for a client that gave up
            pd.decodeAborted(h);
        }
        if (clientTimeoutNanos > 0 && s != null) {
            // a request's decode side takes over its prefill side's deadline (the same client waits for both)
            deadlines.watch(rank, s, deadlineNanos(request, restarts), h);
        }
    }

    /**
     * When the client of {@code request} gives up: its timeout after it sent the request (its arrival), or, for a
     * request starting over because its worker failed ({@code restarts > 0}), after it sent it again, now: a retry is
     * a new HTTP request with a timeout of its own. Either is at or after every deadline already watched, each of them
     * a send instant no later than now plus the one timeout.
     */
    private long deadlineNanos(Request request, int restarts) {
        long sent = restarts > 0 ? queue.nowNanos() : request.arrivalNanos();
        return Math.max(queue.nowNanos(), sent + clientTimeoutNanos);
    }

    /**
     * The prefill of {@code s} finished on {@code prefillRank} after its client had given up: the proxy sends no
     * decode request, and the prefill worker holds the blocks until their lease expires, as vLLM's NIXL connector
     * does for a read that never comes.
     */
    void prefillOrphaned(EngineRank prefillRank, Sequence s) {
        pd.prefillOrphaned(s.handoff(), prefillRank, s);
    }
}
