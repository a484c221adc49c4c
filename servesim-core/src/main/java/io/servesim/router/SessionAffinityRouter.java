package io.servesim.router;

import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * Sticky sessions: all turns of a session go to the rank that served its first turn, so later turns hit that
 * rank's prefix cache; a new session (and any standalone request) goes to the least-loaded rank. A session's entry
 * is dropped when its last turn is routed or the session ends early (a rejected turn), so memory follows the
 * active sessions.
 */
public final class SessionAffinityRouter implements Router {
    private final LoadIndex load;
    private final Long2IntOpenHashMap sessionRank = new Long2IntOpenHashMap();

    /** Creates the router. */
    public SessionAffinityRouter(RouterContext context) {
        this.load = context.load();
        sessionRank.defaultReturnValue(-1);
    }

    @Override
    public int route(Request request) {
        long session = request.sessionId();
        if (session < 0) {
            return load.leastLoaded();
        }
        int rank = sessionRank.get(session);
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
    public void onSessionEnded(long sessionId) {
        sessionRank.remove(sessionId);
    }

    @Override
    public boolean usesLoad() {
        return true;
    }
}
