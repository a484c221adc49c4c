package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.PdFacts;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestRecord;
import io.servesim.report.Summaries;
import io.servesim.report.Summary;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Disaggregated prefill/decode (docs/pd.md), hand-computed with fixed step times: prefill steps take 20 ms, decode
 * steps 10 ms, the synchronous engine loop; the KV moves at 1000 bytes per token over 1 GB/s NICs (1 byte/ns) after a
 * 1 ms first byte.
 */
class DisaggregationTest {
    private static final long MS = 1_000_000L;

    /** One prefill and one decode worker; requests of a 64-token prompt (4 blocks of 16) and 3 output tokens. */
    private static final String PD = """
            workload:
              type: synthetic
              synthetic:
                requests: 1
                input_tokens: {type: fixed, value: 64}
                output_tokens: {type: fixed, value: 3}
              arrival: {type: constant, rate: 1}
            engine:
              scheduler: {async_scheduling: false}
            timing:
              type: fixed
              fixed: {prefill_ms: 20, decode_ms: 10}
            cluster:
              mode: disaggregated
              prefill: {workers: 1}
              decode: {workers: 1}
              disagg:
                transfer: {first_byte_ms: 1.0, nic_gbytes_per_s: 1.0, bytes_per_token: 1000}
            """;

    private static SimConfig load(String... sets) {
        return ConfigLoader.fromYaml(PD, "pd.yaml", List.of(sets));
    }

    private static RequestRecord row(RunResult r, int requestId) {
        RequestLog log = r.log();
        return log.get(log.indicesByRequestId()[requestId]);
    }

    @Test
    void ttft_isPrefillStep_plusFirstByte_plusBytesOverBandwidth_plusTheOneTokenDecodeStep() {
        RunResult r = Simulation.run(load());
        RequestRecord q = row(r, 0);
        PdFacts pd = q.pd();
        // prefill worker 0: one 64-token prefill step, 0 -> 20 ms; the request goes to decode worker 1 at 20 ms, which
        // stages the pull at once; first byte at 21 ms, 64 tokens x 1000 B at 1 B/ns = 64 us: lands at 21.064 ms
        assertThat(pd.prefillWorker()).isZero();
        assertThat(pd.localPrefill()).isFalse();
        assertThat(pd.prefillDoneNanos()).isEqualTo(20 * MS);
        assertThat(pd.transferStartNanos()).isEqualTo(20 * MS);
        assertThat(pd.transferEndNanos()).isEqualTo(21 * MS + 64_000);
        assertThat(pd.transferBytes()).isEqualTo(64_000);
        assertThat(pd.transferTokens()).isEqualTo(64);
        // decode worker: num_computed = prompt - 1 = 63, so its first step computes 1 prompt token (a prefill token,
        // 20 ms) and samples the first output token; then two 10 ms decode steps
        assertThat(q.worker()).isEqualTo(1);
        assertThat(q.ttftNanos()).isEqualTo(20 * MS + MS + 64_000 + 20 * MS);
        assertThat(q.e2eNanos()).isEqualTo(q.ttftNanos() + 20 * MS);
        assertThat(q.queueNanos()).isZero(); // the prefill started on arrival
        assertThat(q.outputTokens()).isEqualTo(3);

        Summary s = Summaries.of(r);
        assertThat(s.pd().handoffs()).isEqualTo(1);
        assertThat(s.pd().transfers()).isEqualTo(1);
        assertThat(s.pd().bytes()).isEqualTo(64_000);
        assertThat(s.pd().transferMs().mean()).isEqualTo(1.064);
        assertThat(s.pd().prefillMs().mean()).isEqualTo(20.0);
        assertThat(s.pd().decodeFirstTokenMs().mean()).isEqualTo(20.0);
        // the prompt is prefilled (and counted) once, on the prefill worker
        assertThat(s.tokenCounts().firstAdmissionTokens()).isEqualTo(64);
        // the prefill pool reports its prefills (arrival to prefill end), the decode pool the requests
        assertThat(s.pools().get(0).completed()).isEqualTo(1);
        assertThat(s.pools().get(0).ttftMs().mean()).isEqualTo(20.0);
        assertThat(s.pools().get(1).completed()).isEqualTo(1);
        assertThat(s.pools().get(1).ttftMs().mean()).isEqualTo(41.064);
    }

