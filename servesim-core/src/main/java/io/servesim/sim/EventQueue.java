package io.servesim.sim;

import java.util.Arrays;

/**
 * A deterministic min-heap of events ordered by (time, phase, stable id, sequence).
 *
 * <p>Events are stored in slot arrays (struct of arrays) and the binary heap orders slot indices, so scheduling
 * and popping allocate nothing once the arrays have grown. The sequence number is a per-queue counter, which makes
 * ties between events with equal (time, phase, stable id) resolve in scheduling order (SSJ's FIFO tie rule). A
 * stable id is the scheduling component's identity (for example a rank's global index), so same-time events of
 * different components run in id order whatever order they were scheduled in.
 *
 * <p><b>Run-ahead.</b> Events live in two heaps ordered the same way: <em>external</em> events (everything other
 * components can see: arrivals, fleet events, telemetry, transfers, and engine steps whose outputs may finish a
 * request) and <em>local</em> ones ({@link #scheduleLocal}: an engine's own steps that change nothing outside its
 * worker). {@link #runNext} always pops the earliest of both, so the order is one total order. A worker may also run
 * its next local event at once instead of queueing it ({@link #mayRunAhead}) when that event precedes every external
 * event and the {@link #fence}: nothing another component does can reach the worker before the next external
 * event, and what the worker does meanwhile (its queues, KV blocks, counters) nobody reads before then. Components
 * whose reactions to a finished request create work for other components (closed loops, sessions, KV transfers)
 * turn this off with {@link #forbidRunAhead}. This is conservative parallel discrete-event simulation's lookahead
 * (Chandy and Misra), applied within one thread to save the queue operations of decode steps.
 */
public final class EventQueue implements SimClock {
    private static final int STABLE_ID_BITS = 56;
    private static final long MAX_STABLE_ID = (1L << STABLE_ID_BITS) - 1;

    private long[] time;
    private long[] tie;
    private long[] seq;
    private int[] kind;
    private long[] payload;
    private EventHandler[] handler;
    private int[] freeSlots;
    private int freeCount;
    private int slotCount;

    private int[] heap;
    private int size;
    private int[] local;
    private int localSize;
    private long nextSeq;
    private long nowNanos;
    private boolean runAheadForbidden;
    private boolean quietRunAheadForbidden;
    private long fenceNanos = Long.MAX_VALUE;
    private long ranAhead;

    /** Creates an empty queue at virtual time 0. */
    public EventQueue() {
        this(64);
    }

    /** Creates an empty queue with room for {@code initialCapacity} pending events before growing. */
    public EventQueue(int initialCapacity) {
        int cap = Math.max(4, initialCapacity);
        time = new long[cap];
        tie = new long[cap];
        seq = new long[cap];
        kind = new int[cap];
        payload = new long[cap];
        handler = new EventHandler[cap];
        freeSlots = new int[cap];
        heap = new int[cap];
        local = new int[cap];
    }

    @Override
    public long nowNanos() {
        return nowNanos;
    }

    /** Number of pending events. */
    public int size() {
        return size + localSize;
    }

    /** True when no event is pending. */
    public boolean isEmpty() {
        return size + localSize == 0;
    }

    /** Time of the earliest pending event; {@link Long#MAX_VALUE} when empty. */
    public long peekTimeNanos() {
        long t = size == 0 ? Long.MAX_VALUE : time[heap[0]];
        return localSize == 0 ? t : Math.min(t, time[local[0]]);
    }

    /** Turns run-ahead off for the rest of the run (see the class comment); it cannot be turned on again. */
    public void forbidRunAhead() {
        runAheadForbidden = true;
        quietRunAheadForbidden = true;
    }

    /**
     * Turns run-ahead off for the rest of the run except for quiet work ({@link #mayRunAheadQuietly}): for components
     * that hear of a worker's KV changes between steps (KV events), while nothing a worker does creates work for
     * others before the next external event (no closed loop, no sessions).
     */
    public void forbidRunAheadExceptQuiet() {
        runAheadForbidden = true;
    }

    /** Whether run-ahead is allowed at all. */
    public boolean runAheadAllowed() {
        return !runAheadForbidden;
    }

    /** No event after {@code nanos} may run ahead (a run stopped at a time limit or inspected in between). */
    public void fence(long nanos) {
        this.fenceNanos = nanos;
    }

    /**
     * Whether a local event at ({@code atNanos}, {@code phase}, {@code stableId}) may run now instead of being
     * queued: run-ahead is allowed, it is not after the fence, and it precedes the earliest external event.
     */
    public boolean mayRunAhead(long atNanos, int phase, long stableId) {
        return !runAheadForbidden && precedesExternal(atNanos, phase, stableId);
    }

    /** Whether ({@code atNanos}, {@code phase}, {@code stableId}) is not after the fence and precedes every external event. */
    private boolean precedesExternal(long atNanos, int phase, long stableId) {
        if (atNanos > fenceNanos) {
            return false;
        }
        if (size == 0) {
            return true;
        }
        int top = heap[0];
        if (atNanos != time[top]) {
            return atNanos < time[top];
        }
        return (((long) phase << STABLE_ID_BITS) | stableId) < tie[top];
    }

