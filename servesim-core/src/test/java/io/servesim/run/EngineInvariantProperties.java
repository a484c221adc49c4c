package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Invariants of the engine that must hold after every step of any small random cluster and workload: block
 * accounting (referenced + free = usable; Σ block-table lengths = Σ ref counts; no negative ref count), the step
 * budget, {@code max_num_seqs}, every running request served when nothing was preempted, and every request ending
 * completed or rejected, also when a worker drains or fails mid-run; with the synchronous and the async engine loop,
 * in heterogeneous fleets (pools with their own limits, KV pools and timing) and in disaggregated prefill/decode
 * clusters (KV transfers, delayed frees, faults on either side), and on TensorRT-LLM ranks (its three capacity
 * policies, with and without chunked context and the overlap scheduler) and SGLang ranks (its policies, chunked prefill,
 * reservation and retraction), and on vLLM ranks running its hybrid KV cache (a sliding-window block group).
 */
class EngineInvariantProperties {

    @Property(tries = 150)
    void engineInvariantsHoldAfterEveryStep(@ForAll("configs") List<String> overrides) {
        RunResult result = CheckedRuns.run(ConfigLoader.fromYaml("", "property", overrides));
        RequestLog log = result.log();
        boolean sessions = overrides.contains("workload.type=sessions");
        for (int i = 0; i < log.size(); i++) {
            // no time limit: nothing is left incomplete; only a session's turns after a rejected one are abandoned
            assertThat(log.status(i).status())
                    .isIn(sessions ? List.of("completed", "rejected", "abandoned") : List.of("completed", "rejected"));
        }
        if (sessions) {
            // every configured turn of every session has its row, also when a turn reached no worker
            assertThat(log.size()).isEqualTo(8 * 3);
        }
    }