    @Test
    void sglangPools_holdThePrefillPagesUntilRead_andTheDecodeSideJoinsTheBatchWhenTheKvLands() {
        // both pools run SGLang (its synchronous loop). The prefill worker's 64-token prefill batch (0-20 ms) keeps its
        // 4 pages after its one token; the decode worker sets the transfer up when the request arrives (pages
        // allocated: DecodePreallocQueue) and the KV lands at 21.064 ms with the first token, which the decode worker
        // streams at once (a prebuilt batch runs no forward): TTFT 21.064 ms, then two decode batches (10 ms each).
        // vLLM's decode side computes the first token itself (20 ms more, the test above)
        Simulation sim = new Simulation(load("engine.kind=sglang"));
        assertThat(sim.rank(0).scheduler()).isInstanceOf(io.servesim.engine.SglangScheduler.class);
        heldExactlyUntilTheReadEnds(sim);
        RunResult r = sim.run();
        RequestRecord q = row(r, 0);
        assertThat(q.pd().transferEndNanos()).isEqualTo(21 * MS + 64_000);
        assertThat(q.ttftNanos()).isEqualTo(20 * MS + MS + 64_000);
        assertThat(q.e2eNanos()).isEqualTo(q.ttftNanos() + 20 * MS);
        assertThat(q.outputTokens()).isEqualTo(3);
        assertThat(Summaries.of(r).tokenCounts().firstAdmissionTokens()).isEqualTo(64);
    }

    @Test
    void trtllmPools_holdTheContextBlocksUntilRead_andTheGenerationSideGetsTheFirstTokenWithTheKv() {
        // both pools run TensorRT-LLM (guaranteed_no_evict, synchronous loop): the same identity. The context server's
        // 64-token context (0-20 ms) keeps its 4 blocks; the generation server allocates the prompt's blocks for the
        // request (DISAGG_GENERATION_INIT, its 5 blocks to completion fit) and pulls. After landing the request is in
        // generation with the context server's first token: its first generation step (10 ms) computes that token and
        // samples the second, and the client gets both then (time to first token); one more step gives the third
        Simulation sim = new Simulation(load("engine.kind=trtllm"));
        assertThat(sim.rank(0).scheduler()).isInstanceOf(io.servesim.engine.TrtllmScheduler.class);
        heldExactlyUntilTheReadEnds(sim);
        RunResult r = sim.run();
        RequestRecord q = row(r, 0);
        assertThat(q.pd().transferEndNanos()).isEqualTo(21 * MS + 64_000);
        assertThat(q.ttftNanos()).isEqualTo(20 * MS + MS + 64_000 + 10 * MS);
        assertThat(q.e2eNanos()).isEqualTo(q.ttftNanos() + 10 * MS);
        assertThat(q.outputTokens()).isEqualTo(3);
        // vLLM's decode side instead computes the last prompt token (a 20 ms step with a prompt token) to sample the
        // first token itself, then generates two more
        RequestRecord v = row(Simulation.run(load("cluster.decode.engine={kind: vllm}", "engine.kind=trtllm")), 0);
        assertThat(v.ttftNanos()).isEqualTo(20 * MS + MS + 64_000 + 20 * MS);
        assertThat(v.e2eNanos()).isEqualTo(v.ttftNanos() + 20 * MS);
    }

