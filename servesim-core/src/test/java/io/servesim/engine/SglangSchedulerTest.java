package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestRecord;
import io.servesim.run.CheckedRuns;
import io.servesim.run.RunResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SGLang's scheduling rules (docs/engines.md), each hand-computed on one worker with fixed step times: 20 ms for a
 * prefill batch, 10 ms for a decode batch, pages of 16 tokens; the synchronous loop ({@code
 * --disable-overlap-schedule}) unless a test turns the overlap scheduler on.
 */
class SglangSchedulerTest {
    private static final long MS = 1_000_000L;

    /** Requests of a 32-token prompt (2 pages); 8 usable pages (128 tokens) unless a test gives more. */
    private static final String BASE = """
            workload:
              type: synthetic
              synthetic:
                requests: 2
                input_tokens: {type: fixed, value: 32}
                output_tokens: {type: fixed, value: 64}
              arrival: {type: concurrency, concurrency: 2}
            engine:
              kind: sglang
              scheduler: {async_scheduling: false}
              kv_cache: {block_size: 16, num_gpu_blocks: 9}
            timing:
              type: fixed
              fixed: {prefill_ms: 20, decode_ms: 10}
            """;

    private static RunResult run(String... sets) {
        return CheckedRuns.run(ConfigLoader.fromYaml(BASE, "sglang.yaml", List.of(sets)));
    }

    private static RequestRecord row(RunResult r, int id) {
        return CheckedRuns.row(r, id);
    }

