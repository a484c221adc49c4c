package io.servesim.metrics;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayList;
import java.util.List;

/**
 * How many requests a rank was serving at an instant of a finished run, read back from the request records: those
 * admitted at or before it whose last token came at or after it (a request emitting its last token in a step was in
 * that step). This is the size of the step that emitted a token at that instant, up to requests preempted and waiting
 * then, which the records do not keep. Two sorted arrays per rank, one binary search each per query.
 */
public final class StepOccupancy {
    private final Long2IntOpenHashMap group = new Long2IntOpenHashMap();
    private final List<long[]> admitted = new ArrayList<>();
    private final List<long[]> ended = new ArrayList<>();

    private StepOccupancy() {
        group.defaultReturnValue(-1);
    }

    /** The occupancy of every rank of {@code log}'s run. */
    public static StepOccupancy of(RequestLog log) {
        StepOccupancy o = new StepOccupancy();
        List<LongArrayList> starts = new ArrayList<>();
        List<LongArrayList> ends = new ArrayList<>();
        for (int i = 0; i < log.size(); i++) {
            long admittedNanos = log.firstScheduledNanos(i);
            if (admittedNanos < 0 || log.worker(i) < 0) {
                continue; // never admitted
            }
            long key = key(log.worker(i), log.rank(i));
            int g = o.group.get(key);
            if (g < 0) {
                g = starts.size();
                o.group.put(key, g);
                starts.add(new LongArrayList());
                ends.add(new LongArrayList());
            }
            starts.get(g).add(admittedNanos);
            long lastNanos = log.lastTokenNanos(i);
            ends.get(g).add(lastNanos < 0 ? Long.MAX_VALUE : lastNanos);
        }
        for (int g = 0; g < starts.size(); g++) {
            long[] s = starts.get(g).toLongArray();
            long[] e = ends.get(g).toLongArray();
            java.util.Arrays.sort(s);
            java.util.Arrays.sort(e);
            o.admitted.add(s);
            o.ended.add(e);
        }
        return o;
    }

    private static long key(int worker, int rank) {
        return ((long) worker << 32) | (rank & 0xffffffffL);
    }

    /** Requests rank {@code rank} of worker {@code worker} served at {@code nanos} (0 for a rank that served none). */
    public int requestsAt(int worker, int rank, long nanos) {
        int g = group.get(key(worker, rank));
        if (g < 0) {
            return 0;
        }
        // admitted at or before the instant, minus those whose last token came strictly before it
        return countAtMost(admitted.get(g), nanos) - countAtMost(ended.get(g), nanos - 1);
    }

    /** How many values of sorted {@code a} are at most {@code x}. */
    private static int countAtMost(long[] a, long x) {
        int lo = 0;
        int hi = a.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
