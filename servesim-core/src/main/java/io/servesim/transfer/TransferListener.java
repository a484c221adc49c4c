package io.servesim.transfer;

/** Told when a transfer job has moved all its bytes (at the event's virtual time). */
@FunctionalInterface
public interface TransferListener {
    /** Job {@code jobId} (with the caller's {@code tag}) completed. */
    void onTransferComplete(int jobId, long tag);
}
