package io.servesim.transfer;

import io.servesim.sim.EventHandler;
import io.servesim.sim.EventQueue;
import io.servesim.sim.Phase;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Bandwidth-shared byte transfers between endpoints (GPU ↔ host copies, cross-worker KV pulls), AISimulate's
 * "equal-share byte service" ({@code engine/offload_transfer.rs}, aisimulate-replay.md §4.6) with separate egress
 * and ingress caps per endpoint and an optional shared fabric cap.
 *
 * <ul>
 *   <li>A job waits for its first byte without using bandwidth, then moves at
 *       {@code min(egress(src) / moving jobs leaving src, ingress(dst) / moving jobs entering dst,
 *       fabric / all moving jobs)}; a cap of 0 is unlimited.
 *   <li>Rates are recomputed (a <em>reflow</em>) when a job starts moving, completes or is cancelled, only for the
 *       moving jobs leaving the same source or entering the same destination (all moving jobs when a fabric cap is
 *       set). Each affected job first settles the bytes it moved at its old rate.
 *   <li>Each moving job has one projected-completion event; a reflow reschedules it and the old event is skipped
 *       by its generation number. With a fabric cap, where every change reflows every moving job, projected
 *       completions are kept in an indexed min-heap (time, then job id) behind a single wake-up event instead, so
 *       a reflow costs O(log n) per job and leaves no stale events behind. A completing job is set to exactly 0
 *       bytes left.
 * </ul>
 *
 * Times are integer nanoseconds; rates are bytes per nanosecond (1 GB/s = 10⁹ B/s = 1 B/ns).
 *
 * <p>Why one class of this size: the max-min fair rate allocation, its incremental reflow and the completion heap share
 * one set of primitive per-job arrays; splitting them would expose those arrays.
 */
public final class TransferService implements EventHandler {
    private static final int START = 1;
    private static final int COMPLETE = 2;
    private static final int WAKE = 3;

    /** Job states. */
    public enum State {
        /** Waiting for its first byte: uses no bandwidth. */
        WAITING_FIRST_BYTE,
        /** Moving bytes at its shared rate. */
        MOVING,
        /** All bytes moved. */
        DONE,
        /** Cancelled before completion. */
        CANCELLED,
        /** Finished and given back by its owner; the id may be reused. */
        RELEASED
    }

    private final EventQueue queue;
    private final long stableId;
    private final double fabricBytesPerNano;
    private final List<Endpoint> endpoints = new ArrayList<>();
    private TransferListener listener = id -> {};

    private int jobs;
    private final it.unimi.dsi.fastutil.ints.IntArrayList freeIds = new it.unimi.dsi.fastutil.ints.IntArrayList();
    private int[] src = new int[16];
    private int[] dst = new int[16];
    private double[] remaining = new double[16];
    private double[] rate = new double[16];
    private long[] settledAt = new long[16];
    private int[] generation = new int[16];
    private State[] state = new State[16];
    private long[] totalBytes = new long[16];
    private long[] startNanos = new long[16];
    private long[] endNanos = new long[16];
    private int movingTotal;
    // accounting, checked by the fault soak: every job submitted ends once, done or cancelled, and its bytes with it
    private long submittedJobs;
    private long submittedBytes;
    private long doneJobs;
    private long doneBytes;
    private long cancelledJobs;
    private long cancelledBytes;
    private double cancelledUndeliveredBytes;
    // Fabric-capped mode: every change reflows every moving job, so projected completions live in an indexed
    // min-heap (by time, then id) behind one wake-up event instead of one queue event per job per reflow.
    private final io.servesim.sim.IndexedMinHeap completions = new io.servesim.sim.IndexedMinHeap();
    private long wakeAt = Long.MAX_VALUE;
    private int wakeGeneration;
    private int peakMoving;
    private final IntArrayList movingAll = new IntArrayList();