    @Provide
    Arbitrary<List<String>> configs() {
        Arbitrary<Integer> workers = Arbitraries.integers().between(1, 3);
        Arbitrary<Integer> dp = Arbitraries.integers().between(1, 2);
        Arbitrary<Integer> blockSize = Arbitraries.of(1, 8, 16);
        Arbitrary<Integer> blocks = Arbitraries.integers().between(4, 160);
        Arbitrary<Integer> maxSeqs = Arbitraries.integers().between(1, 12);
        Arbitrary<Integer> budget = Arbitraries.integers().between(4, 300);
        Arbitrary<Integer> threshold = Arbitraries.of(0, 0, 3, 17, 64);
        Arbitrary<Boolean> caching = Arbitraries.of(true, true, false);
        Arbitrary<String> router =
                Arbitraries.of("round_robin", "least_loaded", "session_affinity", "random", "kv_aware");
        Arbitrary<String> dpMode = Arbitraries.of("lockstep", "independent");
        Arbitrary<Double> migrate = Arbitraries.of(0.0, 0.3);
        Arbitrary<String> kvMode = Arbitraries.of("exact", "approximate");
        Arbitrary<Integer> hostBlocks = Arbitraries.of(0, 0, 8, 64);
        Arbitrary<String> workload = Arbitraries.of("synthetic", "sessions");
        Arbitrary<Long> seed = Arbitraries.longs().between(0, 1000);
        return Combinators.combine(
                        Combinators.combine(workers, dp, blockSize, blocks, maxSeqs, budget, threshold, caching)
                                .as((w, d, bs, nb, ms, b, t, c) -> List.of(
                                        "cluster.workers=" + w,
                                        "cluster.attention_dp=" + d,
                                        "engine.kv_cache.block_size=" + bs,
                                        "engine.kv_cache.num_gpu_blocks=" + nb,
                                        "engine.kv_cache.prefix_caching=" + c,
                                        "engine.scheduler.max_num_seqs=" + ms,
                                        // vLLM's start-up checks: a budget of at least max_num_seqs, a pool that
                                        // holds one max_model_len request
                                        "engine.scheduler.max_num_batched_tokens=" + Math.max(b, ms),
                                        "engine.max_model_len=" + Math.min((nb - 1) * bs, 400),
                                        "engine.scheduler.long_prefill_token_threshold=" + t)),
                        router,
                        workload,
                        seed,
                        dpMode,
                        migrate,
                        kvMode,
                        hostBlocks)
                .as((engine, r, wl, s, mode, mig, kv, g2) -> {
                    boolean pulls = s % 2 == 1; // KVCR on for odd seeds (jqwik combines at most 8 arbitraries)
                    List<String> all = new ArrayList<>(engine);
                    all.add("cluster.dp_mode=" + mode);
                    all.add("engine.scheduler.async_scheduling=" + (s % 5 < 2)); // vLLM's async engine loop
                    if (s % 3 == 0) {
                        all.add("cluster.events=[{at_ms: 300, worker: 0, action: drain}]");
                    } else if (s % 3 == 1) {
                        all.add("cluster.events=[{at_ms: " + (s % 400) + ", worker: 0, action: fail}]");
                    }
                    all.add("workload.sessions.migrate_fraction=" + mig);
                    all.add("cluster.router.kv.mode=" + kv);
                    if (pulls && engine.contains("engine.kv_cache.prefix_caching=true")) {
                        all.add("engine.kvcr.enabled=true");
                        all.add("engine.kv_cache.bytes_per_token=1000");
                        if (s % 4 == 1) {
                            all.add("engine.kvcr.fabric_gbytes_per_s=0.5"); // the fabric-capped (heap) completion path
                        }
                    }
                    if (g2 > 0 && engine.contains("engine.kv_cache.prefix_caching=true")) {
                        all.add("engine.kv_cache.host_offload.num_host_blocks=" + g2);
                        all.add("engine.kv_cache.host_offload.scope=" + (s % 2 == 0 ? "rank_local" : "cluster_shared"));
                        all.add("engine.kv_cache.bytes_per_token=1000");
                    }
                    int w = Integer.parseInt(engine.get(0).substring("cluster.workers=".length()));
                    if (w >= 2 && s % 7 == 3) {
                        // a heterogeneous fleet: the last workers in a pool with other limits, KV pool and timing
                        int gpuBlocks =
                                Integer.parseInt(engine.get(3).substring("engine.kv_cache.num_gpu_blocks=".length()));
                        int seqs = Integer.parseInt(engine.get(5).substring("engine.scheduler.max_num_seqs=".length()));
                        all.add("cluster.pools=[{name: a, workers: 1}, {name: b, workers: " + (w - 1)
                                + ", engine: {scheduler: {max_num_seqs: " + Math.max(1, seqs - 1)
                                + "}, kv_cache: {num_gpu_blocks: " + (gpuBlocks + 7)
                                + "}}, timing: {type: fixed, fixed: {prefill_ms: 7, decode_ms: 3}}}]");
                    }
                    if (w >= 2 && s % 7 == 5) {
                        // a disaggregated cluster: one prefill worker, the rest decode (KVCR stays off there; the G2
                        // host tier serves both pools, rank-local for SGLang and TRT-LLM); worker 0 drains or fails
                        // (the prefill pool empties: decode workers prefill locally), or the last decode worker
                        // fails; transfers share NICs, sometimes under a fabric cap
                        all.removeIf(o -> o.startsWith("engine.kvcr.") || o.startsWith("cluster.events="));
                        if (s % 3 == 1) {
                            all.add("cluster.events=[{at_ms: " + (s % 400) + ", worker: " + (s % 2 == 0 ? 0 : w - 1)
                                    + ", action: fail}]");
                        } else if (s % 3 == 0) {
                            all.add("cluster.events=[{at_ms: 300, worker: 0, action: drain}]");
                        }
                        all.add("cluster.mode=disaggregated");
                        // engines: SGLang on both sides, TRT-LLM on both, a TRT-LLM prefill pool feeding SGLang or
                        // vLLM,
                        // or vLLM
                        int kinds = (int) (s % 6);
                        // vLLM prefill feeding a TRT-LLM generation pool whose max_num_tokens is below most prompts
                        boolean trtllmDecode = kinds == 5 && s % 12 == 11;
                        if (kinds != 5 || trtllmDecode) {
                            all.remove(
                                    "engine.kv_cache.host_offload.scope=cluster_shared"); // SGLang, TRT-LLM: per rank
                        }
                        String prefillKind = kinds == 2 || kinds == 3 || kinds == 4 ? ", engine: {kind: trtllm}" : "";
                        all.add("cluster.prefill={workers: 1, router: {policy: " + r + "}" + prefillKind + "}");
                        all.add("cluster.decode={workers: " + (w - 1) + ", attention_dp: " + (1 + s % 3)
                                + ", timing: {type: fixed, fixed: {prefill_ms: 7, decode_ms: 3}}"
                                + (trtllmDecode ? ", engine: {kind: trtllm, trtllm: {max_num_tokens: 16}}" : "") + "}");
                        all.add("cluster.disagg.max_local_prefill_tokens=" + (s % 4 == 0 ? 0 : 40));
                        if (kinds == 2) {
                            // TRT-LLM on both sides (one of its capacity policies, with or without chunked context)
                            int seqs = Integer.parseInt(
                                    engine.get(5).substring("engine.scheduler.max_num_seqs=".length()));
                            int tokens = Integer.parseInt(
                                    engine.get(6).substring("engine.scheduler.max_num_batched_tokens=".length()));
                            all.add("engine.kind=trtllm");
                            all.add("engine.trtllm={capacity_scheduler_policy: "
                                    + (s % 4 < 2 ? "guaranteed_no_evict" : "max_utilization") + ", max_batch_size: "
                                    + seqs + ", max_num_tokens: " + Math.max(tokens, 16)
                                    + ", enable_chunked_prefill: " + (s % 3 == 0) + "}");
                        }
                        if (kinds < 2 || kinds == 3) {
                            // SGLang pools (its own limits; one of two policies)
                            int seqs = Integer.parseInt(
                                    engine.get(5).substring("engine.scheduler.max_num_seqs=".length()));
                            int tokens = Integer.parseInt(
                                    engine.get(6).substring("engine.scheduler.max_num_batched_tokens=".length()));
                            all.add("engine.kind=sglang");
                            all.add("engine.sglang={schedule_policy: " + (s % 2 == 0 ? "fcfs" : "lpm")
                                    + ", max_running_requests: " + seqs + ", max_prefill_tokens: " + tokens
                                    + ", chunked_prefill_size: " + Math.max(tokens, 16) + "}");
                        }
                        all.add("cluster.disagg.transfer={nic_gbytes_per_s: 0.001, bytes_per_token: 1000,"
                                + " fabric_gbytes_per_s: " + (s % 2 == 0 ? 0.0 : 0.0005) + ", mode: "
                                + (s % 8 < 4 ? "destination_missing" : "full_prompt") + "}");
                    }
                    if (s % 7 == 6) {
                        // TensorRT-LLM ranks: one of its capacity policies, its own batch and token limits, with and
                        // without its host pool (a rank-local G2 tier)
                        all.removeIf(o -> o.startsWith("engine.kvcr.")
                                || o.equals("engine.kv_cache.host_offload.scope=cluster_shared"));
                        int seqs = Integer.parseInt(engine.get(5).substring("engine.scheduler.max_num_seqs=".length()));
                        int tokens = Integer.parseInt(
                                engine.get(6).substring("engine.scheduler.max_num_batched_tokens=".length()));
                        String[] policies = {"guaranteed_no_evict", "max_utilization", "static_batch"};
                        all.add("engine.kind=trtllm");
                        all.add("engine.trtllm={capacity_scheduler_policy: " + policies[(int) (s % 3)]
                                + ", max_batch_size: " + seqs + ", max_num_tokens: " + Math.max(tokens, 16)
                                + ", enable_chunked_prefill: " + (s % 2 == 0) + ", context_chunking_policy: "
                                + (s % 4 < 2 ? "first_come_first_served" : "equal_progress")
                                + ", enable_partial_reuse: "
                                + (s % 5 != 4) + ", copy_on_partial_reuse: " + (s % 9 != 3) + "}");
                    }
                    if (s % 7 == 1) {
                        // SGLang ranks: one of its policies, prefill XOR decode batches, reservation and retraction,
                        // with and without the overlap scheduler and HiCache (a rank-local G2 tier)
                        all.removeIf(o -> o.startsWith("engine.kvcr.")
                                || o.equals("engine.kv_cache.host_offload.scope=cluster_shared"));
                        int seqs = Integer.parseInt(engine.get(5).substring("engine.scheduler.max_num_seqs=".length()));
                        int tokens = Integer.parseInt(
                                engine.get(6).substring("engine.scheduler.max_num_batched_tokens=".length()));
                        String[] policies = {"fcfs", "lpm", "lof", "random", "dfs_weight"};
                        all.add("engine.kind=sglang");
                        all.add("engine.sglang={schedule_policy: " + policies[(int) (s % 5)]
                                + ", max_running_requests: " + seqs + ", max_prefill_tokens: " + tokens
                                + ", chunked_prefill_size: " + (s % 2 == 0 ? 0 : Math.max(tokens, 16))
                                + ", schedule_conservativeness: " + (s % 3 == 0 ? 0.05 : 1.0) + ", enable_mixed_chunk: "
                                + (s % 4 == 3) + ", hicache_write_policy: "
                                + (s % 5 == 2 ? "write_back" : s % 5 == 3 ? "write_through_selective" : "write_through")
                                + "}");
                    }
                    if (s % 11 == 5
                            && !all.contains("engine.kind=trtllm")
                            && !all.contains("engine.kind=sglang")
                            && !all.contains("cluster.mode=disaggregated")
                            && all.stream().noneMatch(o -> o.startsWith("cluster.pools"))) {
                        // vLLM's hybrid KV cache (gpt-oss): a sliding-window block group beside the full-attention
                        // one, run without a KV connector, on twice the blocks (each group holds a request's tokens,
                        // so max_model_len still fits both, as vLLM's start-up check requires)
                        all.removeIf(
                                o -> o.startsWith("engine.kvcr.") || o.startsWith("engine.kv_cache.host_offload."));
                        all.add("engine.kv_cache.hybrid_window=" + (2 + s % 40));
                        for (int k = 0; k < all.size(); k++) {
                            String o = all.get(k);
                            if (o.startsWith("engine.kv_cache.num_gpu_blocks=")) {
                                int n = Integer.parseInt(o.substring("engine.kv_cache.num_gpu_blocks=".length()));
                                all.set(k, "engine.kv_cache.num_gpu_blocks=" + 2 * n);
                            }
                        }
                    }
                    all.add("cluster.router.policy=" + r);
                    all.add("workload.type=" + wl);
                    all.add("workload.seed=" + s);
                    all.add("workload.synthetic.requests=40");
                    all.add("workload.synthetic.input_tokens={type: uniform, min: 1, max: 200}");
                    all.add("workload.synthetic.output_tokens={type: uniform, min: 1, max: 30}");
                    all.add("workload.synthetic.shared_prefix_tokens=24");
                    all.add("workload.synthetic.prefix_groups=3");
                    all.add("workload.sessions.sessions=8");
                    all.add("workload.sessions.turns=3");
                    all.add("workload.sessions.first_input_tokens={type: uniform, min: 1, max: 120}");
                    all.add("workload.sessions.new_input_tokens={type: uniform, min: 0, max: 40}");
                    all.add("workload.sessions.output_tokens={type: uniform, min: 1, max: 25}");
                    all.add("workload.arrival.rate=50");
                    return all;
                });
    }
}
