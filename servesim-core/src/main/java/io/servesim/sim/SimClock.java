package io.servesim.sim;

/** A source of virtual time in integer nanoseconds; simulation code never reads the wall clock. */
public interface SimClock {
    /** Current virtual time in nanoseconds since the start of the run. */
    long nowNanos();
}