    private static final class Endpoint {
        final double egress;
        final double ingress;
        final IntArrayList leaving = new IntArrayList();
        final IntArrayList entering = new IntArrayList();

        Endpoint(double egress, double ingress) {
            this.egress = egress;
            this.ingress = ingress;
        }
    }

    /**
     * Creates a service.
     *
     * @param queue the event queue
     * @param stableId this service's identity for same-time event ordering
     * @param fabricGbytesPerS shared cap over all moving jobs in GB/s (decimal), 0 for none
     */
    public TransferService(EventQueue queue, long stableId, double fabricGbytesPerS) {
        this.queue = queue;
        this.stableId = stableId;
        this.fabricBytesPerNano = fabricGbytesPerS;
    }

    /** Sets who is told about completions. */
    public void listener(TransferListener transferListener) {
        this.listener = transferListener;
    }

    /** Adds an endpoint with egress and ingress caps in GB/s (0 = unlimited); returns its id. */
    public int addEndpoint(double egressGbytesPerS, double ingressGbytesPerS) {
        if (egressGbytesPerS < 0 || ingressGbytesPerS < 0) {
            throw new IllegalArgumentException("bandwidth must be >= 0 GB/s");
        }
        endpoints.add(new Endpoint(egressGbytesPerS, ingressGbytesPerS));
        return endpoints.size() - 1;
    }

    /**
     * Submits a job of {@code bytes} from {@code source} to {@code destination} whose first byte arrives
     * {@code firstByteNanos} from now.
     *
     * @return the job id
     */
    public int submit(int source, int destination, long bytes, long firstByteNanos) {
        if (bytes < 0 || firstByteNanos < 0) {
            throw new IllegalArgumentException("bytes and first-byte delay must be >= 0");
        }
        int id;
        if (!freeIds.isEmpty()) {
            id = freeIds.popInt(); // a released id: its generation keeps counting, so its old events stay stale
        } else {
            id = jobs++;
            grow();
        }
        src[id] = source;
        dst[id] = destination;
        submittedJobs++;
        submittedBytes += bytes;
        totalBytes[id] = bytes;
        remaining[id] = bytes;
        state[id] = State.WAITING_FIRST_BYTE;
        startNanos[id] = -1;
        endNanos[id] = -1;
        queue.schedule(
                queue.nowNanos() + firstByteNanos,
                Phase.TRANSFER_COMPLETION,
                stableId,
                this,
                START,
                ((long) generation[id] << 32) | id);
        return id;
    }

    /**
     * Gives a finished or cancelled job's id back for reuse (its owner will not ask about it again), so the per-job
     * arrays stay as large as the most jobs alive at once, not the total ever submitted.
     */
    public void release(int id) {
        State s = state[id];
        if (s != State.DONE && s != State.CANCELLED) {
            throw new IllegalStateException("transfer " + id + " is " + s + ": only finished jobs can be released");
        }
        state[id] = State.RELEASED;
        generation[id]++;
        freeIds.add(id);
    }

    /**
     * Why the service's accounting does not add up, or null when it does: every job submitted is done, cancelled or
     * still in flight (waiting for its first byte or moving), with its bytes; a cancelled job delivered no more than
     * its bytes.
     */
    public String accountingProblem() {
        long inFlightJobs = 0;
        long inFlightBytes = 0;
        for (int id = 0; id < jobs; id++) {
            if (state[id] == State.WAITING_FIRST_BYTE || state[id] == State.MOVING) {
                inFlightJobs++;
                inFlightBytes += totalBytes[id];
            }
        }
        if (submittedJobs != doneJobs + cancelledJobs + inFlightJobs) {
            return submittedJobs + " transfers submitted but " + doneJobs + " done + " + cancelledJobs + " cancelled + "
                    + inFlightJobs + " in flight";
        }
        if (submittedBytes != doneBytes + cancelledBytes + inFlightBytes) {
            return submittedBytes + " bytes submitted but " + doneBytes + " done + " + cancelledBytes + " cancelled + "
                    + inFlightBytes + " in flight";
        }
        if (cancelledUndeliveredBytes < 0 || cancelledUndeliveredBytes > cancelledBytes) {
            return "cancelled transfers left " + cancelledUndeliveredBytes + " of " + cancelledBytes
                    + " bytes undelivered";
        }
        return null;
    }

