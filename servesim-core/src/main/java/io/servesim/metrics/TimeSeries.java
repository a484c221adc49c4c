package io.servesim.metrics;

import it.unimi.dsi.fastutil.doubles.DoubleArrayList;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;

/**
 * Samples of the cluster (and optionally each worker) at a fixed virtual-time tick, stored column-wise. Columns
 * follow vLLM's own metrics where one exists (docs/metrics.md): running and waiting requests
 * ({@code vllm:num_requests_running/waiting}), KV-cache usage ({@code vllm:kv_cache_usage_perc}), prompt and
 * generation throughput over the last tick ({@code rate(vllm:prompt_tokens_total)},
 * {@code rate(vllm:generation_tokens_total)}).
 */
public final class TimeSeries {
    /** CSV columns, in order ({@code worker} is -1 for the cluster row). */
    public static final String HEADER = "t_s,worker,running,waiting,kv_cache_pct,g2_cache_pct,prompt_throughput,"
            + "gen_throughput,completed,kvcr_moving,kvcr_bytes_per_s\n";

    /**
     * CSV columns of a disaggregated run: the last two count the prefill-to-decode transfers instead of KVCR pulls
     * (KVCR is off there): transfers moving at the tick and bytes staged per second over the last tick.
     */
    public static final String HEADER_PD = "t_s,worker,running,waiting,kv_cache_pct,g2_cache_pct,prompt_throughput,"
            + "gen_throughput,completed,pd_moving,pd_bytes_per_s\n";

    /** The CSV header of a run, disaggregated or not. */
    public static String header(boolean disaggregated) {
        return disaggregated ? HEADER_PD : HEADER;
    }

    private final LongArrayList timeNanos = new LongArrayList();
    private final IntArrayList worker = new IntArrayList();
    private final IntArrayList running = new IntArrayList();
    private final IntArrayList waiting = new IntArrayList();
    private final DoubleArrayList kvPct = new DoubleArrayList();
    private final DoubleArrayList g2Pct = new DoubleArrayList();
    private final DoubleArrayList promptTps = new DoubleArrayList();
    private final DoubleArrayList genTps = new DoubleArrayList();
    private final LongArrayList completed = new LongArrayList();
    private final IntArrayList kvcrMoving = new IntArrayList();
    private final DoubleArrayList kvcrBytesPerS = new DoubleArrayList();

    /** Appends one sample. */
    public void add(
            long tNanos,
            int workerId,
            int runningRequests,
            int waitingRequests,
            double kvCachePct,
            double g2CachePct,
            double promptTokensPerS,
            double genTokensPerS,
            long completedInTick,
            int movingPulls,
            double pullBytesPerS) {
        timeNanos.add(tNanos);
        worker.add(workerId);
        running.add(runningRequests);
        waiting.add(waitingRequests);
        kvPct.add(kvCachePct);
        g2Pct.add(g2CachePct);
        promptTps.add(promptTokensPerS);
        genTps.add(genTokensPerS);
        completed.add(completedInTick);
        kvcrMoving.add(movingPulls);
        kvcrBytesPerS.add(pullBytesPerS);
    }

    /** The virtual time of sample {@code i}, ns. */
    public long timeNanos(int i) {
        return timeNanos.getLong(i);
    }

    /** Number of rows. */
    public int size() {
        return timeNanos.size();
    }

    /** Appends row {@code i} as a CSV line (Locale.ROOT, fixed decimals). */
    public void appendRow(int i, StringBuilder sb) {
        sb.append(Numbers.fixedString(timeNanos.getLong(i) / 1e9, 3)).append(',');
        sb.append(worker.getInt(i)).append(',');
        sb.append(running.getInt(i)).append(',');
        sb.append(waiting.getInt(i)).append(',');
        sb.append(Numbers.fixedString(kvPct.getDouble(i), 3)).append(',');
        sb.append(Numbers.fixedString(g2Pct.getDouble(i), 3)).append(',');
        sb.append(Numbers.fixedString(promptTps.getDouble(i), 3)).append(',');
        sb.append(Numbers.fixedString(genTps.getDouble(i), 3)).append(',');
        sb.append(completed.getLong(i)).append(',');
        sb.append(kvcrMoving.getInt(i)).append(',');
        sb.append(Numbers.fixedString(kvcrBytesPerS.getDouble(i), 3)).append('\n');
    }
}
