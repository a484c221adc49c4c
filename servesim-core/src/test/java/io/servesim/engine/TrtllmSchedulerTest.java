package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.config.TrtllmConfig;
import io.servesim.metrics.RequestRecord;
import io.servesim.run.CheckedRuns;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import io.servesim.timing.StepBatch;
import io.servesim.workload.Request;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TensorRT-LLM's scheduling rules (docs/engines.md), each hand-computed on one worker with fixed step times: 20 ms for
 * a step with context tokens, 10 ms for a step with generation tokens (both when it has both), blocks of 16 tokens.
 */
class TrtllmSchedulerTest {
    private static final long MS = 1_000_000L;

    /** Two requests arriving together, each a 32-token prompt (2 blocks) and 64 output tokens (6 blocks in all). */
    private static final String TWO = """
            workload:
              type: synthetic
              synthetic:
                requests: 2
                input_tokens: {type: fixed, value: 32}
                output_tokens: {type: fixed, value: 64}
              arrival: {type: concurrency, concurrency: 2}
            engine:
              kind: trtllm
              scheduler: {async_scheduling: false}
              kv_cache: {block_size: 16, num_gpu_blocks: 9}
            timing:
              type: fixed
              fixed: {prefill_ms: 20, decode_ms: 10}
            """;

    private static RunResult run(String yaml, String... sets) {
        return CheckedRuns.run(ConfigLoader.fromYaml(yaml, "trtllm.yaml", List.of(sets)));
    }

    private static RequestRecord row(RunResult r, int id) {
        return CheckedRuns.row(r, id);
    }