    /** Jobs in flight (waiting for their first byte or moving). */
    public int inFlightJobs() {
        int n = 0;
        for (int id = 0; id < jobs; id++) {
            if (state[id] == State.WAITING_FIRST_BYTE || state[id] == State.MOVING) {
                n++;
            }
        }
        return n;
    }

    /** Job ids allocated so far (the per-job arrays' used length). */
    public int idsAllocated() {
        return jobs;
    }

    /** Cancels a job that has not completed; moving jobs sharing its endpoints speed up. */
    public void cancel(int id) {
        State s = state[id];
        if (s == State.DONE || s == State.CANCELLED || s == State.RELEASED) {
            return;
        }
        long now = queue.nowNanos();
        state[id] = State.CANCELLED;
        generation[id]++; // its pending events become stale
        if (s == State.MOVING) {
            settle(id, now);
            stopMoving(id);
            reflow(id, now);
        }
        cancelledJobs++;
        cancelledBytes += totalBytes[id];
        cancelledUndeliveredBytes += remaining[id];
    }

    @Override
    public void onEvent(int kind, long payload) {
        long now = queue.nowNanos();
        if (kind == WAKE) {
            if ((int) payload != wakeGeneration) {
                return; // superseded by an earlier or later projected completion
            }
            wakeAt = Long.MAX_VALUE;
            while (completions.size() > 0 && completions.peekKey() <= now) {
                complete(completions.peek(), now);
            }
            armWake();
            return;
        }
        if (kind == START) {
            int id = (int) (payload & 0xFFFFFFFFL);
            if (state[id] != State.WAITING_FIRST_BYTE || (int) (payload >>> 32) != generation[id]) {
                return; // cancelled while waiting (or the id was released and reused since)
            }
            state[id] = State.MOVING;
            startNanos[id] = now;
            settledAt[id] = now;
            rate[id] = 0;
            Endpoint s = endpoints.get(src[id]);
            Endpoint d = endpoints.get(dst[id]);
            s.leaving.add(id);
            d.entering.add(id);
            movingAll.add(id);
            movingTotal++;
            peakMoving = Math.max(peakMoving, movingTotal);
            reflow(id, now);
        } else {
            int id = (int) (payload & 0xFFFFFFFFL);
            int gen = (int) (payload >>> 32);
            if (state[id] != State.MOVING || gen != generation[id]) {
                return; // stale: rescheduled by a reflow, or cancelled
            }
            complete(id, now);
        }
    }

    private void complete(int id, long now) {
        if (state[id] != State.MOVING) {
            throw new IllegalStateException("transfer " + id + " completed while " + state[id]);
        }
        doneJobs++;
        doneBytes += totalBytes[id];
        remaining[id] = 0; // exactly: no floating residue
        state[id] = State.DONE;
        endNanos[id] = now;
        stopMoving(id);
        reflow(id, now);
        listener.onTransferComplete(id);
    }

    private void stopMoving(int id) {
        if (fabricBytesPerNano > 0) {
            completions.remove(id);
        }
        endpoints.get(src[id]).leaving.rem(id);
        endpoints.get(dst[id]).entering.rem(id);
        movingAll.rem(id);
        movingTotal--;
    }

