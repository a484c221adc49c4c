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
    private long nextSeq;
    private long nowNanos;

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
    }

    @Override
    public long nowNanos() {
        return nowNanos;
    }

    /** Number of pending events. */
    public int size() {
        return size;
    }

    /** True when no event is pending. */
    public boolean isEmpty() {
        return size == 0;
    }

    /** Time of the earliest pending event; {@link Long#MAX_VALUE} when empty. */
    public long peekTimeNanos() {
        return size == 0 ? Long.MAX_VALUE : time[heap[0]];
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
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        heap[size] = slot;
        siftUp(size++);
    }

    /**
     * Pops the earliest event, advances the clock to its time and dispatches it.
     *
     * @return false when the queue was empty
     */
    public boolean runNext() {
        if (size == 0) {
            return false;
        }
        int slot = heap[0];
        int last = heap[--size];
        if (size > 0) {
            heap[0] = last;
            siftDown(0);
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

    private void siftUp(int index) {
        int i = index;
        int slot = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            int p = heap[parent];
            if (!less(slot, p)) {
                break;
            }
            heap[i] = p;
            i = parent;
        }
        heap[i] = slot;
    }

    private void siftDown(int index) {
        int i = index;
        int slot = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int c = heap[child];
            int right = child + 1;
            if (right < size && less(heap[right], c)) {
                child = right;
                c = heap[child];
            }
            if (!less(c, slot)) {
                break;
            }
            heap[i] = c;
            i = child;
        }
        heap[i] = slot;
    }
}