    /**
     * Whether a worker may run its own work up to ({@code atNanos}, {@code phase}, {@code stableId}) at once when that
     * work is quiet — it changes no KV block, finishes no request and tells no other component anything (a decode
     * run's steps) — as {@link #mayRunAhead}, except that only {@link #forbidRunAhead} forbids it.
     */
    public boolean mayRunAheadQuietly(long atNanos, int phase, long stableId) {
        return !quietRunAheadForbidden && precedesExternal(atNanos, phase, stableId);
    }

    /**
     * Moves the clock to {@code atNanos} to run a local event ahead ({@link #mayRunAhead} said yes). The clock of the
     * next popped event may be earlier: only the running-ahead worker sees this time.
     */
    public void runAheadTo(long atNanos) {
        if (atNanos < nowNanos) {
            throw new IllegalStateException("ran ahead into the past: at=" + atNanos + "ns, now=" + nowNanos + "ns");
        }
        nowNanos = atNanos;
        ranAhead++;
    }

    /** {@code events} calls of {@link #runAheadTo}, the last at {@code atNanos} (a driver that ran them in one loop). */
    public void runAheadTo(long atNanos, long events) {
        runAheadTo(atNanos);
        ranAhead += events - 1;
    }

    /** Events that ran ahead of the queue so far (counted by {@link #runAheadTo}). */
    public long ranAhead() {
        return ranAhead;
    }

    /** Schedules a local event (one that changes nothing outside its component's worker; see the class comment). */
    public void scheduleLocal(
            long atNanos, int phase, long stableId, EventHandler target, int eventKind, long eventPayload) {
        int slot = store(atNanos, phase, stableId, target, eventKind, eventPayload);
        if (localSize == local.length) {
            local = Arrays.copyOf(local, localSize * 2);
        }
        local[localSize] = slot;
        siftUp(local, localSize++);
    }

    /**
     * Schedules an event.
     *
     * @param atNanos virtual time, not earlier than now
     * @param phase one of {@link Phase}
     * @param stableId the scheduling component's stable identity, in [0, 2^56)
     * @param target the component to wake up
     * @param eventKind the component's own event kind
     * @param eventPayload the component's own payload (an id, a generation number...)
     */
    public void schedule(
            long atNanos, int phase, long stableId, EventHandler target, int eventKind, long eventPayload) {
        int slot = store(atNanos, phase, stableId, target, eventKind, eventPayload);
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        heap[size] = slot;
        siftUp(heap, size++);
    }

    private int store(long atNanos, int phase, long stableId, EventHandler target, int eventKind, long eventPayload) {
        if (atNanos < nowNanos) {
            throw new IllegalStateException(
                    "event scheduled in the past: at=" + atNanos + "ns, now=" + nowNanos + "ns");
        }
        if (phase < 0 || phase >= Phase.COUNT || stableId < 0 || stableId > MAX_STABLE_ID) {
            throw new IllegalArgumentException("bad phase " + phase + " or stable id " + stableId);
        }
        int slot = allocateSlot();
        time[slot] = atNanos;
        tie[slot] = ((long) phase << STABLE_ID_BITS) | stableId;
        seq[slot] = nextSeq++;
        kind[slot] = eventKind;
        payload[slot] = eventPayload;
        handler[slot] = target;
        return slot;
    }

    /**
     * Pops the earliest event, advances the clock to its time and dispatches it.
     *
     * @return false when the queue was empty
     */
    public boolean runNext() {
        int slot;
        if (localSize > 0 && (size == 0 || less(local[0], heap[0]))) {
            slot = local[0];
            int last = local[--localSize];
            if (localSize > 0) {
                local[0] = last;
                siftDown(local, localSize, 0);
            }
        } else if (size > 0) {
            slot = heap[0];
            int last = heap[--size];
            if (size > 0) {
                heap[0] = last;
                siftDown(heap, size, 0);
            }
        } else {
            return false;
        }
        nowNanos = time[slot];
        EventHandler target = handler[slot];
        int k = kind[slot];
        long p = payload[slot];
        handler[slot] = null;
        freeSlots[freeCount++] = slot;
        target.onEvent(k, p);
        return true;
    }

    private int allocateSlot() {
        if (freeCount > 0) {
            return freeSlots[--freeCount];
        }
        if (slotCount == time.length) {
            int cap = slotCount * 2;
            time = Arrays.copyOf(time, cap);
            tie = Arrays.copyOf(tie, cap);
            seq = Arrays.copyOf(seq, cap);
            kind = Arrays.copyOf(kind, cap);
            payload = Arrays.copyOf(payload, cap);
            handler = Arrays.copyOf(handler, cap);
            freeSlots = Arrays.copyOf(freeSlots, cap);
        }
        return slotCount++;
    }

    private boolean less(int a, int b) {
        if (time[a] != time[b]) {
            return time[a] < time[b];
        }
        if (tie[a] != tie[b]) {
            return tie[a] < tie[b];
        }
        return seq[a] < seq[b];
    }

    private void siftUp(int[] h, int index) {
        int i = index;
        int slot = h[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            int p = h[parent];
            if (!less(slot, p)) {
                break;
            }
            h[i] = p;
            i = parent;
        }
        h[i] = slot;
    }

    private void siftDown(int[] h, int n, int index) {
        int i = index;
        int slot = h[i];
        int half = n >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int c = h[child];
            int right = child + 1;
            if (right < n && less(h[right], c)) {
                child = right;
                c = h[child];
            }
            if (!less(c, slot)) {
                break;
            }
            h[i] = c;
            i = child;
        }
        h[i] = slot;
    }
}
