package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.kv.BlockPool;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * vLLM v1 scheduler rules ({@code vllm/v1/core/sched/scheduler.py}), one test per rule, each with expectations
 * computed by hand on tiny pools. Block size 4 unless stated; the pool's block 0 is vLLM's null block.
 */
class VllmSchedulerTest {

    @Test
    void runningRequests_areServedBeforeWaiting_inAdmissionOrder_fromOneBudget() {
        SchedulerKit k = SchedulerKit.of(8, 10, 4, 64);
        k.add(0, 6, 5);
        k.add(1, 8, 5);
        // step 1: A gets its 6 prompt tokens, B the remaining 4 of the budget (a chunk)
        assertThat(k.step()).containsExactly(Map.entry(0, 6), Map.entry(1, 4));
        k.add(2, 20, 5);
        // step 2: running first in admission order: A decodes 1, B finishes its prompt (4), then waiting C gets 5
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 4), Map.entry(2, 5));
        assertThat(k.runningIds()).containsExactly(0, 1, 2);
    }

    @Test
    void decode_schedulesExactlyOneToken_andSamplesOneTokenPerStep() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        Sequence a = k.add(0, 5, 3);
        assertThat(k.step()).containsExactly(Map.entry(0, 5));
        assertThat(a.numOutputTokens()).isEqualTo(1); // the prefill's last chunk samples the first token
        assertThat(k.step()).containsExactly(Map.entry(0, 1));
        assertThat(a.numOutputTokens()).isEqualTo(2);
        assertThat(a.numComputedTokens()).isEqualTo(6);
    }

    @Test
    void runningPrefill_continuesWith_minOfRemainingAndBudget_andAPartialChunkSamplesNoToken() {
        SchedulerKit k = SchedulerKit.of(8, 8, 4, 64);
        Sequence a = k.add(0, 20, 2);
        assertThat(k.step()).containsExactly(Map.entry(0, 8));
        assertThat(a.numOutputTokens()).isZero();
        assertThat(k.step()).containsExactly(Map.entry(0, 8));
        assertThat(a.numOutputTokens()).isZero();
        assertThat(k.step()).containsExactly(Map.entry(0, 4)); // remaining 4 < budget 8
        assertThat(a.numOutputTokens()).isEqualTo(1);
        assertThat(a.firstTokenNanos()).isEqualTo(3 * SchedulerKit.STEP_NANOS);
    }

    @Test
    void longPrefillTokenThreshold_capsEachRequestPerStep_inBothLoops() {
        SchedulerKit k = new SchedulerKit(new SchedulerSettings(8, 10, 3, true, 63 * 4, 4, 64, true, false, false));
        k.add(0, 7, 2);
        k.add(1, 7, 2);
        k.add(2, 7, 2);
        // waiting loop: 3 + 3 + 3 (capped), budget 10 leaves 1 unused because every request is capped at 3
        assertThat(k.step()).containsExactly(Map.entry(0, 3), Map.entry(1, 3), Map.entry(2, 3));
        // running loop: 3 + 3 + 3 again, then 1 + 1 + 1 (remaining)
        assertThat(k.step()).containsExactly(Map.entry(0, 3), Map.entry(1, 3), Map.entry(2, 3));
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 1), Map.entry(2, 1));
    }

    /**
     * The running loop spends the budget in list order and stops when it is gone: a long prefill earlier in
     * {@code running} is served before anything behind it, and a new arrival waits although it needs 1 token. (With
     * synchronous FCFS and no speculative decoding, the tokens taken by requests ahead of a running request never
     * grow after its admission, so a running request always gets at least one token; what the long prefill starves
     * is everything the remaining budget cannot reach.)
     */
    @Test
    void longPrefillEarlierInRunning_takesTheBudgetFirst_laterRequestsGetNothingThatStep() {
        SchedulerKit k = SchedulerKit.of(8, 8, 4, 64);
        k.add(0, 30, 2);
        assertThat(k.step()).containsExactly(Map.entry(0, 8));
        k.add(1, 1, 2);
        assertThat(k.step()).containsExactly(Map.entry(0, 8));
        assertThat(k.scheduler.numWaiting()).isEqualTo(1);
        assertThat(k.step()).containsExactly(Map.entry(0, 8));
        // remaining prefill 6 < 8: the arrival finally gets the leftover 2 (needs only 1)
        assertThat(k.step()).containsExactly(Map.entry(0, 6), Map.entry(1, 1));
    }

    /**
     * 5 usable blocks of 4 tokens filled by A (prompt 4: 1 block), B and C (prompt 3: 1 block each) and D (prompt 8:
     * 2 blocks), after their first step. In the next step A's 5th token needs a block and the pool is empty.
     */
    private static SchedulerKit fiveBlocksFilledByFourRequests() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 6);
        k.add(0, 4, 10);
        k.add(1, 3, 10);
        k.add(2, 3, 10);
        k.add(3, 8, 10);
        assertThat(k.step()).containsExactly(Map.entry(0, 4), Map.entry(1, 3), Map.entry(2, 3), Map.entry(3, 8));
        assertThat(k.scheduler.pool().freeBlocks()).isZero();
        return k;
    }

    @Test
    void allocationFailure_preemptsTheLastRunningRequest_LIFO() {
        SchedulerKit k = fiveBlocksFilledByFourRequests();
        // step 2: A's 5th token needs a 2nd block, the pool is empty: the LAST running request (D) is preempted.
        // B's and C's 4th tokens fit their first block.
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 1), Map.entry(2, 1));
        assertThat(k.runningIds()).containsExactly(0, 1, 2);
        assertThat(k.scheduler.waitingHead().request().id()).isEqualTo(3);
        assertThat(k.counters.preemptions()).isEqualTo(1);
    }

    @Test
    void preemptedRequest_isPrependedToWaiting_withComputedTokensReset_andBlocksFreed() {
        SchedulerKit k = fiveBlocksFilledByFourRequests();
        Sequence d = k.scheduler.running(3);
        k.add(4, 2, 1); // a later arrival, queued before D's preemption
        k.step(); // D preempted
        assertThat(d.numComputedTokens()).isZero();
        assertThat(d.preemptions()).isEqualTo(1);
        assertThat(d.table().numBlocks()).isZero();
        // D went to the FRONT of waiting, ahead of the arrival E that was already queued
        assertThat(k.scheduler.waitingHead().request().id()).isEqualTo(3);
        assertThat(k.scheduler.numWaiting()).isEqualTo(2);
    }

    @Test
    void preemptingTheRequestItself_stopsTheRunningLoop() {
        // 3 usable blocks: A (prompt 3) holds 1, B (prompt 8) holds 2. B's 9th token needs a block; B is the last
        // running request, so B is its own victim: it is preempted and the running loop stops.
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 4);
        k.add(0, 3, 10);
        Sequence b = k.add(1, 8, 10);
        assertThat(k.step()).containsExactly(Map.entry(0, 3), Map.entry(1, 8));
        k.add(2, 1, 1); // would fit once B's blocks are freed, but nothing is admitted in a preempting step
        assertThat(k.step()).containsExactly(Map.entry(0, 1));
        assertThat(b.preemptions()).isEqualTo(1);
        assertThat(k.runningIds()).containsExactly(0);
        assertThat(k.scheduler.waitingHead().request().id()).isEqualTo(1);
        assertThat(k.scheduler.pool().freeBlocks()).isEqualTo(2);
    }

    @Test
    void noWaitingRequestIsAdmitted_inAStepThatPreempted() {
        SchedulerKit k = fiveBlocksFilledByFourRequests();
        k.add(4, 1, 1); // needs 1 block; after D's preemption 1 block stays free but admission is skipped
        Map<Integer, Integer> s = k.step();
        assertThat(s).doesNotContainKey(4).doesNotContainKey(3);
        assertThat(k.scheduler.preemptedLastStep()).isTrue();
        assertThat(k.scheduler.pool().freeBlocks()).isEqualTo(1); // D freed 2, A took 1
        assertThat(k.scheduler.numWaiting()).isEqualTo(2);
    }

    @Test
    void waitingAdmission_isFcfs_untilMaxNumSeqs() {
        SchedulerKit k = SchedulerKit.of(2, 100, 4, 64);
        k.add(0, 3, 5);
        k.add(1, 3, 5);
        k.add(2, 3, 5);
        assertThat(k.step()).containsExactly(Map.entry(0, 3), Map.entry(1, 3));
        assertThat(k.scheduler.numWaiting()).isEqualTo(1);
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 1));
    }

    @Test
    void waitingAdmission_blocksAtTheHead_whenItsBlocksDoNotFit_evenIfALaterRequestWould() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 4); // 3 usable blocks
        k.add(0, 8, 10); // A: 2 blocks
        assertThat(k.step()).containsExactly(Map.entry(0, 8));
        k.add(1, 8, 1); // B needs 2 blocks, only 1 free (A's token 9 will need it too)
        k.add(2, 1, 1); // C needs 1 block and would fit
        Map<Integer, Integer> s = k.step();
        assertThat(s).containsExactly(Map.entry(0, 1)); // A decodes (takes the 3rd block); B blocks C
        assertThat(k.scheduler.numWaiting()).isEqualTo(2);
        assertThat(k.scheduler.waitingHead().request().id()).isEqualTo(1);
    }

    @Test
    void chunkedPrefillOff_aPromptLargerThanTheRemainingBudget_waitsForTheNextStep() {
        SchedulerKit k = new SchedulerKit(new SchedulerSettings(8, 10, 0, false, 10, 4, 64, true, false, false));
        k.add(0, 6, 3);
        k.add(1, 6, 3);
        assertThat(k.step()).containsExactly(Map.entry(0, 6)); // B (6) > remaining 4: not chunked, waits
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 6));
    }

    @Test
    void prefixLookup_hitsFullBlocksOnly_andRecordsCachedTokensAtFirstAdmission() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        int[] shared = k.uniqueTokens(10); // 2 full blocks + 2 tokens
        k.add(0, shared, 1);
        k.step(); // A computes 10 tokens: blocks [0..4) and [4..8) are full and cached
        int[] b = new int[14];
        System.arraycopy(shared, 0, b, 0, 10);
        System.arraycopy(k.uniqueTokens(4), 0, b, 10, 4);
        Sequence bs = k.add(1, b, 1);
        assertThat(k.step()).containsExactly(Map.entry(1, 6)); // 8 hit (2 full blocks), the partial 3rd is not
        assertThat(bs.cachedTokensAtFirstAdmission()).isEqualTo(8);
    }

    @Test
    void lastPromptToken_isNeverAHit_soAFullyCachedBlockAlignedPromptRecomputesOneBlock() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        int[] p = k.uniqueTokens(8);
        k.add(0, p, 1);
        k.step();
        Sequence again = k.add(1, p.clone(), 1);
        // max hit = (8 - 1) / 4 = 1 block: 4 tokens hit, 4 recomputed (vLLM design doc's example, scaled)
        assertThat(k.step()).containsExactly(Map.entry(1, 4));
        assertThat(again.cachedTokensAtFirstAdmission()).isEqualTo(4);
    }

    @Test
    void hitOnABlockWithRefCountZero_takesItOffTheFreeQueue_andCostsFreeCapacity() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 4); // 3 usable blocks
        int[] p = k.uniqueTokens(8);
        k.add(0, p, 1); // A: 2 blocks, finishes after its first step, blocks freed but cached
        k.step();
        BlockPool pool = k.scheduler.pool();
        assertThat(pool.freeBlocks()).isEqualTo(3);
        int[] q = new int[12];
        System.arraycopy(p, 0, q, 0, 8);
        System.arraycopy(k.uniqueTokens(4), 0, q, 8, 4);
        Sequence b = k.add(1, q, 1);
        // B hits 2 cached blocks (ref 0, in the free queue) and needs 1 new: 2 + 1 = 3 <= 3 free
        assertThat(k.schedule()).containsExactly(Map.entry(1, 4));
        assertThat(b.cachedTokensAtFirstAdmission()).isEqualTo(8);
        assertThat(pool.freeBlocks()).isZero();
        assertThat(pool.refCount(b.table().block(0))).isEqualTo(1);
    }

    @Test
    void hitBlocksWithRefCountZero_countAgainstCapacity_soAdmissionCanFailDespiteTheHit() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 4); // 3 usable blocks
        int[] p = k.uniqueTokens(8);
        k.add(0, p, 1);
        k.step(); // A done: its 2 blocks are cached with ref count 0
        k.add(1, 4, 20); // C: 1 block, stays running
        k.step();
        int[] q = new int[12];
        System.arraycopy(p, 0, q, 0, 8);
        System.arraycopy(k.uniqueTokens(4), 0, q, 8, 4);
        k.add(2, q, 1);
        // B hits 2 blocks (ref 0) + needs 1 new = 3 > 2 free (C holds 1, and C's decode may need none): blocked
        Map<Integer, Integer> s = k.step();
        assertThat(s).doesNotContainKey(2);
        assertThat(k.scheduler.numWaiting()).isEqualTo(1);
    }

    @Test
    void blocksAreCachedAtScheduleTime_soALaterRequestInTheSameStepHitsThem() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        int[] p = k.uniqueTokens(9);
        k.add(0, p, 1);
        Sequence b = k.add(1, p.clone(), 1);
        // A schedules 9 tokens, caching 2 full blocks at schedule time; B, in the same step, hits both
        assertThat(k.step()).containsExactly(Map.entry(0, 9), Map.entry(1, 1));
        assertThat(b.cachedTokensAtFirstAdmission()).isEqualTo(8);
    }

    @Test
    void outputTokenBlocks_areHashedToo_soANextTurnHitsPromptAndOutput() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        int[] p = k.uniqueTokens(6);
        Sequence a = k.add(0, p, 6); // 6 prompt + 6 output = 12 tokens = 3 full blocks
        for (int i = 0; i < 6; i++) {
            k.step();
        }
        assertThat(a.finished()).isTrue();
        // next turn: prompt = A's prompt + A's 6 generated tokens + 3 new
        int[] next = new int[15];
        System.arraycopy(p, 0, next, 0, 6);
        for (int i = 0; i < 6; i++) {
            next[6 + i] = a.request().outputToken(i);
        }
        System.arraycopy(k.uniqueTokens(3), 0, next, 12, 3);
        Sequence b = k.add(1, next, 1);
        k.step();
        // blocks 0-1 were full when A's prompt/first outputs were scheduled; block 2 (tokens 8..11) holds output
        // tokens 3..6, the last of which was sampled but never computed by A, so it was not cached: hit = 2 blocks
        assertThat(b.cachedTokensAtFirstAdmission()).isEqualTo(8);
    }

    @Test
    void free_releasesBlocksInReverseOrder_toTheTailOfTheFreeQueue_andAllocationTakesTheHead() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 6); // usable blocks 1..5, free queue 1,2,3,4,5
        Sequence a = k.add(0, 12, 1); // takes blocks 1,2,3 from the head
        k.step();
        assertThat(a.finished()).isTrue();
        // A's blocks freed last-first: 3, 2, 1 appended after 4, 5
        assertThat(k.scheduler.pool().freeQueueSnapshot()).containsExactly(4, 5, 3, 2, 1);
        Sequence b = k.add(1, 8, 1);
        k.schedule();
        assertThat(b.table().block(0)).isEqualTo(4);
        assertThat(b.table().block(1)).isEqualTo(5);
    }

    @Test
    void reallocatingACachedBlock_evictsItsHash_deepestBlockOfAFreedRequestFirst() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 4); // usable 1,2,3
        int[] p = k.uniqueTokens(12);
        k.add(0, p, 1);
        k.step(); // A cached blocks 1,2 (block 3 holds tokens 8..11 + ... ) then freed 3,2,1
        BlockPool pool = k.scheduler.pool();
        long evictionsBefore = pool.evictions();
        k.add(1, 4, 1); // needs 1 block: pops the head = block 3 (A's deepest)
        k.step();
        assertThat(pool.evictions()).isEqualTo(evictionsBefore + 1);
        // A's first two blocks are still cached: a request with A's prompt hits 8 tokens
        Sequence again = k.add(2, p.clone(), 1);
        k.step();
        assertThat(again.cachedTokensAtFirstAdmission()).isEqualTo(8);
    }

    @Test
    void preemptedRequest_resumes_hittingItsOwnSurvivingBlocks_withoutChangingFirstAdmissionCachedTokens() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 6); // 5 usable blocks
        k.add(0, 4, 2); // A finishes after step 2
        k.add(1, 1, 10);
        k.add(2, 1, 10);
        Sequence d = k.add(3, 8, 10); // A1 + B1 + C1 + D2 = 5 blocks
        k.step();
        // step 2: A needs a block -> D preempted: D's blocks go to the tail deepest first [D2, D1]; A pops D2
        // (evicting it); A then finishes and frees its 2 blocks: free queue [D1, A2, A1]
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 1), Map.entry(2, 1));
        assertThat(d.cachedTokensAtFirstAdmission()).isZero();
        // step 3: D resumes with 9 known tokens: its first block survived (4 tokens hit), 5 are recomputed
        assertThat(k.step()).containsExactly(Map.entry(1, 1), Map.entry(2, 1), Map.entry(3, 5));
        assertThat(d.cachedTokensAtFirstAdmission()).isZero(); // recorded once, at first admission
        assertThat(k.counters.admissionHitTokens()).isEqualTo(4);
        assertThat(k.counters.firstAdmissionHitTokens()).isZero();
    }

    @Test
    void requestReachingMaxModelLen_finishesLengthCapped() {
        SchedulerKit k = new SchedulerKit(new SchedulerSettings(8, 100, 0, true, 8, 4, 64, true, false, false));
        Sequence a = k.add(0, 6, 10); // room for 2 output tokens only
        k.step();
        k.step();
        assertThat(a.finished()).isTrue();
        assertThat(a.numOutputTokens()).isEqualTo(2);
    }

    /**
     * Decode runs (servesim's shortcut, not a vLLM rule): after a step that schedules every running request as a
     * plain decode, the steps in which none of them can need a block, fill one or sample its last token skip the
     * per-request checks, with the same result. Block 4, prompt 3, 8 outputs: step 2 fills block 1, step 3
     * allocates block 2 (5 computed), so steps 4 and 5 (6 and 7 computed) are a run; step 6 fills block 2, step 7
     * allocates block 3, step 8 samples the last token.
     */
    @Test
    void decodeRun_coversTheStepsBetweenBlockBoundaries_andChangesNothing() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        SchedulerKit full = fullPathKit();
        Sequence a = k.add(0, 3, 8);
        Sequence b = full.add(0, 3, 8);
        long[] runStepsAfter = new long[8];
        for (int i = 0; i < 8; i++) {
            stepBothAlike(k, full, new Sequence[] {a}, new Sequence[] {b});
            runStepsAfter[i] = k.scheduler.decodeRunSteps();
        }
        assertThat(runStepsAfter).containsExactly(0, 0, 0, 1, 2, 2, 2, 2);
        assertThat(a.finished()).isTrue();
        assertThat(k.counters.generatedTokens())
                .isEqualTo(full.counters.generatedTokens())
                .isEqualTo(8);
        assertThat(full.scheduler.decodeRunSteps()).isZero();
    }

    /** The decode-run tests' kit (budget 100, block 4, 64 blocks) with every step on the full path. */
    private static SchedulerKit fullPathKit() {
        SchedulerKit full = SchedulerKit.of(8, 100, 4, 64);
        full.scheduler.noDecodeRuns();
        return full;
    }

    /** One step of both kits: the same schedule, computed tokens, token times and blocks in use. */
    private static void stepBothAlike(SchedulerKit k, SchedulerKit full, Sequence[] ours, Sequence[] theirs) {
        assertThat(k.step()).isEqualTo(full.step());
        k.scheduler.settleRun(); // a decode run advances its requests as a whole: bring them up to date to read them
        for (int j = 0; j < ours.length; j++) {
            assertThat(ours[j].numComputedTokens()).isEqualTo(theirs[j].numComputedTokens());
            assertThat(ours[j].lastTokenNanos()).isEqualTo(theirs[j].lastTokenNanos());
        }
        assertThat(k.scheduler.pool().usedBlocks())
                .isEqualTo(full.scheduler.pool().usedBlocks());
    }

    /**
     * A decode run's steps advance the run as a whole, not its requests (so a step costs the same whatever the batch):
     * a request reads as of before the run's steps until the scheduler settles it, which every read through the
     * scheduler does. Block 4, prompt 3, 8 outputs (steps 4 and 5 are a run, as above; a step's outputs land 10 ms
     * after it starts): step 4's outputs are applied one by one (each request's previous token came at its own time),
     * so after it A has 4 outputs, its latest at 40 ms, but still 5 computed tokens; step 5 leaves A as it was; read
     * through the scheduler, A has 7 computed tokens and 5 outputs, the latest at 50 ms.
     */
    @Test
    void decodeRun_advancesTheRunAsAWhole_andARequestCatchesUpWhenRead() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        Sequence a = k.add(0, 3, 8);
        k.step();
        k.step();
        k.step();
        assertThat(a.numComputedTokens()).isEqualTo(5);
        k.step(); // the run's first step
        assertThat(k.scheduler.decodeRunSteps()).isEqualTo(1);
        assertThat(a.numComputedTokens()).isEqualTo(5);
        assertThat(a.numOutputTokens()).isEqualTo(4);
        assertThat(a.lastTokenNanos()).isEqualTo(40_000_000L);
        k.step(); // the run's second step
        assertThat(k.scheduler.decodeRunSteps()).isEqualTo(2);
        assertThat(a.numComputedTokens()).isEqualTo(5);
        assertThat(a.numOutputTokens()).isEqualTo(4);
        assertThat(a.lastTokenNanos()).isEqualTo(40_000_000L);
        assertThat(k.counters.generatedTokens()).isEqualTo(5); // the run's tokens are counted as they are sampled

        assertThat(k.scheduler.running(0)).isSameAs(a);
        assertThat(a.numComputedTokens()).isEqualTo(7);
        assertThat(a.numOutputTokens()).isEqualTo(5);
        assertThat(a.lastTokenNanos()).isEqualTo(50_000_000L);
        k.step();
        k.step();
        k.step();
        assertThat(a.finished()).isTrue();
        assertThat(a.numOutputTokens()).isEqualTo(8);
        assertThat(a.lastTokenNanos()).isEqualTo(80_000_000L);
    }

    /** An arrival ends a decode run: the next step takes the full path and admits it beside the decode. */
    @Test
    void decodeRun_endsWhenARequestWaits() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        k.add(0, 3, 8);
        k.step();
        k.step();
        k.step(); // a run of two steps is now proven (see above)
        k.add(1, 2, 2);
        assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 2));
        assertThat(k.scheduler.decodeRunSteps()).isZero();
    }

    /**
     * Plain decode entries (servesim's shortcut, not a vLLM rule): within a step that is no decode run, a request whose
     * decodes stay below its recorded bound skips the running loop's checks while the other allocates. Block 4, A
     * prompt 3 and B prompt 5, 8 outputs each: B is plain at steps 3, 6 and 7 (6, 9 and 10 computed before them; its
     * bounds are 7, then 11), A at steps 4 and 5 (bound 7 after it allocated block 2 at step 3); every other decode
     * allocates, fills a block or may sample the last token.
     */
    @Test
    void plainDecodes_skipTheChecksWithinTheirBound_besideARequestThatAllocates() {
        SchedulerKit k = SchedulerKit.of(8, 100, 4, 64);
        SchedulerKit full = fullPathKit();
        Sequence a = k.add(0, 3, 8);
        Sequence b = k.add(1, 5, 8);
        Sequence fa = full.add(0, 3, 8);
        Sequence fb = full.add(1, 5, 8);
        long[] plainAfter = new long[8];
        for (int i = 0; i < 8; i++) {
            stepBothAlike(k, full, new Sequence[] {a, b}, new Sequence[] {fa, fb});
            plainAfter[i] = k.scheduler.plainDecodes();
        }
        assertThat(plainAfter).containsExactly(0, 0, 1, 2, 3, 4, 5, 5);
        assertThat(a.finished()).isTrue();
        assertThat(b.finished()).isTrue();
        assertThat(k.scheduler.decodeRunSteps()).isZero();
        assertThat(full.scheduler.plainDecodes()).isZero();
    }

    /**
     * vLLM's {@code scheduler_reserve_full_isl} (on by default from v0.19.0, {@code kv_cache_manager.allocate_slots}
     * with {@code full_sequence_must_fit}): a waiting request is admitted only if the blocks of its whole prompt fit,
     * not just those of this step's chunk. Pool of 5 usable 4-token blocks, budget 8: A (8 tokens) takes 2 blocks in
     * step 1; in step 2 A's decode takes a third, leaving 2. B (16 tokens) needs 4 blocks for its whole prompt: with
     * the gate it waits; without it, its 7-token chunk (2 blocks) is admitted at once.
     */
    @Test
    void reserveFullIsl_admitsAWaitingRequestOnlyIfItsWholePromptsBlocksFit() {
        for (boolean gate : new boolean[] {true, false}) {
            SchedulerKit k = new SchedulerKit(new SchedulerSettings(8, 8, 0, true, 20, 4, 6, true, false, gate));
            k.add(0, 8, 10);
            assertThat(k.step()).containsExactly(Map.entry(0, 8));
            k.add(1, 16, 2);
            if (gate) {
                assertThat(k.step()).as("gate on").containsExactly(Map.entry(0, 1));
                assertThat(k.scheduler.pool().freeBlocks()).isEqualTo(2);
            } else {
                assertThat(k.step()).as("gate off").containsExactly(Map.entry(0, 1), Map.entry(1, 7));
            }
        }
    }

    /**
     * The gate counts prefix hits as vLLM's {@code get_num_blocks_to_allocate} does: blocks needed = ceil(tokens /
     * block) − hit blocks, plus each hit block with ref count 0 (taking it from the free queue uses a free block).
     * Same pool as above, 2 blocks free in step 2: B shares A's two running (ref count 1) prompt blocks, so its
     * 16-token prompt needs 4 − 2 = 2 blocks and is admitted with its 8 new tokens; B', as long but sharing nothing,
     * needs 4 and waits.
     */
    @Test
    void reserveFullIsl_subtractsPrefixHits_heldByRunningRequests() {
        for (boolean shared : new boolean[] {true, false}) {
            SchedulerKit k = new SchedulerKit(new SchedulerSettings(8, 9, 0, true, 20, 4, 6, true, false, true));
            int[] a = k.uniqueTokens(9);
            k.add(0, a, 10);
            assertThat(k.step()).containsExactly(Map.entry(0, 9)); // 3 blocks, 2 free
            int[] b = k.uniqueTokens(16);
            if (shared) {
                System.arraycopy(a, 0, b, 0, 8);
            }
            k.add(1, b, 2);
            // A decodes in its third block (no new one)
            if (shared) {
                assertThat(k.step()).containsExactly(Map.entry(0, 1), Map.entry(1, 8));
                assertThat(k.scheduler.pool().freeBlocks()).isZero();
            } else {
                assertThat(k.step()).containsExactly(Map.entry(0, 1));
                assertThat(k.scheduler.pool().freeBlocks()).isEqualTo(2);
            }
        }
    }
}
