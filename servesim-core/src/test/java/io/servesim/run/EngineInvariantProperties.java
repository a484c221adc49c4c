package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.engine.EngineRank;
import io.servesim.engine.StepObserver;
import io.servesim.engine.VllmScheduler;
import io.servesim.kv.BlockPool;
import io.servesim.metrics.RequestLog;
import io.servesim.timing.StepBatch;
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
 * completed or rejected, also when a worker drains or fails mid-run; with the synchronous and the async engine loop.
 */
class EngineInvariantProperties {

    @Property(tries = 150)
    void engineInvariantsHoldAfterEveryStep(@ForAll("configs") List<String> overrides) {
        SimConfig config = ConfigLoader.fromYaml("", "property", overrides);
        Simulation sim = new Simulation(config);
        List<String> violations = new ArrayList<>();
        int budget = config.engine().scheduler().maxNumBatchedTokens();
        int maxSeqs = config.engine().scheduler().maxNumSeqs();
        sim.observeSteps(new StepObserver() {
            @Override
            public void afterSchedule(EngineRank rank, StepBatch batch) {
                VllmScheduler s = rank.scheduler();
                check(s, violations);
                if (s.lastStepTokens() > budget) {
                    violations.add("scheduled " + s.lastStepTokens() + " > budget " + budget);
                }
                if (s.numRunning() > maxSeqs) {
                    violations.add("running " + s.numRunning() + " > max_num_seqs " + maxSeqs);
                }
                int lastTokenInFlight = 0; // async: a request whose step in flight samples its last token is skipped
                for (int i = 0; i < s.numRunning(); i++) {
                    var r = s.running(i);
                    if (r.placeholders() > 0
                            && (r.numComputedTokens() + 2 - r.placeholders()
                                            >= r.promptLength() + r.request().outputTokens()
                                    || r.numComputedTokens() >= s.settings().maxModelLen() - 1)) {
                        lastTokenInFlight++;
                    }
                }
                if (!s.preemptedLastStep() && s.scheduledCount() + lastTokenInFlight < s.numRunning()) {
                    violations.add("a running request got no token in a step without preemption");
                }
                long sum = 0;
                for (int i = 0; i < batch.size(); i++) {
                    sum += batch.newTokens(i);
                }
                if (sum != s.lastStepTokens()) {
                    violations.add("batch tokens " + sum + " != scheduled " + s.lastStepTokens());
                }
            }

            @Override
            public void afterOutputs(EngineRank rank) {
                check(rank.scheduler(), violations);
            }
        });
        RunResult result = sim.run();
        assertThat(violations).isEmpty();
        RequestLog log = result.log();
        assertThat(log.size()).isEqualTo(result.requestsCreated());
        for (int i = 0; i < log.size(); i++) {
            String st = log.status(i).status();
            assertThat(st).isIn("completed", "rejected"); // no time limit: nothing is left incomplete
            if (st.equals("completed")) {
                assertThat(log.outputTokens(i)).isPositive();
                assertThat(log.firstTokenNanos(i)).isGreaterThanOrEqualTo(log.arrivalNanos(i));
                assertThat(log.lastTokenNanos(i)).isGreaterThanOrEqualTo(log.firstTokenNanos(i));
            }
        }
        // all blocks are back in the free queues at the end
        for (int g = 0; g < config.cluster().workers() * config.cluster().attentionDp(); g++) {
            if (sim.rank(g).failed()) {
                continue; // a failed worker's pool is gone with it
            }
            BlockPool pool = sim.rank(g).scheduler().pool();
            assertThat(pool.freeBlocks()).isEqualTo(pool.usableBlocks());
        }
    }

    private static void check(VllmScheduler s, List<String> violations) {
        BlockPool pool = s.pool();
        if (pool.anyNegativeRefCount()) {
            violations.add("negative ref count");
            return;
        }
        if (pool.countReferencedBlocks() + pool.freeBlocks() != pool.usableBlocks()) {
            violations.add("referenced " + pool.countReferencedBlocks() + " + free " + pool.freeBlocks() + " != usable "
                    + pool.usableBlocks());
        }
        long tableBlocks = (long) s.pinnedForStore() + s.heldForPulls(); // G2 store pins and KVCR source holds
        for (int i = 0; i < s.numRunning(); i++) {
            tableBlocks += s.running(i).table().numBlocks();
        }
        for (int i = 0; i < s.numLoading(); i++) {
            tableBlocks += s.loading(i).table().numBlocks(); // G2 loads hold their G1 blocks
        }
        tableBlocks += s.heldByWaiting(); // landed loads wait at the head of the queue, holding their blocks
        if (tableBlocks != pool.totalRefCount()) {
            violations.add("block tables hold " + tableBlocks + " refs but ref counts sum to " + pool.totalRefCount());
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