    @Test
    void g2HostTier_servesBothPools_aPrefillWorkerLoadsARepeatedPromptFromTheHost() {
        // vLLM's MultiConnector (NIXL, then the offloading connector): a P/D decode request pulls its prompt from its
        // prefill worker; every other lookup may continue into the G2 tier. Prompts A, B, A (B shares nothing) one
        // second apart; the prefill worker has 5 usable blocks, so B evicts 3 of A's 4 blocks from its GPU
        List<String> sets = new ArrayList<>(List.of(
                "workload.synthetic.requests=3",
                "workload.synthetic.shared_prefix_tokens=64",
                "workload.synthetic.prefix_groups=2",
                "cluster.prefill={workers: 1, engine: {kv_cache: {num_gpu_blocks: 6}}}",
                "engine.kv_cache.bytes_per_token=1000",
                "engine.kv_cache.host_offload={num_host_blocks: 100, d2h_gbytes_per_s: 1.0, h2d_gbytes_per_s: 1.0,"
                        + " first_byte_ms: 1}"));
        RunResult r = Simulation.run(load(sets.toArray(String[]::new)));
        // B (at 1 s): its step's start stores A's 4 blocks (16,000 B each: 1 ms + 64 us at 1 B/ns), which pin them
        // and leave 1 free block: B waits for the copy, then prefills (20 ms) and evicts 3 of A's blocks
        assertThat(row(r, 1).pd().prefillDoneNanos()).isEqualTo(1000 * MS + MS + 64_000 + 20 * MS);
        // C (A's prompt, at 2 s): no GPU hit; the host has A's blocks, 3 of which it may load (its prompt less the last
        // token). Its step's start stores B's 4 blocks (pinned until 2.001064 s), then the load of 3 blocks (1 ms +
        // 48 us), then a 20 ms prefill of the last 16 tokens
        RequestRecord c = row(r, 2);
        assertThat(c.pd().prefillDoneNanos()).isEqualTo(2000 * MS + (MS + 64_000) + (MS + 48_000) + 20 * MS);
        assertThat(r.counters().g2LoadBytes()).isEqualTo(48_000);
        assertThat(r.counters().g2StoreBytes())
                .as("A's and B's blocks on the prefill worker; a decode worker stores no landed block")
                .isEqualTo(128_000);
        // its decode worker still holds A's first 3 blocks: it pulls only the last one (16 tokens: 1 ms + 16 us), then
        // computes the last prompt token (20 ms)
        assertThat(c.pd().transferTokens()).isEqualTo(16);
        assertThat(c.cachedTokens()).isEqualTo(48);
        assertThat(c.ttftNanos()).isEqualTo(c.pd().prefillDoneNanos() - 2000 * MS + MS + 16_000 + 20 * MS);
        // one block size in bytes for the whole tier: pools of another tensor parallelism are refused, by their path
        sets.add("cluster.decode={workers: 1, timing: {type: roofline, gpu: h100-sxm, model: llama-3.1-8b,"
                + " tensor_parallel: 2}}");
        sets.add("timing={type: roofline, gpu: h100-sxm, model: llama-3.1-8b}");
        sets.remove("engine.kv_cache.bytes_per_token=1000");
        assertThatThrownBy(() -> new Simulation(load(sets.toArray(String[]::new))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.decode.timing");
    }

    @Test
    void aTrtllmGenerationPool_takesPromptsLongerThanItsMaxNumTokens_asItRunsNoContextForThem() {
        // a vLLM prefill pool feeds a TensorRT-LLM generation pool without chunked context whose max_num_tokens (32) is
        // shorter than the 64-token prompt: a generation-only request runs no context, so it is not rejected
        List<String> sets = new ArrayList<>(List.of(
                "cluster.decode={workers: 1, engine: {kind: trtllm, trtllm: {max_num_tokens: 32}}}",
                "engine.scheduler.max_num_batched_tokens=2048"));
        RequestRecord q = row(Simulation.run(load(sets.toArray(String[]::new))), 0);
        assertThat(q.status().status()).isEqualTo("completed");
        assertThat(q.ttftNanos()).isEqualTo(20 * MS + MS + 64_000 + 10 * MS);
        // its prefill worker fails before the first byte (20.5 ms): the generation side recomputes the prompt, which
        // TRT-LLM would fail; servesim runs it in chunks of max_num_tokens (two 20 ms iterations), then decodes
        sets.add("cluster.events=[{at_ms: 20.5, worker: 0, action: fail}]");
        RequestRecord f = row(Simulation.run(load(sets.toArray(String[]::new))), 0);
        assertThat(f.status().status()).isEqualTo("completed");
        assertThat(f.pd().reprefilled()).isTrue();
        assertThat(f.ttftNanos()).isEqualTo(20 * MS + MS / 2 + 2 * 20 * MS);
        assertThat(f.e2eNanos()).isEqualTo(f.ttftNanos() + 2 * 10 * MS);
    }

    @Test
    void delayedFree_holdsThePrefillBlocksExactlyUntilTheReadEnds() {
        Simulation sim = new Simulation(load());
        heldExactlyUntilTheReadEnds(sim);
    }

    /**
     * The one request's 4 prompt blocks stay held by its finished prefill (rank 0) while the decode side (rank 1)
     * waits off the running list for the pull, until the read ends at 21.064 ms, and not a nanosecond longer.
     */
    private static void heldExactlyUntilTheReadEnds(Simulation sim) {
        sim.runUntil(21 * MS + 63_999);
        // all 4 prompt blocks (the partial-free last one too) are still held by the finished prefill
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isEqualTo(4);
        assertThat(sim.rank(0).scheduler().pool().usedBlocks()).isEqualTo(4);
        // the decode side allocated them on admission and waits off the running list (WAITING_FOR_REMOTE_KVS)
        assertThat(sim.rank(1).scheduler().numLoading()).isEqualTo(1);
        assertThat(sim.rank(1).scheduler().numRunning()).isZero();
        sim.runUntil(21 * MS + 64_000);
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isZero();
        assertThat(sim.rank(0).scheduler().pool().usedBlocks()).isZero();
        assertThat(sim.rank(1).scheduler().numLoading()).isZero();
    }

    @Test
    void twoConcurrentTransfersOnOneNic_shareIt_andTakeTwiceAsLong() {
        // two requests arrive together, prefill in one step and are pulled over the prefill worker's one NIC at once
        RunResult r = Simulation.run(load(
                "workload.synthetic.requests=2", "workload.arrival={type: concurrency, concurrency: 2, rate: null}"));
        for (int id = 0; id < 2; id++) {
            PdFacts pd = row(r, id).pd();
            assertThat(pd.transferStartNanos()).isEqualTo(20 * MS);
            // first byte, then 64,000 bytes each at half of 1 byte/ns
            assertThat(pd.transferNanos()).isEqualTo(MS + 2 * 64_000);
        }
        assertThat(Summaries.of(r).pd().movingPeak()).isEqualTo(2);
    }

    @Test
    void theFabricCap_bindsTransfersOnSeparateNics() {
        // two prefill and two decode workers, 10 GB/s NICs: each transfer has its own NIC pair, but a 1 GB/s fabric is
        // shared by both moving transfers (0.5 byte/ns each)
        List<String> sets = new ArrayList<>(List.of(
                "workload.synthetic.requests=2",
                "workload.arrival={type: concurrency, concurrency: 2, rate: null}",
                "cluster.prefill.workers=2",
                "cluster.decode.workers=2",
                "cluster.disagg.transfer.nic_gbytes_per_s=10.0"));
        RunResult free = Simulation.run(load(sets.toArray(String[]::new)));
        sets.add("cluster.disagg.transfer.fabric_gbytes_per_s=1.0");
        RunResult capped = Simulation.run(load(sets.toArray(String[]::new)));
        for (int id = 0; id < 2; id++) {
            assertThat(row(free, id).pd().prefillWorker()).isEqualTo(id);
            assertThat(row(free, id).pd().transferNanos()).isEqualTo(MS + 6_400);
            assertThat(row(capped, id).pd().transferNanos()).isEqualTo(MS + 128_000);
        }
    }

    /** Two requests whose prompts share their first 48 tokens (3 blocks), one second apart. */
    private static final String[] SHARED_PREFIX = {
        "workload.synthetic.requests=2",
        "workload.synthetic.shared_prefix_tokens=48",
        "workload.synthetic.prefix_groups=1"
    };

    @Test
    void destinationMissing_movesOnlyWhatTheDecodeWorkerLacks_fullPromptMovesEverything() {
        RunResult missing = Simulation.run(load(SHARED_PREFIX));
        // the second prompt's first 3 blocks are cached on the decode worker since the first request: 16 tokens move
        assertThat(row(missing, 0).pd().transferTokens()).isEqualTo(64);
        assertThat(row(missing, 1).pd().transferTokens()).isEqualTo(16);
        assertThat(row(missing, 1).pd().transferBytes()).isEqualTo(16_000);
        assertThat(row(missing, 1).pd().transferNanos()).isEqualTo(MS + 16_000);
        // the prefill worker's own cache hit the shared prefix too (reported as the request's cached tokens)
        assertThat(row(missing, 1).cachedTokens()).isEqualTo(48);

        List<String> full = new ArrayList<>(List.of(SHARED_PREFIX));
        full.add("cluster.disagg.transfer.mode=full_prompt");
        RunResult whole = Simulation.run(load(full.toArray(String[]::new)));
        assertThat(row(whole, 1).pd().transferTokens()).isEqualTo(64);
        assertThat(row(whole, 1).pd().transferBytes()).isEqualTo(64_000);
    }

    @Test
    void conditionalDisaggregation_prefillsLocallyWhenWhatTheDecodeWorkerLacksIsAtMostTheThreshold() {
        List<String> sets = new ArrayList<>(List.of(SHARED_PREFIX));
        sets.add("cluster.disagg.max_local_prefill_tokens=32");
        RunResult r = Simulation.run(load(sets.toArray(String[]::new)));
        // request 0: 64 uncached tokens > 32: remote prefill; request 1: 64 - 48 cached = 16 <= 32: on the decode
        // worker
        assertThat(row(r, 0).pd().localPrefill()).isFalse();
        assertThat(row(r, 0).pd().prefillWorker()).isZero();
        PdFacts local = row(r, 1).pd();
        assertThat(local.localPrefill()).isTrue();
        assertThat(local.prefillWorker()).isEqualTo(1);
        assertThat(local.transferBytes()).isZero();
        // one 16-token prefill step on the decode worker, then two decode steps
        assertThat(row(r, 1).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(r, 1).cachedTokens()).isEqualTo(48);
        assertThat(Summaries.of(r).pd().localPrefills()).isEqualTo(1);
        assertThat(Summaries.of(r).pd().handoffs()).isEqualTo(1);
    }

    @Test
    void aPrefillWorkerFailingMidTransfer_abortsThePull_andTheDecodeWorkerRecomputes() {
        // the prefill worker fails at 20.5 ms, while the pull waits for its first byte
        RunResult r = Simulation.run(load("cluster.events=[{at_ms: 20.5, worker: 0, action: fail}]"));
        RequestRecord q = row(r, 0);
        assertThat(q.status().status()).isEqualTo("completed");
        assertThat(q.pd().reprefilled()).isTrue();
        assertThat(q.pd().transferEndNanos()).isEqualTo(-1);
        // the decode worker recomputes the whole prompt at once: 20.5 + 20 ms to the first token
        assertThat(q.ttftNanos()).isEqualTo(40 * MS + MS / 2);
        Summary s = Summaries.of(r);
        assertThat(s.pd().aborted()).isEqualTo(1);
        assertThat(s.pd().reprefills()).isEqualTo(1);
    }

    @Test
    void aDecodeWorkerFailing_leavesThePrefillHoldToItsLease_andTheRequestStartsOverThroughDispatch() {
        // two decode workers; the first request's decode worker (1) fails while its pull waits for the first byte
        Simulation sim = new Simulation(
                load("cluster.decode.workers=2", "cluster.events=[{at_ms: 20.5, worker: 1, action: fail}]"));
        Invariants checks = new Invariants(sim.config()).watch(sim);
        sim.runUntil(30 * 1000 * MS);
        // NIXL's lease: 30 s from the prefill's end (20 ms), or two thirds of it from the last heartbeat (taken at the
        // failure, 20.5 ms: 20.0205 s), whichever is later; the 4 blocks stay held until then
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isEqualTo(4);
        sim.runUntil(30 * 1000 * MS + 20 * MS);
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isZero();
        RunResult r = sim.run();
        checks.atEnd(sim, r, sim.config());
        assertThat(checks.violations()).isEmpty();
        RequestRecord q = row(r, 0);
        assertThat(q.status().status()).isEqualTo("completed");
        assertThat(q.restarts()).isEqualTo(1);
        assertThat(q.worker()).isEqualTo(2);
        Summary.Pd pd = Summaries.of(r).pd();
        assertThat(pd.cancelled()).isEqualTo(1);
        assertThat(pd.expired()).isEqualTo(1);
        // it starts over at 20.5 ms: prefill again (its held blocks are cached there: 3 full blocks hit, 16 tokens run)
        assertThat(q.pd().prefillDoneNanos()).isEqualTo(40 * MS + MS / 2);
        // with kv_lease_s 0 the hold ends with the failure
        Simulation now = new Simulation(load(
                "cluster.decode.workers=2",
                "cluster.events=[{at_ms: 20.5, worker: 1, action: fail}]",
                "cluster.disagg.transfer.kv_lease_s=0"));
        now.runUntil(20 * MS + MS / 2);
        assertThat(now.rank(0).scheduler().heldForHandoffs()).isZero();
        assertThat(Summaries.of(now.run()).pd().expired()).isZero();
        assertThatThrownBy(() -> load("cluster.disagg.transfer.kv_lease_s=-1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.disagg.transfer.kv_lease_s");
    }

    @Test
    void aPoolMayHaveItsOwnAttentionDp_andTransfersIntoOneWorkerShareItsNic() {
        // the decode worker has 2 attention-DP ranks; round robin puts the two requests on ranks 0 and 1 of worker 1,
        // so both pulls enter worker 1's one NIC together (and leave the prefill worker's together)
        SimConfig c = load(
                "workload.synthetic.requests=2",
                "workload.arrival={type: concurrency, concurrency: 2, rate: null}",
                "cluster.decode.attention_dp=2");
        assertThat(c.cluster().totalRanks()).isEqualTo(3);
        Simulation sim = new Simulation(c);
        Invariants checks = new Invariants(c).watch(sim);
        RunResult r = sim.run();
        checks.atEnd(sim, r, c);
        assertThat(checks.violations()).isEmpty();
        assertThat(row(r, 0).worker()).isEqualTo(1);
        assertThat(row(r, 1).worker()).isEqualTo(1);
        assertThat(List.of(row(r, 0).rank(), row(r, 1).rank())).containsExactlyInAnyOrder(0, 1);
        for (int id = 0; id < 2; id++) {
            assertThat(row(r, id).pd().transferNanos()).isEqualTo(MS + 2 * 64_000);
            assertThat(row(r, id).status().status()).isEqualTo("completed");
        }
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "cluster: {pools: [{name: a, workers: 1, attention_dp: 2}]}", "x", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("attention_dp");
    }

    @Test
    void aDecodePoolWithoutFreeBlocks_backPressures_andThePrefillKeepsHoldingUntilThePullCanStart() {
        // the decode worker holds 5 usable blocks of 16 tokens: one request (64 prompt + 3 output tokens) at a time
        SimConfig c = load(
                "workload.synthetic.requests=2",
                "workload.arrival={type: concurrency, concurrency: 2, rate: null}",
                "cluster.decode.engine={kv_cache: {num_gpu_blocks: 6}, max_model_len: 80}");
        Simulation sim = new Simulation(c);
        sim.runUntil(50 * MS);
        // request 0 landed at 21.064 ms and runs; request 1 waits at the head (4 blocks needed, 1 free), unstaged,
        // while the prefill worker still holds its 4 blocks
        assertThat(sim.rank(1).scheduler().numRunning()).isEqualTo(1);
        assertThat(sim.rank(1).scheduler().numWaiting()).isEqualTo(1);
        assertThat(sim.rank(1).scheduler().numLoading()).isZero();
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isEqualTo(4);
        RunResult r = sim.run();
        // request 0: first token 21.064 + 20 ms, then two 10 ms decode steps: it ends (freeing 5 blocks) at 61.064 ms;
        // only then is request 1's pull staged: 1 ms + 64 us, then its one-token step
        assertThat(row(r, 0).lastTokenNanos()).isEqualTo(61 * MS + 64_000);
        PdFacts late = row(r, 1).pd();
        assertThat(late.transferStartNanos()).isEqualTo(61 * MS + 64_000);
        assertThat(late.transferEndNanos()).isEqualTo(62 * MS + 128_000);
        assertThat(row(r, 1).ttftNanos()).isEqualTo(82 * MS + 128_000);
        assertThat(Summaries.of(r).pd().transferWaitMs().max()).isEqualTo(41.064);
    }

    @Test
    void aClientGivingUpDuringThePrefill_leavesItsFinishedPrefillHoldingTheBlocksUntilTheLease() {
        // the client gives up at 10 ms, inside the 0-20 ms prefill step; the prefill finishes length-capped at 20 ms
        // (the abort would come before its next step), so its blocks are held for a read, but no decode request
        // follows: NIXL frees them when the lease (1 s from the prefill's end) expires
        Simulation sim = new Simulation(load("workload.client_timeout_s=0.01", "cluster.disagg.transfer.kv_lease_s=1"));
        sim.runUntil(1020 * MS - 1);
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isEqualTo(4);
        sim.runUntil(1020 * MS);
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isZero();
        RunResult r = sim.run();
        RequestRecord q = row(r, 0);
        assertThat(q.status()).isEqualTo(io.servesim.metrics.RequestStatus.TIMED_OUT);
        assertThat(q.outputTokens()).isZero();
        assertThat(q.worker()).isZero(); // it never reached a decode worker
        assertThat(Summaries.of(r).pd().handoffs()).isZero();
        assertThat(Summaries.of(r).pd().expired()).isEqualTo(1);
    }

    @Test
    void aClientGivingUpDuringThePull_letsTheReadLand_thenBothSidesFreeTheBlocks() {
        // the pull is staged at 20 ms and lands at 21.064 ms; the client gives up at 20.5 ms. vLLM's decode side keeps
        // the blocks of an aborted request until its receive finishes, and the prefill side frees on the read
        Simulation sim = new Simulation(load("workload.client_timeout_s=0.0205"));
        Invariants checks = new Invariants(sim.config()).watch(sim);
        sim.runUntil(21 * MS + 63_999);
        assertThat(sim.rank(1).scheduler().numLoading()).isEqualTo(1);
        assertThat(sim.rank(1).scheduler().pool().usedBlocks()).isEqualTo(4);
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isEqualTo(4);
        sim.runUntil(21 * MS + 64_000);
        assertThat(sim.rank(1).scheduler().numLoading()).isZero();
        assertThat(sim.rank(1).scheduler().pool().usedBlocks()).isZero();
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isZero();
        RunResult r = sim.run();
        checks.atEnd(sim, r, sim.config());
        assertThat(checks.violations()).isEmpty();
        assertThat(row(r, 0).status()).isEqualTo(io.servesim.metrics.RequestStatus.TIMED_OUT);
        assertThat(r.counters().steps()).isEqualTo(1); // the prefill's; the decode side never ran a step for it
    }

    @Test
    void clientsGivingUpOnTheDecodeSide_abortTheRunningRequest_andLeaveAnUnstagedPullsHoldToTheLease() {
        // the back-pressured pool above, both clients giving up at 50 ms: request 0 runs on the decode worker (first
        // token at 41.064 ms) and is aborted before the step at 51.064 ms; request 1 waits there unstaged, so its
        // prefill blocks stay held until the lease (1 s from its prefill's end at 20 ms) runs out
        Simulation sim = new Simulation(load(
                "workload.synthetic.requests=2",
                "workload.arrival={type: concurrency, concurrency: 2, rate: null}",
                "cluster.decode.engine={kv_cache: {num_gpu_blocks: 6}, max_model_len: 80}",
                "workload.client_timeout_s=0.05",
                "cluster.disagg.transfer.kv_lease_s=1"));
        Invariants checks = new Invariants(sim.config()).watch(sim);
        sim.runUntil(1020 * MS - 1);
        assertThat(sim.rank(1).scheduler().numRunning()).isZero();
        assertThat(sim.rank(1).scheduler().numWaiting()).isZero();
        assertThat(sim.rank(1).scheduler().pool().usedBlocks()).isZero();
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isEqualTo(4);
        RunResult r = sim.run();
        checks.atEnd(sim, r, sim.config());
        assertThat(checks.violations()).isEmpty();
        assertThat(sim.rank(0).scheduler().heldForHandoffs()).isZero();
        RequestRecord first = row(r, 0);
        assertThat(first.status()).isEqualTo(io.servesim.metrics.RequestStatus.TIMED_OUT);
        assertThat(first.outputTokens()).isEqualTo(1);
        assertThat(first.lastTokenNanos()).isEqualTo(41 * MS + 64_000);
        RequestRecord second = row(r, 1);
        assertThat(second.status()).isEqualTo(io.servesim.metrics.RequestStatus.TIMED_OUT);
        assertThat(second.pd().transferStartNanos()).isEqualTo(-1);
        assertThat(Summaries.of(r).pd().expired()).isEqualTo(1);
        assertThat(Summaries.of(r).pd().transfers()).isEqualTo(1);
    }

    @Test
    void config_namesWhatIsWrong() {
        assertThatThrownBy(
                        () -> ConfigLoader.fromYaml(PD.replace("  decode: {workers: 1}\n", ""), "pd.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.decode");
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        PD.replace("mode: disaggregated", "mode: aggregated"), "pd.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.prefill")
                .hasMessageContaining("disaggregated");
        assertThatThrownBy(() -> load("engine.kvcr.enabled=true"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kvcr.enabled");
        assertThatThrownBy(() -> load("cluster.disagg.transfer.mode=half"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.disagg.transfer.mode");
        assertThatThrownBy(
                        () -> ConfigLoader.fromYaml("cluster: {disagg: {max_local_prefill_tokens: 3}}", "x", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.disagg");
    }

    @Test
    void aWrittenConfig_bindsBackToAnEqualOne() {
        SimConfig c = load("cluster.decode.workers=3");
        SimConfig again = ConfigLoader.fromYaml(ConfigLoader.toYaml(c), "again.yaml", List.of());
        assertThat(again).isEqualTo(c);
        assertThat(c.cluster().workers()).isEqualTo(4);
        assertThat(c.cluster().pools()).extracting(p -> p.name()).containsExactly("prefill", "decode");
    }
}