    @Test
    void aPrefillBatchRunsAlone_theRunningRequestsDecodeWaits() {
        // A at 0 ms, B at 15 ms (3 output tokens each, a large pool): A's prefill 0-20; at 20 B's prefill runs alone
        // (20-40) while A waits; then one decode batch of both (40-50)
        RunResult r = run(
                "engine.kv_cache.num_gpu_blocks=100",
                "workload.synthetic.output_tokens={type: fixed, value: 3}",
                "workload.arrival={type: constant, rate: 66.66666666666667}");
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(b.arrivalNanos()).isEqualTo(15 * MS);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS);
        assertThat(b.arrivalNanos() + b.ttftNanos()).isEqualTo(40 * MS);
        assertThat(a.lastTokenNanos()).isEqualTo(60 * MS); // tokens 2 and 3 in the decode batches at 50 and 60 ms
    }

    @Test
    void mixedChunk_thePrefillBatchAlsoDecodesTheRunningRequests() {
        // --enable-mixed-chunk, the same arrivals: B's prefill batch carries A's second token (a mixed step costs the
        // prefill and the decode time: 20-50 ms); then one decode batch of both (50-60: A's last token) and B's last
        // (60-70). Without mixing B's prefill runs alone (20-40) and B's last token comes at 60
        RunResult r = run(
                "engine.kv_cache.num_gpu_blocks=100",
                "engine.sglang.enable_mixed_chunk=true",
                "workload.synthetic.output_tokens={type: fixed, value: 3}",
                "workload.arrival={type: constant, rate: 66.66666666666667}");
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(b.arrivalNanos() + b.ttftNanos()).isEqualTo(50 * MS);
        assertThat(a.lastTokenNanos()).isEqualTo(60 * MS);
        assertThat(b.lastTokenNanos()).isEqualTo(70 * MS);
    }

    @Test
    void admission_reservesANewRequestsWholeMaxNewTokens_andTheRunningRequestsFutureTokens() {
        // 128 tokens: A admits with 32 + 64 = 96; B's 96 do not fit the 32 left, and later not the free tokens less
        // A's reservation (64 - generated) x new_token_ratio: B starts when A has finished
        RunResult r = run();
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS);
        assertThat(a.e2eNanos()).isEqualTo(20 * MS + 63 * 10 * MS);
        assertThat(b.ttftNanos()).isEqualTo(a.e2eNanos() + 20 * MS);
        assertThat(a.preemptions() + b.preemptions()).isZero();
    }

    @Test
    void retractDecode_takesBackTheRequestWithTheFewestGeneratedTokens_toTheEndOfTheQueue() {
        // a tiny reservation (conservativeness 0.01) lets B in beside A (40 output tokens each, 72 tokens = 5 pages
        // apiece at the end, 8 pages in all): when a decode batch finds no free page, B (fewer tokens) is retracted
        RunResult r = run(
                "engine.sglang.schedule_conservativeness=0.01",
                "workload.synthetic.output_tokens={type: fixed, value: 40}");
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(a.preemptions()).isZero();
        assertThat(b.preemptions()).isPositive();
        assertThat(a.status().status()).isEqualTo("completed");
        assertThat(b.status().status()).isEqualTo("completed");
        assertThat(b.lastTokenNanos()).isGreaterThan(a.lastTokenNanos());
    }

    @Test
    void lpm_admitsTheLongestCachedPrefixFirst_fcfsTheOldest() {
        // one running request at most; requests 0 and 2 share a 48-token prefix (3 pages), 1 does not; arrivals at 0,
        // 5 and 10 ms, 64-token prompts, 3 output tokens: request 0 runs 0-40 ms; then lpm takes 2 (3 cached pages)
        // before 1, fcfs takes 1 first
        String[] common = {
            "engine.kv_cache.num_gpu_blocks=100",
            "engine.sglang.max_running_requests=1",
            "workload.synthetic.requests=3",
            "workload.synthetic.input_tokens={type: fixed, value: 64}",
            "workload.synthetic.output_tokens={type: fixed, value: 3}",
            "workload.synthetic.shared_prefix_tokens=48",
            "workload.synthetic.prefix_groups=2",
            "workload.arrival={type: constant, rate: 200}"
        };
        List<String> lpm = new java.util.ArrayList<>(List.of(common));
        lpm.add("engine.sglang.schedule_policy=lpm");
        RunResult l = run(lpm.toArray(String[]::new));
        assertThat(row(l, 2).arrivalNanos() + row(l, 2).ttftNanos()).isEqualTo(60 * MS);
        assertThat(row(l, 2).cachedTokens()).isEqualTo(48);
        assertThat(row(l, 1).arrivalNanos() + row(l, 1).ttftNanos()).isEqualTo(100 * MS);
        RunResult f = run(common);
        assertThat(row(f, 1).arrivalNanos() + row(f, 1).ttftNanos()).isEqualTo(60 * MS);
        assertThat(row(f, 2).arrivalNanos() + row(f, 2).ttftNanos()).isEqualTo(100 * MS);
    }

    @Test
    void lpm_deprioritisesAWaitingRequestThatSharesItsFirst32TokensWithAnEarlierOne() {
        // nothing cached; A and B share 48 tokens, C shares nothing; two may run: lpm admits A and C, not B (fcfs: A,
        // B)
        SchedulerSettings settings = new SchedulerSettings(2, 16384, 0, true, 1024, 16, 101, true, false, false);
        SglangScheduler s = scheduler(io.servesim.config.SglangConfig.Policy.LPM, 2, 1.0, settings);
        int[] shared = new int[48];
        for (int i = 0; i < 48; i++) {
            shared[i] = 7_000 + i;
        }
        s.addRequest(seq(0, concat(shared, 100, 16), settings));
        s.addRequest(seq(1, concat(shared, 200, 16), settings));
        s.addRequest(seq(2, concat(new int[0], 300, 64), settings));
        s.schedule(0, new io.servesim.timing.StepBatch());
        List<Integer> ids = new java.util.ArrayList<>();
        for (int i = 0; i < s.scheduledCount(); i++) {
            ids.add(s.scheduled(i).request().id());
        }
        assertThat(ids).containsExactly(0, 2);
    }

    @Test
    void dfsWeight_visitsHeavierSubtreesFirst_andANodesOwnRequestsAfterItsSubtrees() {
        // cached: [a | 48 unique] and [b1 b2 b3 | 16 unique] (pages of 16 tokens). Waiting, in arrival order: 10 (no
        // hit), 11 (b1 b2 b3), 12, 13 and 15 (a, then their own pages), 14 (b1). The a-subtree holds 3 waiting
        // requests, the b-subtree 2: a first (12, 13, 15 all end at node a), then b: node b1's child b1-b2-b3 (11)
        // before b1's own request (14); the requests without a hit (the root's own) last. lpm would take 11 first
        // (3 cached pages), fcfs 10
        SchedulerSettings settings = new SchedulerSettings(8, 16384, 0, true, 1024, 16, 101, true, false, false);
        SglangScheduler s = scheduler(io.servesim.config.SglangConfig.Policy.DFS_WEIGHT, 8, 1.0, settings);
        int[] a = concat(new int[0], 1_000, 16);
        int[] b = concat(new int[0], 2_000, 48);
        io.servesim.timing.StepBatch batch = new io.servesim.timing.StepBatch();
        it.unimi.dsi.fastutil.objects.ObjectArrayList<Sequence> done =
                new it.unimi.dsi.fastutil.objects.ObjectArrayList<>();
        s.addRequest(seq(0, concat(a, 3_000, 48), settings, 1));
        s.addRequest(seq(1, concat(b, 4_000, 16), settings, 1));
        s.schedule(0, batch);
        s.applyOutputs(20, done); // both prefills sample their only token and finish: their pages stay cached
        assertThat(done.size()).isEqualTo(2);
        s.addRequest(seq(10, concat(new int[0], 5_000, 64), settings, 4));
        s.addRequest(seq(11, concat(b, 6_000, 16), settings, 4));
        s.addRequest(seq(12, concat(a, 7_000, 48), settings, 4));
        s.addRequest(seq(13, concat(a, 8_000, 48), settings, 4));
        s.addRequest(seq(14, concat(java.util.Arrays.copyOf(b, 16), 9_000, 48), settings, 4));
        s.addRequest(seq(15, concat(a, 10_000, 48), settings, 4));
        s.schedule(20, batch);
        List<Integer> ids = new java.util.ArrayList<>();
        for (int i = 0; i < s.scheduledCount(); i++) {
            ids.add(s.scheduled(i).request().id());
        }
        assertThat(ids).containsExactly(12, 13, 15, 11, 14, 10);
    }

    /** A scheduler driven by hand: SGLang's defaults but the policy, running limit and conservativeness. */
    private static SglangScheduler scheduler(
            io.servesim.config.SglangConfig.Policy policy,
            int maxRunning,
            double conservativeness,
            SchedulerSettings settings) {
        io.servesim.config.SglangConfig config = new io.servesim.config.SglangConfig(
                policy,
                maxRunning,
                16384,
                8192,
                conservativeness,
                4096,
                false,
                io.servesim.config.SglangConfig.WritePolicy.WRITE_THROUGH,
                null);
        return new SglangScheduler(
                settings, config, maxRunning, new java.util.SplittableRandom(1), new SchedulerCounters(1000));
    }

    private static Sequence seq(int id, int[] prompt, SchedulerSettings settings, int outputs) {
        return new Sequence(
                new io.servesim.workload.Request(id, -1, 0, true, 0, prompt, outputs, id), settings.maxModelLen());
    }

    private static int[] concat(int[] head, int base, int n) {
        int[] t = java.util.Arrays.copyOf(head, head.length + n);
        for (int i = 0; i < n; i++) {
            t[head.length + i] = base + i;
        }
        return t;
    }

    private static Sequence seq(int id, int[] prompt, SchedulerSettings settings) {
        return new Sequence(
                new io.servesim.workload.Request(id, -1, 0, true, 0, prompt, 4, id), settings.maxModelLen());
    }

    @Test
    void chunkedPrefill_oneRequestAtATime_inPageAlignedChunks() {
        // a 100-token prompt, chunked_prefill_size 40: a truncated chunk is rounded down to the 16-token page, so 32,
        // 32, then the last 36 fit whole: three prefill batches, first token at 60 ms
        RunResult r = run(
                "engine.kv_cache.num_gpu_blocks=100",
                "workload.synthetic.requests=1",
                "workload.synthetic.input_tokens={type: fixed, value: 100}",
                "workload.synthetic.output_tokens={type: fixed, value: 2}",
                "engine.sglang.chunked_prefill_size=40");
        assertThat(row(r, 0).ttftNanos()).isEqualTo(60 * MS);
        assertThat(row(r, 0).e2eNanos()).isEqualTo(70 * MS); // then one decode batch
    }

    @Test
    void overlapScheduler_aRequestWhoseLastTokenIsInFlightDecodesOnceMore_andThatTokenIsDropped() {
        // event_loop_overlap: batch N+1 is scheduled and launched before N's results are processed, so a request
        // whose last token N samples is still in the running batch and gets one more decode slot, whose token is
        // dropped (process_batch_result_decode: enable_overlap and req.finished()). A (32-token prompt, 3 tokens):
        // prefill 0-20 (token 1), decodes 20-30 (token 2) and 30-40 (token 3: A ends at 40), and a fourth batch
        // 40-50 that only holds A's dropped token. B arrives at 41 ms; the loop takes it in when that batch's
        // results are processed (50 ms): prefill 50-70, TTFT 29 ms. Synchronously A leaves at 40 and B's prefill
        // runs 41-61.
        String[] sets = {
            "engine.kv_cache.num_gpu_blocks=100",
            "workload.synthetic.output_tokens={type: fixed, value: 3}",
            "workload.arrival={type: constant, rate: 24.390243902439025}"
        };
        List<String> overlap = new java.util.ArrayList<>(List.of(sets));
        overlap.add("engine.scheduler.async_scheduling=true");
        RunResult r = run(overlap.toArray(String[]::new));
        RequestRecord a = row(r, 0);
        RequestRecord b = row(r, 1);
        assertThat(b.arrivalNanos()).isEqualTo(41 * MS);
        assertThat(a.ttftNanos()).isEqualTo(20 * MS);
        assertThat(a.e2eNanos()).isEqualTo(40 * MS);
        assertThat(a.outputTokens()).isEqualTo(3);
        assertThat(b.ttftNanos()).isEqualTo(29 * MS);
        RunResult sync = run(sets);
        assertThat(row(sync, 0).e2eNanos()).isEqualTo(40 * MS);
        assertThat(row(sync, 1).ttftNanos()).isEqualTo(20 * MS);
    }

    @Test
    void overlapScheduler_aRetractedRequestsTokenInFlightIsDropped_andItRecomputesWithoutIt() {
        // driven batch by batch in event_loop_overlap's order (schedule N+1, then process N). 5 usable pages of 16
        // tokens, conservativeness 0.01 (ratio 0.007). A and B: 16-token prompts, 30 output tokens.
        // 1: A's prefill (A: 16 + 30 = 46 < 80 of room; B: 46 >= 34 left: NO_TOKEN). 2: B's prefill (room 4 x 16
        // less A's reservation ceil(30 x 0.007) = 1). From 3 on both decode, each on a second page (1 page free).
        // Batch 19 needs a third page for both: B (16 tokens, as A, but later in the running list) is retracted while
        // its token of batch 18 is in flight; processing 18 drops that token (is_retracted) and B recomputes its
        // 16-token prompt and 16 tokens
        SchedulerSettings settings = new SchedulerSettings(8, 16384, 0, true, 80, 16, 6, true, true, false);
        SglangScheduler s = scheduler(io.servesim.config.SglangConfig.Policy.FCFS, 8, 0.01, settings);
        Sequence a = new Sequence(
                new io.servesim.workload.Request(0, -1, 0, true, 0, concat(new int[0], 100, 16), 30, 0), 80);
        Sequence b = new Sequence(
                new io.servesim.workload.Request(1, -1, 0, true, 0, concat(new int[0], 200, 16), 30, 1), 80);
        s.addRequest(a);
        s.addRequest(b);
        io.servesim.timing.StepBatch batch = new io.servesim.timing.StepBatch();
        it.unimi.dsi.fastutil.objects.ObjectArrayList<Sequence> done =
                new it.unimi.dsi.fastutil.objects.ObjectArrayList<>();
        long t = 0;
        s.schedule(t, batch); // 1
        assertThat(s.scheduled(0)).isSameAs(a);
        for (int n = 2; n <= 18; n++) {
            s.schedule(t, batch);
            if (n == 2) {
                assertThat(s.scheduledCount()).isOne();
                assertThat(s.scheduled(0)).isSameAs(b);
            }
            s.applyOutputs(t += 10, done);
        }
        assertThat(s.preemptions()).isZero();
        assertThat(a.numOutputTokens()).isEqualTo(16); // batches 1 and 3-17
        assertThat(b.numOutputTokens()).isEqualTo(16); // batches 2-17
        assertThat(b.placeholders()).isOne(); // batch 18
        s.schedule(t, batch); // 19
        assertThat(s.preemptedLastStep()).isTrue();
        assertThat(s.scheduledCount()).isOne();
        assertThat(s.scheduled(0)).isSameAs(a);
        assertThat(b.placeholders()).isZero();
        assertThat(s.waitingHead()).isSameAs(b);
        s.applyOutputs(t += 10, done); // 18: A's token; B's is dropped
        assertThat(a.numOutputTokens()).isEqualTo(17);
        assertThat(b.numOutputTokens()).isEqualTo(16);
        assertThat(b.numTokens()).isEqualTo(32); // what it recomputes: the prompt and its 16 tokens
        while (s.hasWork()) {
            s.schedule(t, batch);
            s.applyOutputs(t += 10, done);
        }
        assertThat(a.numOutputTokens()).isEqualTo(30);
        assertThat(b.numOutputTokens()).isEqualTo(30);
        assertThat(s.pool().freeBlocks()).isEqualTo(5);
    }

    @Test
    void hiCache_writesThroughToHost_andLoadsAHostHitBackDuringTheBatchThatUsesIt() {
        // 5 usable device pages of 16 tokens; 70-token prompts, one output token each, one request at a time; A and C
        // share their first 48 tokens (3 pages), B shares nothing; 1 MB per token. A's prefill 0-20 caches 4 pages,
        // backed up to the host when B's batch starts (2 ms first byte + 64 MB at 64 GB/s = 3 ms) and locked until
        // then: B needs all 5 pages and waits, runs 23-43 and evicts A's pages from the device; its own pages are
        // backed up 43-46, so C (arriving at 43) starts at 46. C's 3 pages are a host hit, loaded back during its own
        // prefill batch: 2 ms + 48 MB at 1 GB/s = 50 ms, longer than the 20 ms forward: C's first token at 96
        String[] common = CheckedRuns.hostTierScenario().toArray(String[]::new);
        List<String> hi = CheckedRuns.hostTierScenario();
        hi.add(CheckedRuns.HOST_TIER);
        RunResult r = run(hi.toArray(String[]::new));
        assertThat(row(r, 1).arrivalNanos()).isEqualTo(20 * MS);
        assertThat(row(r, 1).ttftNanos()).isEqualTo(23 * MS);
        assertThat(row(r, 2).arrivalNanos()).isEqualTo(43 * MS);
        assertThat(row(r, 2).ttftNanos()).isEqualTo(53 * MS);
        assertThat(row(r, 2).cachedTokens()).isEqualTo(48);
        // write_back: nothing is backed up when computed, so B starts at once (20-40), evicting A's 4 pages, which are
        // written back then (3 ms, within B's 20 ms batch); C (at 40) loads A's 3 pages back (50 ms) while its own
        // allocation writes B's 4 evicted pages back (3 ms): first token at 90
        List<String> back = new java.util.ArrayList<>(hi);
        back.add("engine.sglang.hicache_write_policy=write_back");
        RunResult wb = run(back.toArray(String[]::new));
        assertThat(row(wb, 1).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(wb, 2).arrivalNanos()).isEqualTo(40 * MS);
        assertThat(row(wb, 2).ttftNanos()).isEqualTo(50 * MS);
        assertThat(row(wb, 2).cachedTokens()).isEqualTo(48);
        RunResult without = run(common);
        assertThat(row(without, 2).ttftNanos()).isEqualTo(20 * MS);
        assertThat(row(without, 2).cachedTokens()).isZero();
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        BASE,
                        "t",
                        List.of("engine.kv_cache.host_offload={num_host_blocks: 100, scope: cluster_shared}")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kv_cache.host_offload.scope");
    }

    @Test
    void hiCacheWriteThroughSelective_backsAPageUpOnlyWhenASecondRequestInsertsIt() {
        // two requests one after the other with the same first 48 tokens (3 pages of 16; 1 MB per token, so 16 MB a
        // page), 70-token prompts, 2 tokens each, a pool that holds both. write_through backs up the first's 4 pages
        // and the second's one new full page (the 3 shared ones are on the host already): 80 MB.
        // write_through_selective backs up only the 3 pages the second request hits again: 48 MB. write_back: none
        // (nothing is evicted)
        String[] common = {
            "engine.kv_cache.num_gpu_blocks=20",
            "workload.synthetic.requests=2",
            "workload.synthetic.input_tokens={type: fixed, value: 70}",
            "workload.synthetic.output_tokens={type: fixed, value: 2}",
            "workload.synthetic.shared_prefix_tokens=48",
            "workload.synthetic.prefix_groups=1",
            "workload.arrival={type: concurrency, concurrency: 1}",
            "engine.kv_cache.bytes_per_token=1000000",
            "engine.kv_cache.host_offload={num_host_blocks: 100}"
        };
        long[] bytes = new long[3];
        String[] policies = {"write_through", "write_through_selective", "write_back"};
        for (int i = 0; i < 3; i++) {
            List<String> sets = new java.util.ArrayList<>(List.of(common));
            sets.add("engine.sglang.hicache_write_policy=" + policies[i]);
            bytes[i] = run(sets.toArray(String[]::new)).counters().g2StoreBytes();
        }
        assertThat(bytes).containsExactly(80_000_000L, 48_000_000L, 0L);
    }

    @Test
    void config_defaultsAndErrors() {
        SimConfig c = ConfigLoader.fromYaml(BASE, "t", List.of());
        assertThat(ConfigLoader.fromYaml(ConfigLoader.toYaml(c), "again", List.of()))
                .isEqualTo(c);
        assertThat(ConfigLoader.fromYaml("engine: {kind: sglang}", "t", List.of())
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .as("SGLang's overlap scheduler is on by default (disable_overlap_schedule: false)")
                .isTrue();
        assertThat(ConfigLoader.fromYaml(BASE, "t", List.of("engine.sglang.schedule_policy=dfs-weight"))
                        .engine()
                        .sglang()
                        .schedulePolicy())
                .as("SGLang's spelling")
                .isEqualTo(io.servesim.config.SglangConfig.Policy.DFS_WEIGHT);
        assertThatThrownBy(() -> ConfigLoader.fromYaml("engine: {sglang: {max_prefill_tokens: 4}}", "t", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.sglang");
        assertThatThrownBy(() -> ConfigLoader.fromYaml(BASE, "t", List.of("engine.sglang.schedule_policy=priority")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.sglang.schedule_policy");
    }
}
