package io.servesim.engine;

import io.servesim.transfer.TransferListener;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;

/** Routes transfer completions to the copy (G2 store or load, KVCR pull) that started them. */
public final class CopyJobs implements TransferListener {
    /** A copy in flight; completed by the transfer service's listener. */
    interface Job {
        /** The copy landed. */
        void done();

        /** The copy was cancelled because an end of it failed: undo its holds on what survives. */
        default void abort() {}
    }

    private final Int2ObjectOpenHashMap<Job> jobs = new Int2ObjectOpenHashMap<>();

    /** Registers the copy behind transfer {@code id}. */
    void add(int id, Job job) {
        jobs.put(id, job);
    }

    /** Forgets transfer {@code id} (cancelled), returning its copy or null. */
    Job remove(int id) {
        return jobs.remove(id);
    }

    @Override
    public void onTransferComplete(int jobId) {
        Job job = jobs.remove(jobId);
        if (job != null) {
            job.done();
        }
    }

    /** Copies in flight. */
    public int inFlight() {
        return jobs.size();
    }
}