    /** Recomputes rates of the moving jobs that share an endpoint with job {@code changed} (all with a fabric cap). */
    private void reflow(int changed, long now) {
        if (fabricBytesPerNano > 0) {
            for (int i = 0, n = movingAll.size(); i < n; i++) {
                update(movingAll.getInt(i), now);
            }
            armWake();
            return;
        }
        IntArrayList leaving = endpoints.get(src[changed]).leaving;
        for (int i = 0, n = leaving.size(); i < n; i++) {
            update(leaving.getInt(i), now);
        }
        IntArrayList entering = endpoints.get(dst[changed]).entering;
        for (int i = 0, n = entering.size(); i < n; i++) {
            int j = entering.getInt(i);
            if (src[j] != src[changed]) { // not already updated as a job leaving the same source
                update(j, now);
            }
        }
    }

    private void update(int id, long now) {
        settle(id, now);
        double r = rateOf(id);
        rate[id] = r;
        generation[id]++;
        long left = Double.isInfinite(r) ? 0 : (long) Math.ceil(remaining[id] / r);
        if (fabricBytesPerNano > 0) {
            completions.set(id, now + left);
            return;
        }
        queue.schedule(
                now + left, Phase.TRANSFER_COMPLETION, stableId, this, COMPLETE, ((long) generation[id] << 32) | id);
    }

    /** Keeps exactly one live wake-up event, at the earliest projected completion (fabric mode). */
    private void armWake() {
        long t = completions.size() == 0 ? Long.MAX_VALUE : completions.peekKey();
        if (t == wakeAt) {
            return;
        }
        wakeGeneration++;
        wakeAt = t;
        if (t != Long.MAX_VALUE) {
            queue.schedule(t, Phase.TRANSFER_COMPLETION, stableId, this, WAKE, wakeGeneration);
        }
    }

    private void settle(int id, long now) {
        long dt = now - settledAt[id];
        if (dt > 0 && rate[id] > 0) {
            remaining[id] = Double.isInfinite(rate[id]) ? 0 : Math.max(0, remaining[id] - rate[id] * dt);
        }
        settledAt[id] = now;
    }

    private double rateOf(int id) {
        Endpoint s = endpoints.get(src[id]);
        Endpoint d = endpoints.get(dst[id]);
        double r = Double.POSITIVE_INFINITY;
        if (s.egress > 0) {
            r = Math.min(r, s.egress / s.leaving.size());
        }
        if (d.ingress > 0) {
            r = Math.min(r, d.ingress / d.entering.size());
        }
        if (fabricBytesPerNano > 0) {
            r = Math.min(r, fabricBytesPerNano / movingTotal);
        }
        return r;
    }

    /** A job's state. */
    public State state(int id) {
        return state[id];
    }

    /** A job's current rate in GB/s (bytes per nanosecond); 0 unless moving. */
    public double rateGbytesPerS(int id) {
        return state[id] == State.MOVING ? rate[id] : 0;
    }

    /** Bytes a job still has to move, as of its last settlement. */
    public double remainingBytes(int id) {
        return remaining[id];
    }

    /** When a job started moving, or -1. */
    public long startNanos(int id) {
        return startNanos[id];
    }

    /** When a job completed, or -1. */
    public long endNanos(int id) {
        return endNanos[id];
    }

    /** Jobs moving now. */
    public int movingJobs() {
        return movingTotal;
    }

    /** The most jobs that were moving at once. */
    public int peakMovingJobs() {
        return peakMoving;
    }

    /** Bytes of a job. */
    public long bytes(int id) {
        return totalBytes[id];
    }

    private void grow() {
        if (jobs <= src.length) {
            return;
        }
        int cap = src.length * 2;
        src = Arrays.copyOf(src, cap);
        dst = Arrays.copyOf(dst, cap);
        remaining = Arrays.copyOf(remaining, cap);
        rate = Arrays.copyOf(rate, cap);
        settledAt = Arrays.copyOf(settledAt, cap);
        generation = Arrays.copyOf(generation, cap);
        state = Arrays.copyOf(state, cap);
        totalBytes = Arrays.copyOf(totalBytes, cap);
        startNanos = Arrays.copyOf(startNanos, cap);
        endNanos = Arrays.copyOf(endNanos, cap);
    }
}
