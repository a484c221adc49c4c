package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.engine.KvcrRegistry.PullState;
import io.servesim.metrics.RequestLog;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every state of a KVCR pull, stopped at hand-computed instants with {@link Simulation#runUntil}. Three workers,
 * round robin; prefill step 10 ms + 1 ms per token, decode step 10 ms (a mixed step pays both); 16-token blocks,
 * 1 MB of KV per token; NIC 50 GB/s, first byte 1 ms. Requests (round robin assigns them in arrival order):
 *
 * <pre>
 * id 0  turn 0 of session s, t=0,  tokens 1..32, 1 output      → w0: prefill [0, 42), caches 2 blocks
 * id 1  X, t=1,  50 tokens, 3 outputs                           → w1: prefill [1, 61), decodes [61, 71), [71, ...)
 * id 2  Y, t=2,  10 tokens, 1 output                            → w2: [2, 22); w2 never takes part in a pull
 * id 3  Z, t=3,  10 tokens, 1 output                            → w0: waits for turn 0, runs [42, 62)
 * id 4  turn 1 of s, released at 42: tokens 1..32 + 16 new      → w1, hinted at w0 (2 blocks)
 *
 * w1 is busy until 61. At 61 it schedules X's decode and admits turn 1: it stages a pull of 2 blocks = 32 MB:
 *   parked [61, 62), moving [62, 62.64) at 50 GB/s, landed at 62.64 while w1 is mid-step (landed-but-unconsumed),
 *   consumed by the admission at 71 (completed): step [71, 107) = 10 + 16 prefill + 10 decode: TTFT 107 - 42 = 65.
 * </pre>
 */
class KvcrLifecycleTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    private Simulation sim(String... extra) throws IOException {
        Path trace = tmp.resolve("lifecycle.jsonl");
        Files.writeString(
                trace,
                row(0, "\"s\"", 1, TokenIds.range(1, 32))
                        + row(1, null, 3, TokenIds.range(2001, 2050))
                        + row(2, null, 1, TokenIds.range(3001, 3010))
                        + row(3, null, 1, TokenIds.range(4001, 4010))
                        + "{\"session_id\":\"s\",\"output_length\":1,\"input_token_ids\":"
                        + TokenIds.concat(1, 32, 500, 515) + "}\n");
        List<String> sets = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace,
                "cluster.workers=3",
                "cluster.router.policy=round_robin",
                "engine.kv_cache.block_size=16",
                "engine.kv_cache.bytes_per_token=1000000",
                "engine.kvcr.enabled=true",
                "engine.kvcr.bandwidth_gbytes_per_s=50",
                "engine.kvcr.first_byte_ms=1",
                "timing.type=fixed",
                "engine.scheduler.async_scheduling=false", // these hand-computed times follow the synchronous loop
                "timing.fixed.prefill_ms=10",
                "timing.fixed.prefill_per_token_ms=1",
                "timing.fixed.decode_ms=10"));
        sets.addAll(List.of(extra));
        return new Simulation(ConfigLoader.fromYaml("", "test", sets));
    }

    private static String row(int arrivalMs, String session, int outputs, String tokens) {
        return "{\"arrival_ms\":" + arrivalMs + (session == null ? "" : ",\"session_id\":" + session)
                + ",\"output_length\":" + outputs + ",\"input_token_ids\":" + tokens + "}\n";
    }

    private static int turn1(RequestLog log) {
        return log.indicesByRequestId()[4];
    }

    @Test
    void emptyRegistry_hasNoPulls_andWakesNoRank() throws IOException {
        Simulation s = sim().runUntil(60 * MS);
        KvcrRegistry r = s.kvcr();
        assertThat(r.activePulls()).isZero();
        assertThat(r.landedUnconsumed()).isZero();
        for (int g = 0; g < 3; g++) {
            assertThat(s.rank(g).registryWakeups()).isZero();
        }
    }

    @Test
    void stagedPull_isParkedUntilItsFirstByte_andTheSourceHoldsItsBlocks() throws IOException {
        Simulation s = sim().runUntil(61_500_000L);
        KvcrRegistry r = s.kvcr();
        assertThat(r.activePulls()).isEqualTo(1);
        assertThat(r.count(PullState.PARKED)).isEqualTo(1);
        assertThat(r.count(PullState.MOVING)).isZero();
        assertThat(s.rank(0).scheduler().heldForPulls()).isEqualTo(2);
        assertThat(s.counters().kvcrStaged()).isEqualTo(1);
        assertThat(s.rank(1).scheduler().numLoading()).isEqualTo(1);
    }

    @Test
    void parkedPull_movesFromItsFirstByte_untilItsBytesLand() throws IOException {
        Simulation s = sim().runUntil(62_300_000L);
        KvcrRegistry r = s.kvcr();
        assertThat(r.count(PullState.PARKED)).isZero();
        assertThat(r.count(PullState.MOVING)).isEqualTo(1);
        assertThat(s.counters().kvcrLanded()).isZero();
        assertThat(s.rank(0).scheduler().heldForPulls()).isEqualTo(2);
    }

    @Test
    void pullLandingOnABusyDestination_isLandedButUnconsumed_untilItsNextStep() throws IOException {
        Simulation s = sim().runUntil(65 * MS);
        KvcrRegistry r = s.kvcr();
        assertThat(r.activePulls()).isZero();
        assertThat(s.counters().kvcrLanded()).isEqualTo(1);
        assertThat(s.counters().kvcrCompleted()).isZero();
        assertThat(r.landedUnconsumed()).isEqualTo(1);
        assertThat(s.rank(0).scheduler().heldForPulls()).isZero(); // released when the bytes landed
        assertThat(s.rank(1).scheduler().heldByWaiting()).isEqualTo(2);
        assertThat(s.rank(1).scheduler().waitingHead().request().id()).isEqualTo(4);
        // the landing woke exactly the two ranks it involves, once each
        assertThat(s.rank(0).registryWakeups()).isEqualTo(1);
        assertThat(s.rank(1).registryWakeups()).isEqualTo(1);
        assertThat(s.rank(2).registryWakeups()).isZero();
    }

    @Test
    void landedPull_isCompletedByTheAdmissionThatConsumesIt() throws IOException {
        RunResult result = sim().run();
        RequestLog log = result.log();
        int t1 = turn1(log);
        assertThat(result.counters().kvcrCompleted()).isEqualTo(1);
        assertThat(log.worker(t1)).isEqualTo(1);
        assertThat(log.firstScheduledNanos(t1)).isEqualTo(71 * MS);
        assertThat(log.firstTokenNanos(t1) - log.arrivalNanos(t1)).isEqualTo(65 * MS);
        assertThat(log.remoteTokens(t1)).isEqualTo(32);
        assertThat(log.pullNanos(t1)).isEqualTo(1_640_000L);
        assertThat(result.counters().kvcrParkedNanos().stats(1e-6).mean()).isEqualTo(1.0);
        assertThat(result.counters().kvcrMovingPeak()).isEqualTo(1);
        assertThat(result.counters().kvcrRegistryWakeups()).isEqualTo(2);
    }

    @Test
    void pullWhoseDestinationFails_isSourceOnly_andTheSourceHoldsItsBlocksUntilTheBytesStop() throws IOException {
        Simulation s = sim("cluster.events=[{at_ms: 61.5, worker: 1, action: fail}]");
        s.runUntil(61_800_000L);
        assertThat(s.kvcr().count(PullState.SOURCE_ONLY)).isEqualTo(1);
        assertThat(s.counters().kvcrSourceOnly()).isEqualTo(1);
        s.runUntil(62_600_000L);
        assertThat(s.rank(0).scheduler().heldForPulls()).isEqualTo(2); // bytes still in flight
        s.runUntil(62_640_000L);
        assertThat(s.rank(0).scheduler().heldForPulls()).isZero();
        assertThat(s.kvcr().activePulls()).isZero();
        RunResult result = s.run();
        assertThat(result.counters().kvcrLanded()).isZero();
        assertThat(result.counters().kvcrCompleted()).isZero();
        assertThat(result.counters().restarts()).isEqualTo(2); // X and turn 1 were on w1
        RequestLog log = result.log();
        for (int i = 0; i < log.size(); i++) {
            assertThat(log.status(i).status()).isEqualTo("completed");
        }
    }

    @Test
    void pullWhoseSourceFails_isAborted_andTheDestinationRecomputesThoseTokens() throws IOException {
        Simulation s = sim("cluster.events=[{at_ms: 62.3, worker: 0, action: fail}]");
        RunResult result = s.run();
        RequestLog log = result.log();
        int t1 = turn1(log);
        assertThat(result.counters().kvcrAborted()).isEqualTo(1);
        assertThat(result.counters().kvcrLanded()).isZero();
        assertThat(result.counters().restarts()).isZero(); // w0 was idle: Z finished at 62
        assertThat(log.worker(t1)).isEqualTo(1);
        assertThat(log.remoteTokens(t1)).isZero();
        assertThat(log.pullSource(t1)).isEqualTo(-1);
        // step [71, 139) = 10 + 48 prefill + 10 decode (X): the whole prompt recomputed
        assertThat(log.firstTokenNanos(t1) - log.arrivalNanos(t1)).isEqualTo(97 * MS);
        assertThat(s.rank(1).scheduler().pool().freeBlocks())
                .isEqualTo(s.rank(1).scheduler().pool().usableBlocks());
    }

    @Test
    void hintAtAFailedWorker_isRejectedAsFailedSource() throws IOException {
        // w0 fails at 50, after turn 1 was routed to w1 with its hint at w0 (42) and before w1 admits it (61)
        RunResult result =
                sim("cluster.events=[{at_ms: 50, worker: 0, action: fail}]").run();
        assertThat(result.counters().kvcrRejectedFailed()).isEqualTo(1);
        assertThat(result.counters().kvcrStaged()).isZero();
        assertThat(result.counters().restarts()).isEqualTo(1); // Z was running on w0
    }

    /**
     * Detached: two workers, 5 usable blocks per rank. X (40 tokens, 20 outputs) runs on w1 from 1 ms holding 3
     * blocks; turn 1 reaches w1 at 42 and, at w1's step at 51, pulls its 2 blocks (landed at 52.64). It cannot be
     * admitted (it needs a third block, none is free). At 131 X's decode needs its 4th block: rather than preempt
     * itself, the only running request makes the landed pull give its blocks back (detached; they stay cached).
     * When X finishes (241) turn 1 still hits its first block on w1 and pulls the second again, which completes. The
     * full-sequence admission gate is off (vLLM before v0.19.0): with it, turn 1's pull would wait for its whole
     * sequence's three blocks and never land early.
     */
    @Test
    void landedPull_whoseRequestGivesItsBlocksBack_isDetached() throws IOException {
        Path trace = tmp.resolve("detach.jsonl");
        Files.writeString(
                trace,
                row(0, "\"s\"", 1, TokenIds.range(1, 32))
                        + row(1, null, 20, TokenIds.range(2001, 2040))
                        + row(2, null, 1, TokenIds.range(4001, 4004))
                        + "{\"session_id\":\"s\",\"output_length\":1,\"input_token_ids\":"
                        + TokenIds.concat(1, 32, 500, 515) + "}\n");
        Simulation s = new Simulation(ConfigLoader.fromYaml(
                "",
                "test",
                List.of(
                        "workload.type=trace",
                        "workload.trace.format=servesim",
                        "workload.trace.path=" + trace,
                        "cluster.workers=2",
                        "cluster.router.policy=round_robin",
                        "engine.kv_cache.block_size=16",
                        "engine.kv_cache.num_gpu_blocks=6",
                        "engine.scheduler.reserve_full_isl=false",
                        "engine.kv_cache.bytes_per_token=1000000",
                        "engine.kvcr.enabled=true",
                        "timing.type=fixed",
                        "engine.scheduler.async_scheduling=false", // these hand-computed times follow the synchronous
                        // loop
                        "timing.fixed.prefill_ms=10",
                        "timing.fixed.prefill_per_token_ms=1",
                        "timing.fixed.decode_ms=10")));
        s.runUntil(100 * MS);
        assertThat(s.kvcr().landedUnconsumed()).isEqualTo(1);
        assertThat(s.counters().kvcrDetached()).isZero();
        s.runUntil(131 * MS);
        assertThat(s.counters().kvcrDetached()).isEqualTo(1);
        assertThat(s.kvcr().landedUnconsumed()).isZero();
        RunResult result = s.run();
        RequestLog log = result.log();
        int t1 = log.indicesByRequestId()[3];
        assertThat(result.counters().kvcrStaged()).isEqualTo(2);
        assertThat(result.counters().kvcrCompleted()).isEqualTo(1);
        assertThat(log.status(t1).status()).isEqualTo("completed");
        assertThat(log.firstScheduledNanos(t1)).isEqualTo(242_320_000L); // 241 + 1 ms first byte + 16 MB at 50 GB/s
        assertThat(log.remoteTokens(t1)).isEqualTo(16);
    }
}
