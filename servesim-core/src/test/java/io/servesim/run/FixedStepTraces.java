package io.servesim.run;

import io.servesim.metrics.RequestLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Hand-computed replays' common ground: a trace file of the given rows, one rank, constant 10 ms steps. */
final class FixedStepTraces {
    private FixedStepTraces() {}

    /**
     * The overrides of a replay of {@code rows} (servesim trace format) on one rank whose every step takes 10 ms, with a
     * token budget of 1,000 and 64 blocks of 16 tokens; callers add what their case needs.
     */
    static List<String> sets(String rows) {
        return new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace(rows),
                "timing.type=fixed",
                "timing.fixed={step_ms: 10, prefill_ms: 0, decode_ms: 0}",
                "engine.scheduler.max_num_batched_tokens=1000",
                "engine.kv_cache.num_gpu_blocks=64",
                "engine.kv_cache.block_size=16"));
    }

    /** A temporary trace file holding {@code rows}. */
    static String trace(String rows) {
        try {
            Path p = Files.createTempFile("trace", ".jsonl");
            p.toFile().deleteOnExit();
            Files.writeString(p, rows);
            return p.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The row of request {@code id} in {@code log}. */
    static int row(RequestLog log, int id) {
        for (int i = 0; i < log.size(); i++) {
            if (log.requestId(i) == id) {
                return i;
            }
        }
        throw new AssertionError("no row for request " + id);
    }
}
