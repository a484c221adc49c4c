package io.servesim.run;

import io.servesim.config.SimConfig;
import io.servesim.engine.EngineRank;
import io.servesim.engine.RankScheduler;
import io.servesim.engine.StepObserver;
import io.servesim.kv.BlockPool;
import io.servesim.metrics.RequestLog;
import io.servesim.timing.StepBatch;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The engine's invariants, checked after every step of every rank and at the end of a run (the property tests and
 * {@code servesim bench soak}): block accounting (referenced + free = usable; the block tables, G2 store pins, loads
 * and KVCR source holds account for every reference; no negative ref count), the token budget, {@code
 * max_num_seqs}, every running request served in a step without preemption; at the end every request id exactly
 * once with a terminal status, completed ones in time order, and every surviving rank's blocks free again.
 * Violations are collected as text (at most {@value #MAX_VIOLATIONS}), never thrown, so a run reports them all.
 */
public final class Invariants implements StepObserver {
    /** Violations kept at most (the count goes on). */
    public static final int MAX_VIOLATIONS = 100;

    private final List<String> violations = new ArrayList<>();
    private long count;
    private long steps;

    /**
     * Checks for a run of {@code config}; each rank is held to its own limits (a pool of a heterogeneous fleet has
     * its own).
     */
    public Invariants(SimConfig config) {
        java.util.Objects.requireNonNull(config);
    }

    /** Installs the checks on every rank of {@code sim}. */
    public Invariants watch(Simulation sim) {
        sim.observeSteps(this);
        return this;
    }

    /** The violations found so far (the first {@value #MAX_VIOLATIONS}). */
    public List<String> violations() {
        return violations;
    }

    /** How many violations were found. */
    public long count() {
        return count;
    }

    /** Steps checked. */
    public long steps() {
        return steps;
    }

    private void violation(String what) {
        count++;
        if (violations.size() < MAX_VIOLATIONS) {
            violations.add(what);
        }
    }

    @Override
    public void afterSchedule(EngineRank rank, StepBatch batch) {
        steps++;
        RankScheduler s = rank.scheduler();
        int budget = s.settings().maxNumBatchedTokens();
        int maxSeqs = s.settings().maxNumSeqs();
        blocks(s);
        if (s.lastStepTokens() > budget) {
            violation("scheduled " + s.lastStepTokens() + " > budget " + budget);
        }
        if (s.scheduledCount() > maxSeqs) {
            violation("scheduled " + s.scheduledCount() + " requests > max_num_seqs " + maxSeqs);
        }
        if (s.numRunning() > maxSeqs && !(s instanceof io.servesim.engine.TrtllmScheduler)) {
            // TRT-LLM's max_batch_size bounds an iteration's requests; a started chunked context left out of one (a
            // skipped duplicate prefix let a later context start) still holds its blocks
            violation("running " + s.numRunning() + " > max_num_seqs " + maxSeqs);
        }
        int lastTokenInFlight = 0; // async: a request whose step in flight samples its last token is skipped
        for (int i = 0; i < s.numRunning(); i++) {
            var r = s.running(i);
            if (r.placeholders() > 0
                    && (r.numComputedTokens() + 2 - r.placeholders() >= r.promptLength() + r.maxTokens()
                            || r.numComputedTokens() >= s.settings().maxModelLen() - 1)) {
                lastTokenInFlight++;
            }
        }
        if (s instanceof io.servesim.engine.VllmScheduler
                && !s.preemptedLastStep()
                && s.scheduledCount() + lastTokenInFlight < s.numRunning()) {
            // vLLM serves every running request in a step that preempts nothing (its running loop ends only when the
            // budget does); TRT-LLM's micro-batch scheduler may leave started requests out (docs/engines.md)
            violation("a running request got no token in a step without preemption");
        }
        long sum = 0;
        for (int i = 0; i < batch.size(); i++) {
            sum += batch.newTokens(i);
        }
        if (sum != s.lastStepTokens()) {
            violation("batch tokens " + sum + " != scheduled " + s.lastStepTokens());
        }
    }

    @Override
    public void afterOutputs(EngineRank rank) {
        blocks(rank.scheduler());
    }

    private void blocks(RankScheduler s) {
        BlockPool pool = s.pool();
        if (pool.anyNegativeRefCount()) {
            violation("negative ref count");
            return;
        }
        if (pool.countReferencedBlocks() + pool.freeBlocks() != pool.usableBlocks()) {
            violation("referenced " + pool.countReferencedBlocks() + " + free " + pool.freeBlocks() + " != usable "
                    + pool.usableBlocks());
        }
        // G2 store pins, KVCR source holds and P/D prefills held for their decode worker
        long tableBlocks = (long) s.pinnedForStore() + s.heldForPulls() + s.heldForHandoffs();
        for (int i = 0; i < s.numRunning(); i++) {
            tableBlocks += s.running(i).table().blocksHeld();
        }
        for (int i = 0; i < s.numLoading(); i++) {
            tableBlocks += s.loading(i).table().blocksHeld(); // G2 loads hold their G1 blocks
        }
        tableBlocks += s.heldByWaiting(); // landed loads wait at the head of the queue, holding their blocks
        if (tableBlocks != pool.totalRefCount()) {
            violation("block tables hold " + tableBlocks + " refs but ref counts sum to " + pool.totalRefCount());
        }
    }

    /**
     * The end-of-run checks: every request id the workload created exactly once with a terminal status
     * ({@code incomplete} only under a time limit), completed requests with output and first ≤ last token after
     * arrival, and every surviving rank's blocks back in its free queue.
     */
    public void atEnd(Simulation sim, RunResult result, SimConfig config) {
        RequestLog log = result.log();
        if (log.size() != result.requestsCreated()) {
            violation(log.size() + " requests recorded, " + result.requestsCreated() + " created");
        }
        BitSet seen = new BitSet();
        boolean limited = config.limits().timeLimitS() != null;
        for (int i = 0; i < log.size(); i++) {
            int id = log.requestId(i);
            if (id < 0 || seen.get(id)) {
                violation("request id " + id + " recorded twice or negative");
            } else {
                seen.set(id);
            }
            String st = log.status(i).status();
            boolean terminal = st.equals("completed")
                    || st.equals("rejected")
                    || st.equals("abandoned")
                    || st.equals("timed_out")
                    || (limited && st.equals("incomplete"));
            if (!terminal) {
                violation("request " + id + " ended as '" + st + "'");
            }
            if (st.equals("completed")
                    && (log.outputTokens(i) <= 0
                            || log.firstTokenNanos(i) < log.arrivalNanos(i)
                            || log.lastTokenNanos(i) < log.firstTokenNanos(i))) {
                violation("request " + id + " completed out of order or without output");
            }
        }
        for (String p : sim.transferProblems(true)) {
            violation("transfers: " + p); // every byte submitted was delivered or cancelled, nothing left moving
        }
        long ranks = config.cluster().totalRanks();
        for (int g = 0; g < ranks && !limited; g++) {
            if (sim.rank(g).failed()) {
                continue; // a failed worker's pool is gone with it
            }
            BlockPool pool = sim.rank(g).scheduler().pool();
            if (pool.freeBlocks() != pool.usableBlocks()) {
                violation("rank " + g + ": " + (pool.usableBlocks() - pool.freeBlocks())
                        + " blocks still held at the end");
            }
        }
    }
}