    @Test
    void guaranteedNoEvict_startsARequestOnlyIfItsBlocksToCompletionFit_andNeverPauses() {
        // 8 usable blocks: A reserves 6 to completion, 2 are left, B needs 6: B waits until A has finished
        RunResult r = run(TWO);
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS); // its 32-token context alone
        assertThat(a.e2eNanos()).isEqualTo(20 * MS + 63 * 10 * MS); // then 63 generation steps
        assertThat(b.ttftNanos()).isEqualTo(a.e2eNanos() + 20 * MS);
        assertThat(a.preemptions() + b.preemptions()).isZero();
    }

    @Test
    void maxUtilization_chargesOnlyTheNextStep_andPausesTheLatestStartedRequestWhenShort() {
        // both contexts start together (2 blocks each); when their generation needs more blocks than are left, B (the
        // latest started) is paused and recomputes later, while A runs through
        RunResult r = run(TWO, "engine.trtllm.capacity_scheduler_policy=max_utilization");
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS);
        assertThat(b.ttftNanos()).isEqualTo(20 * MS);
        assertThat(a.preemptions()).isZero();
        assertThat(b.preemptions()).isPositive();
        assertThat(b.status().status()).isEqualTo("completed");
        assertThat(b.outputTokens()).isEqualTo(64);
    }

    @Test
    void staticBatch_startsNewRequestsOnlyWhenNothingIsGenerating() {
        // a pool large enough for both: they start together; a third, arriving while they generate, waits for both
        RunResult r = run(
                TWO,
                "engine.trtllm.capacity_scheduler_policy=static_batch",
                "engine.kv_cache.num_gpu_blocks=100",
                "workload.synthetic.requests=3",
                "workload.arrival={type: constant, rate: 50}");
        // arrivals at 0, 20 and 40 ms: request 0 starts alone at 0; 1 and 2 wait for its last token at 650 ms
        assertThat(row(r, 0).e2eNanos()).isEqualTo(650 * MS);
        assertThat(row(r, 1).arrivalNanos() + row(r, 1).ttftNanos()).isEqualTo(670 * MS);
        assertThat(row(r, 2).arrivalNanos() + row(r, 2).ttftNanos()).isEqualTo(670 * MS);
    }

    @Test
    void withoutChunking_aContextThatDoesNotFitMaxNumTokens_endsTheMicroBatch() {
        // max_num_tokens 40: A's 32-token context fits, B's would make 64: B starts next iteration, beside A's first
        // generation token (1 + 32 = 33 tokens; a step with both: 20 + 10 ms)
        RunResult r = run(TWO, "engine.kv_cache.num_gpu_blocks=100", "engine.trtllm.max_num_tokens=40");
        assertThat(row(r, 0).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(r, 1).ttftNanos()).isEqualTo(50 * MS);
    }

    @Test
    void withoutChunking_aPromptLongerThanMaxNumTokens_isRejected() {
        RunResult r = run(TWO, "engine.kv_cache.num_gpu_blocks=100", "engine.trtllm.max_num_tokens=31");
        assertThat(row(r, 0).status().status()).isEqualTo("rejected");
        assertThat(row(r, 0).status().reason()).isEqualTo("prompt_too_long");
    }

    @Test
    void chunkedContext_sharesTheBudgetFirstComeFirstServed_inMultiplesOfTheBlockSize() {
        // one 100-token prompt, max_num_tokens 40: a trimmed chunk is rounded down to the 16-token unit, so 32, 32,
        // then the last 36 fit whole (vLLM would take 40, 40, 20)
        SimConfig c = ConfigLoader.fromYaml(
                TWO,
                "t",
                List.of(
                        "engine.kv_cache.num_gpu_blocks=100",
                        "workload.synthetic.requests=1",
                        "workload.synthetic.input_tokens={type: fixed, value: 100}",
                        "engine.trtllm.max_num_tokens=40",
                        "engine.trtllm.enable_chunked_prefill=true"));
        List<Long> prefillTokens = new ArrayList<>();
        Simulation sim = new Simulation(c).observeSteps(new StepObserver() {
            @Override
            public void afterSchedule(EngineRank rank, io.servesim.timing.StepBatch batch) {
                prefillTokens.add(batch.prefillTokens());
            }

            @Override
            public void afterOutputs(EngineRank rank) {}
        });
        RunResult r = sim.run();
        assertThat(prefillTokens.subList(0, 4)).containsExactly(32L, 32L, 36L, 0L);
        assertThat(row(r, 0).ttftNanos()).isEqualTo(60 * MS);
    }

    @Test
    void equalProgress_sharesTheBudgetInRoundsOfOneChunkUnit_firstComeFirstServedInOrder() {
        // two 100-token prompts, max_num_tokens 64, unit 16: first come first served gives A 64 then 36 (first token
        // after two context steps, 40 ms); equal progress gives each 32 per step (A's first token after four, 80 ms)
        String[] common = {
            "engine.kv_cache.num_gpu_blocks=100",
            "workload.synthetic.input_tokens={type: fixed, value: 100}",
            "workload.synthetic.output_tokens={type: fixed, value: 2}",
            "engine.trtllm.max_num_tokens=64",
            "engine.trtllm.enable_chunked_prefill=true"
        };
        RunResult fcfs = run(TWO, common);
        assertThat(row(fcfs, 0).ttftNanos()).isEqualTo(40 * MS);
        List<String> equal = new ArrayList<>(List.of(common));
        equal.add("engine.trtllm.context_chunking_policy=equal_progress");
        RunResult eq = run(TWO, equal.toArray(String[]::new));
        assertThat(row(eq, 0).ttftNanos()).isEqualTo(80 * MS);
        assertThat(row(eq, 1).ttftNanos()).isEqualTo(80 * MS);
    }

    @Test
    void blockReuse_reusesFullBlocksOfThePromptLessItsLastToken() {
        // two identical 32-token prompts one second apart, partial reuse off: the second reuses 1 block (16 tokens),
        // not 2, as the last prompt token's block is never reused whole
        String[] common = {
            "engine.kv_cache.num_gpu_blocks=100",
            "workload.synthetic.shared_prefix_tokens=32",
            "workload.synthetic.prefix_groups=1",
            "workload.arrival={type: constant, rate: 1}"
        };
        List<String> full = new ArrayList<>(List.of(common));
        full.add("engine.trtllm.enable_partial_reuse=false");
        RunResult r = run(TWO, full.toArray(String[]::new));
        assertThat(row(r, 0).cachedTokens()).isZero();
        assertThat(row(r, 1).cachedTokens()).isEqualTo(16);
        assertThat(row(r, 1).ttftNanos()).isEqualTo(20 * MS);
        // with partial reuse (the default) the first 15 tokens of that block match the first request's stored block
        // 1 (stored whole when its first generated token filled it): 31 tokens reused, the last one computed
        assertThat(row(run(TWO, common), 1).cachedTokens()).isEqualTo(31);
    }

    @Test
    void overlapScheduler_schedulesTheNextStepBeforeTheTokenIsKnown_andLeavesOutARequestWhoseLastTokenIsInFlight() {
        // TRT-LLM's default executor loop: the next step is scheduled while one runs (the async engine loop). One
        // request, 32-token prompt, 3 output tokens: the context step (20 ms) samples token 1; the generation steps
        // for tokens 2 and 3 follow back to back (10 ms each); no fourth step is scheduled (token 3 was its last)
        RunResult r = run(
                TWO,
                "engine.scheduler.async_scheduling=true",
                "engine.kv_cache.num_gpu_blocks=100",
                "workload.synthetic.requests=1",
                "workload.synthetic.output_tokens={type: fixed, value: 3}");
        RequestRecord a = row(r, 0);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS);
        assertThat(a.e2eNanos()).isEqualTo(40 * MS);
        assertThat(a.outputTokens()).isEqualTo(3);
        // B arrives at 41 ms, after A's last token: no step was scheduled on it (SGLang's overlap scheduler runs one,
        // SglangSchedulerTest), so B's context runs 41-61
        RunResult after = run(
                TWO,
                "engine.scheduler.async_scheduling=true",
                "engine.kv_cache.num_gpu_blocks=100",
                "workload.synthetic.output_tokens={type: fixed, value: 3}",
                "workload.arrival={type: constant, rate: 24.390243902439025}");
        assertThat(row(after, 1).ttftNanos()).isEqualTo(20 * MS);
        // B arrives at 25 ms while A generates: the CPU, blocked on the step ending at 30, schedules the step that
        // runs 40-70 (A's token and B's context: 30 ms) only then, one step later than the synchronous loop (30-60)
        String[] during = {
            "engine.kv_cache.num_gpu_blocks=100",
            "workload.synthetic.output_tokens={type: fixed, value: 5}",
            "workload.arrival={type: constant, rate: 40}"
        };
        List<String> overlapDuring = new ArrayList<>(List.of(during));
        overlapDuring.add("engine.scheduler.async_scheduling=true");
        assertThat(row(run(TWO, overlapDuring.toArray(String[]::new)), 1).ttftNanos())
                .isEqualTo(70 * MS - 25 * MS);
        assertThat(row(run(TWO, during), 1).ttftNanos()).isEqualTo(60 * MS - 25 * MS);
        assertThat(ConfigLoader.fromYaml("engine: {kind: trtllm}", "t", List.of())
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .as("TRT-LLM's overlap scheduler is on by default")
                .isTrue();
    }

    @Test
    void pause_keepsAtMostMaxNumTokensAsTheNewPrompt_andGeneratesTheDroppedTokensAgainOnePerIteration() {
        // LlmRequest::pause: the new prompt is min(maxInputLen, prompt + generated), the rest is dropped and generated
        // again; without chunking servesim takes max_num_tokens (40) as maxInputLen. max_utilization, 6 usable blocks
        // of 16, A and B with 32-token prompts and 40 tokens each: B (started later) is paused when A's generation
        // crosses into its fourth block, holding 32 + 16 tokens. Resumed after A, B's 48 tokens are cut to 40, of which
        // its first block is reused (the context stored its prompt less one token, one block; A's later blocks
        // evicted the rest): a 24-token context, then positions 40-46 one per iteration (no token sampled), then
        // position 47 samples B's 17th token
        TrtllmConfig mu = new TrtllmConfig(
                TrtllmConfig.Policy.MAX_UTILIZATION,
                8,
                40,
                false,
                TrtllmConfig.ChunkingPolicy.FIRST_COME_FIRST_SERVED,
                true,
                true,
                0.9);
        SchedulerSettings settings = new SchedulerSettings(8, 40, 0, false, 96, 16, 7, true, false, false);
        TrtllmScheduler s = new TrtllmScheduler(settings, mu, new SchedulerCounters(1000));
        Sequence a = new Sequence(new Request(0, -1, 0, true, 0, tokens(100, 32), 40, 0), 96);
        Sequence b = new Sequence(new Request(1, -1, 0, true, 0, tokens(200, 32), 40, 1), 96);
        s.addRequest(a);
        s.addRequest(b);
        StepBatch batch = new StepBatch();
        ObjectArrayList<Sequence> done = new ObjectArrayList<>();
        long t = 0;
        while (b.preemptions() == 0) {
            s.schedule(t, batch);
            s.applyOutputs(t += 10, done);
        }
        assertThat(b.numOutputTokens()).isEqualTo(16);
        assertThat(b.numTokens()).isEqualTo(48);
        while (!a.finished()) {
            s.schedule(t, batch);
            s.applyOutputs(t += 10, done);
        }
        List<Integer> bTokens = new ArrayList<>();
        List<Integer> bOutputs = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            s.schedule(t, batch);
            assertThat(s.scheduledCount()).isOne();
            bTokens.add(s.scheduledTokens(0));
            s.applyOutputs(t += 10, done);
            bOutputs.add(b.numOutputTokens());
        }
        assertThat(bTokens).containsExactly(24, 1, 1, 1, 1, 1, 1, 1, 1);
        assertThat(bOutputs).containsExactly(16, 16, 16, 16, 16, 16, 16, 16, 17);
        while (!b.finished()) {
            s.schedule(t, batch);
            s.applyOutputs(t += 10, done);
        }
        assertThat(b.numOutputTokens()).isEqualTo(40);
    }

    @Test
    void partialReuse_reusesTheMatchingFirstTokensOfACachedBlock() {
        // blocks of 16. A's 64-token context stores 3 blocks (its prompt less one token). B shares A's first 40
        // tokens: blocks 0 and 1 are full hits, and A's block 2 matches B's block 2 in its first 8 tokens, which are
        // reused (copied into B's new block): B computes 64 - 40 = 24 tokens; without partial reuse 32
        for (boolean partial : new boolean[] {true, false}) {
            TrtllmScheduler s = scheduler(partial, true);
            int[] a = tokens(100, 64);
            add(s, 0, a);
            step(s, 0); // A's context
            add(s, 1, sharing(a, 40, 64));
            s.schedule(10, new StepBatch());
            assertThat(scheduledTokens(s, 1)).as("partial reuse " + partial).isEqualTo(partial ? 24 : 32);
        }
    }

    /** A one-worker TRT-LLM scheduler in sync mode with blocks of 16 and 64 usable blocks. */
    private static TrtllmScheduler scheduler(boolean partial, boolean copy) {
        TrtllmConfig c = new TrtllmConfig(
                TrtllmConfig.Policy.GUARANTEED_NO_EVICT,
                8,
                8192,
                false,
                TrtllmConfig.ChunkingPolicy.FIRST_COME_FIRST_SERVED,
                partial,
                copy,
                0.9);
        SchedulerSettings settings = new SchedulerSettings(8, 8192, 0, false, 1024, 16, 65, true, false, false);
        return new TrtllmScheduler(settings, c, new SchedulerCounters(1000));
    }

    /** Tokens the step just scheduled gives request {@code id} (-1: not scheduled). */
    private static int scheduledTokens(TrtllmScheduler s, int id) {
        for (int i = 0; i < s.scheduledCount(); i++) {
            if (s.scheduled(i).request().id() == id) {
                return s.scheduledTokens(i);
            }
        }
        return -1;
    }

    @Test
    void release_storesThePartialLastBlock_whichALaterPromptReusesInPlaceWhenItIsAnUnreferencedLeaf() {
        // blocks of 16. A: a 40-token prompt, 2 output tokens. Its context stores 2 full blocks (its prompt less one
        // token: 39 / 16). At its release (storeBlocksForReuse) its tokens less the last one, 41, are stored: the 2
        // full blocks and block 2 partly filled, 9 tokens (prompt positions 32-39 and its first output token).
        // B shares A's first 40 tokens, then differs (64 tokens): blocks 0-1 are full hits and A's partial block
        // matches B's block 2 in 8 tokens: B computes 64 - 40 = 24 (32 if partial blocks were not stored). A has
        // finished, so the block is unreferenced and a leaf: B takes it over in place (no copy), with or without
        // copy_on_partial_reuse
        for (boolean copy : new boolean[] {true, false}) {
            TrtllmScheduler s = scheduler(true, copy);
            int[] a = tokens(100, 40);
            add(s, 0, a);
            step(s, 0); // A's context: token 1, 2 blocks stored
            assertThat(step(s, 10)).as("token 2: A finishes and is released").isEqualTo(1);
            long cachedBefore = s.kv().pool().cachedBlocks();
            add(s, 1, sharing(a, 40, 64));
            s.schedule(20, new StepBatch());
            assertThat(scheduledTokens(s, 1)).as("copy " + copy).isEqualTo(24);
            assertThat(s.partialReusesInPlace()).isEqualTo(1);
            assertThat(s.kv().pool().cachedBlocks())
                    .as("the partial block left the cache (a copy would have kept it)")
                    .isEqualTo(cachedBefore - 1);
        }
    }

    @Test
    void partialReuse_copiesABlockOthersHold_andWithoutCopyOnPartialReuseSkipsIt() {
        // as partialReuse_reusesTheMatchingFirstTokensOfACachedBlock: A's context (64 tokens) is still running and
        // holds
        // its block 2 when B arrives. B's 8 matching tokens are copied into a new block (24 computed); with
        // copy_on_partial_reuse off a held block is no candidate (32 computed)
        for (boolean copy : new boolean[] {true, false}) {
            TrtllmScheduler s = scheduler(true, copy);
            int[] a = tokens(100, 64);
            add(s, 0, a);
            step(s, 0);
            add(s, 1, sharing(a, 40, 64));
            s.schedule(10, new StepBatch());
            assertThat(scheduledTokens(s, 1)).as("copy " + copy).isEqualTo(copy ? 24 : 32);
            assertThat(s.partialReusesInPlace()).isZero();
        }
    }

    @Test
    void withoutPartialReuse_onlyAStoredPartialBlockWithExactlyTheseTokensMatches() {
        // TRT-LLM's exact-key match is not gated by enable_partial_reuse: A (40-token prompt, 2 outputs) stores a
        // 9-token partial block at its release (as above). B's prompt is A's first 41 tokens and one more: its prompt
        // less one token ends in exactly that block's 9 tokens, which match: B computes 1 token. C's prompt differs in
        // the partial block's last token (its 9 tokens are not the key): C computes 42 - 32 = 10
        TrtllmScheduler s = scheduler(false, true);
        Request ra = add(s, 0, tokens(100, 40));
        step(s, 0);
        step(s, 10);
        int[] b = new int[42];
        for (int i = 0; i < 41; i++) {
            b[i] = ra.tokenAt(i);
        }
        b[41] = 9_999;
        int[] c = b.clone();
        c[40] = ra.tokenAt(40) + 1;
        add(s, 1, c);
        s.schedule(20, new StepBatch());
        assertThat(scheduledTokens(s, 1)).isEqualTo(10);
        s.applyOutputs(30, new ObjectArrayList<>());
        add(s, 2, b);
        s.schedule(30, new StepBatch());
        assertThat(scheduledTokens(s, 2)).isEqualTo(1);
    }

    /** A prompt of {@code length} tokens whose first {@code shared} are {@code a}'s and the rest its own. */
    private static int[] sharing(int[] a, int shared, int length) {
        int[] b = java.util.Arrays.copyOf(a, length);
        for (int i = shared; i < length; i++) {
            b[i] = 5_000 + i;
        }
        return b;
    }

    /** Adds request {@code id} with {@code prompt} and 2 output tokens, arrived at 0. */
    private static Request add(TrtllmScheduler s, int id, int[] prompt) {
        Request q = new Request(id, -1, 0, true, 0, prompt, 2, id);
        s.addRequest(new Sequence(q, 1024));
        return q;
    }

    /** One synchronous iteration at {@code t} (its outputs at {@code t + 10}); returns how many requests it finished. */
    private static int step(TrtllmScheduler s, long t) {
        ObjectArrayList<Sequence> done = new ObjectArrayList<>();
        s.schedule(t, new StepBatch());
        s.applyOutputs(t + 10, done);
        return done.size();
    }

    private static int[] tokens(int base, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = base + i;
        }
        return t;
    }

    @Test
    void beneficialToSkip_aContextWhoseFirstNewBlockAnEarlierContextComputesWaitsAnIteration_toReuseIt() {
        // A and B arrive together with the same 64-token prompt (4 blocks of 16), a large pool: B's first new block is
        // A's, so B sits out iteration 1 (0-20: A's context). A's context stores its prompt less one token (3 blocks);
        // in iteration 2 B reuses them and computes 16 tokens beside A's first generation token (20-50: both)
        RunResult r = run(
                TWO,
                "engine.kv_cache.num_gpu_blocks=100",
                "workload.synthetic.input_tokens={type: fixed, value: 64}",
                "workload.synthetic.shared_prefix_tokens=64",
                "workload.synthetic.prefix_groups=1",
                "workload.synthetic.output_tokens={type: fixed, value: 3}");
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS);
        assertThat(b.ttftNanos()).isEqualTo(50 * MS);
        assertThat(b.cachedTokens()).isEqualTo(48);
        assertThat(a.cachedTokens()).isZero();
        // without block reuse nothing is skipped: both contexts run in iteration 1
        RunResult off = run(
                TWO,
                "engine.kv_cache.num_gpu_blocks=100",
                "engine.kv_cache.prefix_caching=false",
                "workload.synthetic.input_tokens={type: fixed, value: 64}",
                "workload.synthetic.shared_prefix_tokens=64",
                "workload.synthetic.prefix_groups=1",
                "workload.synthetic.output_tokens={type: fixed, value: 3}");
        assertThat(row(off, 1).ttftNanos()).isEqualTo(20 * MS);
    }

    @Test
    void hostPool_offloadsWhatTheGpuEvicts_andOnboardsAHostHitBeforeTheForward() {
        // TRT-LLM's secondary pool (host_cache_size): 5 usable GPU blocks of 16 tokens, 1 MB per token (16 MB a block);
        // 70-token prompts, one output token each, one request at a time; A and C share their first 48 tokens (3
        // blocks), B shares nothing. A (0-20 ms) leaves 5 cached blocks (4 full, and its partly filled last one stored
        // at release). B's allocation evicts all 5, which are offloaded to the host on eviction: 2 ms first byte + 80
        // MB
        // at 64 GB/s = 3.25 ms, which B's forward waits for (20-43.25). C finds A's 3 shared blocks on the host and
        // onboards them (2 ms + 48 MB at 1 GB/s = 50 ms) while B's 5 evicted blocks go out (3.25 ms, in parallel): C
        // computes 22 tokens after 50 ms, first token at 43.25 + 70 ms
        String[] common = CheckedRuns.hostTierScenario().toArray(String[]::new);
        List<String> host = CheckedRuns.hostTierScenario();
        host.add(CheckedRuns.HOST_TIER);
        RunResult r = run(TWO, host.toArray(String[]::new));
        assertThat(row(r, 0).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(r, 1).arrivalNanos()).isEqualTo(20 * MS);
        assertThat(row(r, 1).ttftNanos()).isEqualTo(23_250_000L);
        assertThat(row(r, 2).arrivalNanos()).isEqualTo(43_250_000L);
        assertThat(row(r, 2).ttftNanos()).isEqualTo(70 * MS);
        assertThat(row(r, 2).cachedTokens()).isEqualTo(48);
        assertThat(r.counters().g2StoreBytes()).as("A's 5 blocks, then B's 5").isEqualTo(160_000_000L);
        assertThat(r.counters().g2LoadBytes()).isEqualTo(48_000_000L);
        RunResult without = run(TWO, common);
        assertThat(row(without, 1).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(without, 2).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(without, 2).cachedTokens()).isZero();
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        TWO,
                        "t",
                        List.of("engine.kv_cache.host_offload={num_host_blocks: 100, scope: cluster_shared}")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kv_cache.host_offload.scope");
    }

    @Test
    void config_namesWhatTrtllmDoesNotModel() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("engine: {trtllm: {max_batch_size: 4}}", "t", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.trtllm");
        assertThatThrownBy(() -> ConfigLoader.fromYaml(TWO, "t", List.of("engine.kvcr.enabled=true")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kvcr.enabled");
        List<String> pd = new ArrayList<>(List.of(
                "cluster.mode=disaggregated",
                "cluster.prefill={workers: 1}",
                "cluster.decode={workers: 1, engine: {kind: vllm}}"));
        assertThat(ConfigLoader.fromYaml(TWO, "t", pd)
                        .cluster()
                        .pools()
                        .get(1)
                        .engine()
                        .kind())
                .as("a TRT-LLM prefill pool may feed a vLLM decode pool")
                .isEqualTo(io.servesim.config.EngineKind.VLLM);
        TrtllmConfig own = ConfigLoader.fromYaml(
                        "",
                        "t",
                        List.of("cluster.pools=[{name: a, workers: 1}, {name: b, workers: 1,"
                                + " engine: {kind: trtllm, trtllm: {max_batch_size: 4}}}]"))
                .cluster()
                .pools()
                .get(1)
                .engine()
                .trtllm();
        assertThat(own.maxBatchSize())
                .as("a pool's own trtllm section, over the defaults")
                .isEqualTo(4);
        assertThat(own.capacitySchedulerPolicy()).isEqualTo(TrtllmConfig.Policy.GUARANTEED_NO_EVICT);
        SimConfig c = ConfigLoader.fromYaml(TWO, "t", List.of());
        assertThat(ConfigLoader.fromYaml("engine: {kind: trtllm}", "t", List.of())
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .as("TRT-LLM's overlap scheduler is on by default, as vLLM's async scheduling")
                .isTrue();
        assertThat(ConfigLoader.fromYaml(ConfigLoader.toYaml(c), "again", List.of()))
                .isEqualTo(c);
    }
}
