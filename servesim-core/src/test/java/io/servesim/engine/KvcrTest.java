package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.report.ReportWriter;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KVCR pulls by hand. Two workers, round robin; a two-turn session: turn 0 (prompt 1..32) runs on worker 0, turn 1
 * (prompt 1..32 + 16 new tokens) lands on worker 1 with a hint at worker 0, which holds 2 of its blocks. Prefill step
 * 10 ms + 1 ms per token, decode step 10 ms; 16-token blocks, 1 MB of KV per token; NIC 50 GB/s, first byte 1 ms.
 *
 * <pre>
 * turn 0: prefill 32 tokens [0, 42): its only token at 42 ms; worker 0 caches 2 blocks. Turn 1 released at 42.
 * KVCR off: worker 1 computes 48 tokens [42, 100): TTFT 58 ms.
 * KVCR on:  pull 2 blocks = 32 MB: 1 ms + 0.64 ms, landed at 43.64; prefill of the other 16 tokens
 *           [43.64, 69.64): TTFT 27.64 ms.
 * </pre>
 */
class KvcrTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    private RunResult run(String... extra) throws IOException {
        Path trace = tmp.resolve("session.jsonl");
        String turn1 = TokenIds.concat(1, 32, 500, 515);
        Files.writeString(
                trace,
                "{\"arrival_ms\":0,\"session_id\":\"s\",\"output_length\":1,\"input_token_ids\":"
                        + TokenIds.range(1, 32) + "}\n"
                        + "{\"session_id\":\"s\",\"output_length\":1,\"input_token_ids\":" + turn1 + "}\n");
        List<String> sets = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace,
                "cluster.workers=2",
                "cluster.router.policy=round_robin",
                "engine.kv_cache.block_size=16",
                "engine.kv_cache.bytes_per_token=1000000",
                "engine.kvcr.bandwidth_gbytes_per_s=50",
                "engine.kvcr.first_byte_ms=1",
                "timing.type=fixed",
                "timing.fixed.prefill_ms=10",
                "timing.fixed.prefill_per_token_ms=1",
                "timing.fixed.decode_ms=10"));
        sets.addAll(List.of(extra));
        return Simulation.run(ConfigLoader.fromYaml("", "test", sets));
    }

    @Test
    void migratedTurn_pullsThePrefixItsPreviousWorkerHolds_andItsTtftDropsByTheRecomputeSaved() throws IOException {
        RunResult off = run();
        RunResult on = run("engine.kvcr.enabled=true");
        RequestLog a = off.log();
        RequestLog b = on.log();
        int t1a = a.indicesByRequestId()[1];
        int t1b = b.indicesByRequestId()[1];
        assertThat(a.arrivalNanos(t1a)).isEqualTo(42 * MS);
        assertThat(a.worker(t1a)).isEqualTo(1);
        assertThat(a.hintWorker(t1a)).isZero();
        assertThat(a.hintBlocks(t1a)).isEqualTo(2);
        assertThat(a.firstTokenNanos(t1a) - a.arrivalNanos(t1a)).isEqualTo(58 * MS);
        assertThat(b.firstTokenNanos(t1b) - b.arrivalNanos(t1b)).isEqualTo(27_640_000L);
        assertThat(b.remoteTokens(t1b)).isEqualTo(32);
        assertThat(b.cachedTokens(t1b)).isEqualTo(32);
        assertThat(b.pullNanos(t1b)).isEqualTo(1_640_000L);
        assertThat(b.pullSource(t1b)).isZero();
        assertThat(on.counters().kvcrStaged()).isEqualTo(1);
        assertThat(on.counters().kvcrLanded()).isEqualTo(1);
        assertThat(on.counters().kvcrCompleted()).isEqualTo(1);
        assertThat(on.counters().kvcrBytes()).isEqualTo(32_000_000L);
    }

    @Test
    void costDecision_pullsOnlyWhenThePullBeatsRecomputing() throws IOException {
        // recomputing 32 tokens costs 10 + 32 = 42 ms; a 100 ms first byte makes the pull slower
        RunResult slow = run("engine.kvcr.enabled=true", "engine.kvcr.decision=cost", "engine.kvcr.first_byte_ms=100");
        RunResult fast = run("engine.kvcr.enabled=true", "engine.kvcr.decision=cost");
        assertThat(slow.counters().kvcrStaged()).isZero();
        assertThat(fast.counters().kvcrStaged()).isEqualTo(1);
    }

    @Test
    void enablingKvcr_withoutMigratedTurns_leavesEveryPerRequestResultIdentical() throws IOException {
        for (String example : List.of("quickstart.yaml", "synthetic.yaml")) {
            Path p = Path.of("..", "examples", example);
            List<String> small = example.equals("synthetic.yaml")
                    ? List.of("workload.synthetic.requests=2000")
                    : List.of("workload.sessions.sessions=300");
            List<String> on = new ArrayList<>(small);
            on.add("engine.kvcr.enabled=true");
            assertThat(requestsCsv(p, on)).as(example).isEqualTo(requestsCsv(p, small));
        }
    }

    private static String requestsCsv(Path config, List<String> sets) throws IOException {
        RunResult r = Simulation.run(ConfigLoader.load(config, sets));
        StringWriter w = new StringWriter();
        ReportWriter.writeRequestsCsv(r.log(), w);
        return w.toString();
    }

    @Test
    void stagingFromADrainingSource_isRejectedAndCounted_andTheTurnRecomputes() throws IOException {
        RunResult r = run("engine.kvcr.enabled=true", "cluster.events=[{at_ms: 41, worker: 0, action: drain}]");
        RequestLog log = r.log();
        int t1 = log.indicesByRequestId()[1];
        assertThat(log.worker(t1)).isEqualTo(1);
        assertThat(log.firstTokenNanos(t1) - log.arrivalNanos(t1)).isEqualTo(58 * MS); // recomputed
        assertThat(r.counters().kvcrRejectedDraining()).isEqualTo(1);
        assertThat(r.counters().kvcrStaged()).isZero();
    }
}
