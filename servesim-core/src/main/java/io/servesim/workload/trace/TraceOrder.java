package io.servesim.workload.trace;

import java.util.HashSet;
import java.util.Set;

/**
 * The time-order rule a replay applies to a trace's first turns (rows without a session, and the first row of each
 * session; later turns are released by their session, their timestamps ignored): their timestamps, where given, may
 * not decrease. {@code trace stats} and {@code trace convert} check it too, so they refuse what a replay refuses.
 */
public final class TraceOrder {
    private final Set<String> sessions = new HashSet<>();
    private long last = Long.MIN_VALUE;

    /** Checks the next row of the file; throws naming its line when it breaks the order. */
    public void check(TraceRecord r) {
        boolean firstTurn = r.sessionId() == null || sessions.add(r.sessionId());
        if (!firstTurn || r.timestampNanos() < 0) {
            return;
        }
        if (r.timestampNanos() < last) {
            throw outOfOrder(r, last);
        }
        last = r.timestampNanos();
    }

    /** The error for a first turn whose timestamp is earlier than the previous first turn's. */
    static TraceFormatException outOfOrder(TraceRecord r, long previousNanos) {
        return TraceFormatException.field(
                r.location(),
                "timestamp",
                "is " + r.timestampNanos() / 1e6 + " ms, earlier than the previous row's " + previousNanos / 1e6
                        + " ms: rows must be in time order");
    }
}
