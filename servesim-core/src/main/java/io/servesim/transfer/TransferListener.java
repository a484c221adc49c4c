package io.servesim.transfer;

/** Told when a transfer job has moved all its bytes (at the event's virtual time). */
@FunctionalInterface
public interface TransferListener {
    /** Job {@code jobId} completed. */
    void onTransferComplete(int jobId);
}
