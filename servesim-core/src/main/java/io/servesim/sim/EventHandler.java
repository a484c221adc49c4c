package io.servesim.sim;

/** A component that receives its own scheduled wake-ups; {@code kind} and {@code payload} are its own. */
@FunctionalInterface
public interface EventHandler {
    /** Handles one event that this component scheduled earlier. */
    void onEvent(int kind, long payload);
}
