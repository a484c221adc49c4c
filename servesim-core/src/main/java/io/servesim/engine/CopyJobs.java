package io.servesim.engine;

import io.servesim.transfer.TransferListener;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;

/** Routes transfer completions to the G2 copy that started them. */
public final class CopyJobs implements TransferListener {
    final Int2ObjectOpenHashMap<HostOffload.Job> jobs = new Int2ObjectOpenHashMap<>();

    @Override
    public void onTransferComplete(int jobId, long tag) {
        HostOffload.Job job = jobs.remove(jobId);
        if (job != null) {
            job.done();
        }
    }

    /** Copies in flight. */
    public int inFlight() {
        return jobs.size();
    }
}
