package io.servesim.router;

import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * Sticky sessions: all turns of a session go to the rank that served its first turn, so later turns hit that
 * rank's prefix cache; a new session (and any standalone request) goes to the least-loaded rank. A session's entry
 * is dropped when its last turn is routed or the session ends early (a rejected turn), so memory follows the
 * active sessions. With {@code cluster.router.affinity_load_cap}, a session whose rank's load score
 * (4 × waiting + running) exceeds the cap is moved to the least-loaded rank (and stays there).
 */
public final class SessionAffinityRouter implements Router {
    private final LoadIndex load;
    private final int perWorker;
    private final long cap;
    private final Long2IntOpenHashMap sessionRank = new Long2IntOpenHashMap();
    private long moves;

    /** Creates the router. */
    public SessionAffinityRouter(RouterContext context) {
        this.load = context.load();
        this.perWorker = context.ranksPerWorker();
        this.cap = context.affinityLoadCap() == null ? Long.MAX_VALUE : context.affinityLoadCap();
        sessionRank.defaultReturnValue(-1);
    }

    /** Sessions moved off an overloaded rank so far. */
    public long moves() {
        return moves;
    }

    @Override
    public int route(Request request) {
        long session = request.sessionId();
        if (session < 0) {
            return load.leastLoaded();
        }
        int rank = sessionRank.get(session);
        if (rank >= 0 && (load.scoreOf(rank) > cap || load.isDisabled(rank))) {
            int least = load.leastLoaded();
            if (least != rank) {
                rank = least; // the sticky rank is over the cap: move the session
                moves++;
                sessionRank.put(session, rank);
            }
        }
        if (rank < 0) {
            rank = load.leastLoaded();
            if (!request.lastTurn()) {
                sessionRank.put(session, rank);
            }
        } else if (request.lastTurn()) {
            sessionRank.remove(session);
        }
        return rank;
    }

    @Override
    public void onWorkerDraining(int worker) {
        for (int r = 0; r < perWorker; r++) {
            load.disable(worker * perWorker + r);
        }
    }

    /** A migrating turn moves its session to the least-loaded rank on another worker, which it then sticks to. */
    @Override
    public int routeExcluding(Request request, int excludedWorker) {
        int rank = load.leastLoadedExcluding(excludedWorker * perWorker, perWorker);
        if (request.sessionId() >= 0) {
            if (request.lastTurn()) {
                sessionRank.remove(request.sessionId());
            } else {
                sessionRank.put(request.sessionId(), rank);
            }
        }
        return rank;
    }

    @Override
    public void onSessionEnded(long sessionId) {
        sessionRank.remove(sessionId);
    }

    @Override
    public boolean usesLoad() {
        return true;
    }
}
