package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * G2 store / load round trip by hand. One rank, 5 GPU blocks (4 usable) of 16 tokens, 1 MB of KV per token (16 MB
 * per block), copies at 32 GB/s each way (0.5 ms per block), prefill step 20 ms, decode step 10 ms.
 *
 * <pre>
 * A  t=0    prompt 1..32 (2 blocks), 2 outputs: prefill [0,20), decode [20,30).
 *           At step 2's start (20 ms) A's 2 cached blocks are stored: pinned, copy 1 ms, ready in G2 at 21 ms.
 * D  t=40   prompt of 48 other tokens (3 blocks): evicts A's 2nd block (free queue 4,3,2,1: D takes 4,3,2).
 * C  t=100  prompt = A's 32 tokens + 16 new (48 tokens; at most 2 blocks can hit).
 *           100: the step first stores D's 3 blocks (pinned until 101.5 ms); C hits A's 1st block in G1 and
 *                A's 2nd in G2, but G1 has 1 free block for 2 needed: C waits (copies in flight, not stuck).
 *           101.5: D's copy lands, pins released; C starts loading 1 block (0.5 ms).
 *           102: the load lands; C is scheduled with 32 computed tokens; prefill of 16 tokens [102,122).
 * </pre>
 */
class HostOffloadTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    /** A, D and C as above, then {@code more} rows; G2 of {@code hostBlocks}, host-to-GPU copies at {@code h2d}. */
    private RunResult run(int hostBlocks, String h2d, String more, String... sets) throws IOException {
        Path trace = tmp.resolve("g2.jsonl");
        String c = TokenIds.concat(1, 32, 2001, 2016);
        Files.writeString(
                trace,
                "{\"arrival_ms\":0,\"output_length\":2,\"input_token_ids\":" + TokenIds.range(1, 32) + "}\n"
                        + "{\"arrival_ms\":40,\"output_length\":1,\"input_token_ids\":" + TokenIds.range(1001, 1048)
                        + "}\n"
                        + "{\"arrival_ms\":100,\"output_length\":1,\"input_token_ids\":" + c + "}\n"
                        + more);
        List<String> all = new java.util.ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace,
                "engine.kv_cache.block_size=16",
                "engine.kv_cache.num_gpu_blocks=5",
                "engine.kv_cache.bytes_per_token=1000000",
                "engine.kv_cache.host_offload.num_host_blocks=" + hostBlocks,
                "engine.kv_cache.host_offload.d2h_gbytes_per_s=32",
                "engine.kv_cache.host_offload.h2d_gbytes_per_s=" + h2d,
                "timing.type=fixed",
                "engine.scheduler.async_scheduling=false", // these hand-computed times follow the synchronous loop
                "timing.fixed.prefill_ms=20",
                "timing.fixed.decode_ms=10"));
        all.addAll(List.of(sets));
        return Simulation.run(ConfigLoader.fromYaml("", "test", all));
    }

    private RunResult run(int hostBlocks) throws IOException {
        return run(hostBlocks, "32", "");
    }

    @Test
    void blocksStoredAfterTheirStep_areLoadedBackAsynchronously_pastTheG1Hit() throws IOException {
        RunResult r = run(16);
        RequestLog log = r.log();
        int c = log.indicesByRequestId()[2];
        assertThat(log.firstScheduledNanos(c)).isEqualTo(102 * MS);
        assertThat(log.firstTokenNanos(c)).isEqualTo(122 * MS);
        assertThat(log.cachedTokens(c)).isEqualTo(32);
        assertThat(r.counters().firstAdmissionG2Tokens()).isEqualTo(16); // one block from G2, one from G1
        assertThat(r.counters().g2StoreBytes()).isEqualTo(5 * 16_000_000L); // A's 2 blocks + D's 3 blocks
        assertThat(r.counters().g2LoadBytes()).isEqualTo(16_000_000L);
        assertThat(r.counters().g2Loads()).isEqualTo(1);
    }

    /**
     * A client that gives up while its request's G2 load is in flight (vLLM's {@code finish_requests} on a request in
     * {@code WAITING_FOR_REMOTE_KVS}: {@code delay_free_blocks} until its receive finishes). As above, with host-to-GPU
     * copies at 0.32 GB/s (50 ms a block) and clients giving up after 40 ms: A completes at 30 and D at 60, inside
     * theirs; C starts loading its G2 block at 101.5 ms, holding 2 blocks (its G1 hit and the block loading: vLLM
     * allocates a request waiting for remote KV only the blocks of its external tokens), its client gives up at 140,
     * and the load lands at 151.5, when C's blocks are freed. E (48 new tokens, 3 blocks) arrives at 141 and finds 2
     * free blocks until then: it is admitted at 151.5 and its prefill ends at 171.5 (before its own deadline, 181).
     */
    @Test
    void aRequestAbortedWhileItsG2LoadIsInFlight_keepsItsBlocksUntilTheLoadLands() throws IOException {
        RunResult r = run(
                16,
                "0.32",
                "{\"arrival_ms\":141,\"output_length\":1,\"input_token_ids\":" + TokenIds.range(5001, 5048) + "}\n",
                "workload.client_timeout_s=0.04");
        RequestLog log = r.log();
        int[] row = log.indicesByRequestId();
        assertThat(log.status(row[0]).status()).isEqualTo("completed");
        assertThat(log.status(row[1]).status()).isEqualTo("completed");
        assertThat(log.status(row[2]).status()).isEqualTo("timed_out");
        assertThat(log.outputTokens(row[2])).isZero();
        assertThat(r.counters().g2Loads()).isEqualTo(1);
        int e = row[3];
        assertThat(log.status(e).status()).isEqualTo("completed");
        assertThat(log.firstScheduledNanos(e)).isEqualTo(151_500_000L); // not 141: C's blocks wait for the load
        assertThat(log.firstTokenNanos(e)).isEqualTo(171_500_000L);
    }

    @Test
    void withoutG2_theEvictedBlockIsRecomputed() throws IOException {
        RunResult r = run(0);
        RequestLog log = r.log();
        int c = log.indicesByRequestId()[2];
        // C hits only A's first block (16 tokens) and computes 32 at once: [100, 120)
        assertThat(log.cachedTokens(c)).isEqualTo(16);
        assertThat(log.firstTokenNanos(c)).isEqualTo(120 * MS);
        assertThat(r.counters().g2StoreBytes()).isZero();
    }

    /**
     * Two workers, round robin: A (worker 0) at 0 stores its 2 blocks at its second step (20 ms, landing at 21);
     * X (worker 1) at 1 ms; Y (worker 0) at 50 ms; C (worker 1) at 100 ms with A's 32 tokens + 16 new. With one
     * cluster-shared G2, worker 1 loads A's 2 blocks; with rank-local G2 it has nothing to load.
     */
    @Test
    void clusterSharedG2_servesBlocksStoredByAnotherWorker_rankLocalDoesNot() throws IOException {
        Path trace = tmp.resolve("shared.jsonl");
        String c = TokenIds.concat(1, 32, 2001, 2016);
        Files.writeString(
                trace,
                "{\"arrival_ms\":0,\"output_length\":2,\"input_token_ids\":" + TokenIds.range(1, 32) + "}\n"
                        + "{\"arrival_ms\":1,\"output_length\":1,\"input_token_ids\":" + TokenIds.range(3001, 3004)
                        + "}\n"
                        + "{\"arrival_ms\":50,\"output_length\":1,\"input_token_ids\":" + TokenIds.range(4001, 4004)
                        + "}\n"
                        + "{\"arrival_ms\":100,\"output_length\":1,\"input_token_ids\":" + c + "}\n");
        for (String scope : List.of("cluster_shared", "rank_local")) {
            RunResult r = Simulation.run(ConfigLoader.fromYaml(
                    "",
                    "test",
                    List.of(
                            "workload.type=trace",
                            "workload.trace.format=servesim",
                            "workload.trace.path=" + trace,
                            "cluster.workers=2",
                            "cluster.router.policy=round_robin",
                            "engine.kv_cache.block_size=16",
                            "engine.kv_cache.num_gpu_blocks=64",
                            "engine.kv_cache.host_offload.num_host_blocks=64",
                            "engine.kv_cache.host_offload.scope=" + scope,
                            "timing.type=fixed")));
            RequestLog log = r.log();
            int ci = log.indicesByRequestId()[3];
            assertThat(log.worker(ci)).isEqualTo(1);
            assertThat(log.g2Tokens(ci)).as(scope).isEqualTo(scope.equals("cluster_shared") ? 32 : 0);
        }
    }
}
