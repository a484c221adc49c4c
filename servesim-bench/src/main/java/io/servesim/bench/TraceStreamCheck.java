package io.servesim.bench;

import io.servesim.config.ConfigLoader;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

/**
 * Streaming check: writes a synthetic Mooncake trace of N rows (default 2,000,000) to a temporary {@code .gz} file,
 * replays it on 16 workers, and prints the replay time and the peak heap, so it can be run with a small
 * {@code -Xmx} to show that the reader never loads the trace.
 *
 * {@snippet lang="shell" :
 * bash scripts/stream-check.sh 2000000
 * }
 */
public final class TraceStreamCheck {
    private TraceStreamCheck() {}

    /** Runs the check; the argument is the row count. */
    public static void main(String[] args) throws IOException {
        long rows = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000L;
        Path trace = Files.createTempFile("servesim-stream-", ".jsonl.gz");
        try {
            long t0 = System.nanoTime();
            try (BufferedWriter w = new BufferedWriter(new OutputStreamWriter(
                    new GZIPOutputStream(Files.newOutputStream(trace), 1 << 16), StandardCharsets.UTF_8))) {
                StringBuilder sb = new StringBuilder(128);
                for (long i = 0; i < rows; i++) {
                    sb.setLength(0);
                    // 1 ms apart; 64-token prompts whose single hash id repeats every 1,000 rows; 4 output tokens
                    sb.append("{\"timestamp\": ")
                            .append(i)
                            .append(", \"input_length\": 64, \"output_length\": 4, \"hash_ids\": [")
                            .append(i % 1000)
                            .append("]}\n");
                    w.append(sb);
                }
            }
            long t1 = System.nanoTime();
            RunResult r = Simulation.run(ConfigLoader.fromYaml(
                    "",
                    "stream-check",
                    List.of(
                            "workload.type=trace",
                            "workload.trace.format=mooncake",
                            "workload.trace.path=" + trace,
                            "workload.trace.trace_block_size=64",
                            "cluster.workers=16",
                            "engine.kv_cache.num_gpu_blocks=2048",
                            "engine.scheduler.max_num_seqs=256",
                            "timing.type=fixed",
                            "timing.fixed.prefill_ms=4",
                            "timing.fixed.decode_ms=2",
                            "output.requests_csv=false")));
            long t2 = System.nanoTime();
            long peak = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP) {
                    peak += pool.getPeakUsage().getUsed();
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "rows %d, trace %.1f MB gz written in %.1f s; replayed %d requests (%d completed records) in %.1f s"
                            + " (%.1f us/request); max heap %d MB, peak heap used %d MB%n",
                    rows,
                    Files.size(trace) / 1e6,
                    (t1 - t0) / 1e9,
                    r.requestsCreated(),
                    r.log().size(),
                    (t2 - t1) / 1e9,
                    (t2 - t1) / 1e3 / Math.max(1, r.requestsCreated()),
                    Runtime.getRuntime().maxMemory() >> 20,
                    peak >> 20);
        } finally {
            Files.deleteIfExists(trace);
        }
    }
}
