package io.servesim.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ArrivalConfig;
import io.servesim.config.DistributionConfig;
import io.servesim.config.SessionsConfig;
import io.servesim.config.SyntheticConfig;
import io.servesim.sim.EventQueue;
import io.servesim.sim.RandomStreams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Synthetic requests and sessions: arrival processes, closed loops, prompt composition, determinism. */
class WorkloadTest {
    private static final DistributionConfig TEN = DistributionConfig.fixed(10);

    @Test
    void constantRate_arrivalsAreExactlyEveryOneOverRate() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SyntheticWorkload w = new SyntheticWorkload(
                new SyntheticConfig(4L, null, TEN, TEN, 0, 1),
                new ArrivalConfig(ArrivalConfig.Type.CONSTANT, 4.0, null),
                new RandomStreams(1));
        w.start(q, got::add);
        while (q.runNext()) {}
        assertThat(got).extracting(Request::arrivalNanos).containsExactly(0L, 250_000_000L, 500_000_000L, 750_000_000L);
        assertThat(got).extracting(Request::id).containsExactly(0, 1, 2, 3);
    }

    @Test
    void poissonArrivals_haveTheConfiguredMeanRate() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SyntheticWorkload w = new SyntheticWorkload(
                new SyntheticConfig(20_000L, null, TEN, TEN, 0, 1),
                new ArrivalConfig(ArrivalConfig.Type.POISSON, 50.0, null),
                new RandomStreams(3));
        w.start(q, got::add);
        while (q.runNext()) {}
        double seconds = got.get(got.size() - 1).arrivalNanos() / 1e9;
        assertThat(got.size() / seconds).isBetween(48.5, 51.5);
    }

    @Test
    void durationStop_endsArrivalsAtTheHorizon() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SyntheticWorkload w = new SyntheticWorkload(
                new SyntheticConfig(null, 1.0, TEN, TEN, 0, 1),
                new ArrivalConfig(ArrivalConfig.Type.CONSTANT, 10.0, null),
                new RandomStreams(1));
        w.start(q, got::add);
        while (q.runNext()) {}
        assertThat(got).hasSize(11); // t = 0, 0.1, ..., 1.0 s
    }

    @Test
    void concurrency_keepsNInFlight_releasingOneRequestPerCompletion() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SyntheticWorkload w = new SyntheticWorkload(
                new SyntheticConfig(5L, null, TEN, TEN, 0, 1),
                new ArrivalConfig(ArrivalConfig.Type.CONCURRENCY, null, 2),
                new RandomStreams(1));
        w.start(q, got::add);
        while (q.runNext()) {}
        assertThat(got).hasSize(2);
        w.onRequestDone(got.get(0), 10, false);
        while (q.runNext()) {}
        assertThat(got).hasSize(3);
        assertThat(w.requestsCreated()).isEqualTo(3);
    }

    @Test
    void sharedPrefix_isCommonWithinAGroup_andTheSuffixIsUnique() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SyntheticWorkload w = new SyntheticWorkload(
                new SyntheticConfig(4L, null, DistributionConfig.fixed(20), TEN, 8, 2),
                new ArrivalConfig(ArrivalConfig.Type.CONSTANT, 10.0, null),
                new RandomStreams(5));
        w.start(q, got::add);
        while (q.runNext()) {}
        int[] r0 = got.get(0).promptTokens();
        int[] r2 = got.get(2).promptTokens(); // same group (i mod 2)
        int[] r1 = got.get(1).promptTokens();
        assertThat(Arrays.copyOf(r0, 8)).isEqualTo(Arrays.copyOf(r2, 8));
        assertThat(Arrays.copyOf(r0, 8)).isNotEqualTo(Arrays.copyOf(r1, 8));
        assertThat(Arrays.copyOfRange(r0, 8, 20)).isNotEqualTo(Arrays.copyOfRange(r2, 8, 20));
    }

    @Test
    void requestContent_dependsOnItsIdAndSeedOnly_notOnTheArrivalProcess() {
        List<Request> a = new ArrayList<>();
        List<Request> b = new ArrayList<>();
        DistributionConfig len = new DistributionConfig(DistributionConfig.Type.UNIFORM, null, null, null, 1.0, 500.0);
        EventQueue qa = new EventQueue();
        new SyntheticWorkload(
                        new SyntheticConfig(3L, null, len, len, 0, 1),
                        new ArrivalConfig(ArrivalConfig.Type.POISSON, 5.0, null),
                        new RandomStreams(9))
                .start(qa, a::add);
        while (qa.runNext()) {}
        EventQueue qb = new EventQueue();
        new SyntheticWorkload(
                        new SyntheticConfig(3L, null, len, len, 0, 1),
                        new ArrivalConfig(ArrivalConfig.Type.CONSTANT, 1.0, null),
                        new RandomStreams(9))
                .start(qb, b::add);
        while (qb.runNext()) {}
        for (int i = 0; i < 3; i++) {
            assertThat(a.get(i).promptTokens()).isEqualTo(b.get(i).promptTokens());
            assertThat(a.get(i).outputTokens()).isEqualTo(b.get(i).outputTokens());
        }
    }

    /**
     * One session of {@code turns} turns with fixed lengths (first prompt, new tokens per turn, outputs) and a 100 ms
     * think time, started on {@code q}: its turns arrive in {@code got}.
     */
    private static SessionWorkload oneSession(
            EventQueue q, List<Request> got, int turns, int first, int fresh, int output, long seed) {
        SessionWorkload w = new SessionWorkload(
                new SessionsConfig(
                        1L,
                        null,
                        turns,
                        DistributionConfig.fixed(first),
                        DistributionConfig.fixed(fresh),
                        DistributionConfig.fixed(output),
                        DistributionConfig.fixed(100),
                        0,
                        1,
                        0.0),
                new ArrivalConfig(ArrivalConfig.Type.CONSTANT, 1.0, null),
                new RandomStreams(seed));
        w.start(q, got::add);
        return w;
    }

    @Test
    void nextTurnPrompt_isPreviousPromptPlusGeneratedTokensPlusNewTokens_releasedAfterThinkTime() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SessionWorkload w = oneSession(q, got, 3, 10, 5, 4, 2);
        while (q.runNext()) {}
        assertThat(got).hasSize(1);
        Request t0 = got.get(0);
        assertThat(t0.promptLength()).isEqualTo(10);
        assertThat(t0.lastTurn()).isFalse();
        // turn 0 finishes at t=30 ms having generated 3 of its 4 tokens (e.g. length-capped)
        q.schedule(
                30_000_000L, io.servesim.sim.Phase.PASS_COMPLETION, 0, (k, p) -> w.onRequestDone(t0, 3, false), 0, 0);
        while (q.runNext()) {}
        assertThat(got).hasSize(2);
        Request t1 = got.get(1);
        assertThat(t1.arrivalNanos()).isEqualTo(130_000_000L);
        assertThat(t1.turn()).isEqualTo(1);
        assertThat(t1.sessionId()).isEqualTo(t0.sessionId());
        assertThat(t1.promptLength()).isEqualTo(10 + 3 + 5);
        assertThat(Arrays.copyOf(t1.promptTokens(), 10)).isEqualTo(Arrays.copyOf(t0.promptTokens(), 10));
        for (int i = 0; i < 3; i++) {
            assertThat(t1.promptToken(10 + i)).isEqualTo(t0.outputToken(i));
        }
    }

    @Test
    void keepTokensAfterHashing_eachTurnKeepsOnlyItsTailFromThePreviousLastFullBlock_withTheSameTokensAndHashes() {
        // the same session twice, once keeping every token and once only tails; 37-token first prompt, 13 new tokens
        // and 9 generated per turn, 4-token blocks: turn 1 holds positions 36.. (the previous prompt's last full block
        // ends at 36), turn 2 positions 56.., turn 3 positions 80..
        EventQueue qa = new EventQueue();
        EventQueue qb = new EventQueue();
        List<Request> all = new ArrayList<>();
        List<Request> tails = new ArrayList<>();
        SessionWorkload wa = oneSession(qa, all, 4, 37, 13, 9, 5);
        SessionWorkload wb = new SessionWorkload(
                new SessionsConfig(
                        1L,
                        null,
                        4,
                        DistributionConfig.fixed(37),
                        DistributionConfig.fixed(13),
                        DistributionConfig.fixed(9),
                        DistributionConfig.fixed(100),
                        0,
                        1,
                        0.0),
                new ArrivalConfig(ArrivalConfig.Type.CONSTANT, 1.0, null),
                new RandomStreams(5));
        int blockSize = 4;
        wb.keepTokensAfterHashing(blockSize);
        wb.start(qb, tails::add);
        int[] keptFrom = {0, 36, 56, 80};
        for (int turn = 0; turn < 4; turn++) {
            while (qa.runNext()) {}
            while (qb.runNext()) {}
            Request a = all.get(turn);
            Request b = tails.get(turn);
            assertThat(b.promptLength()).isEqualTo(a.promptLength()).isEqualTo(37 + 22 * turn);
            long[] hashes = b.promptHashes(blockSize); // dispatch hashes every prompt
            assertThat(hashes).isEqualTo(a.promptHashes(blockSize));
            assertThat(b.promptHashes(blockSize)).isEqualTo(hashes); // looked up again (a re-dispatch)
            for (int i = keptFrom[turn]; i < b.promptLength() + 9; i++) {
                assertThat(b.tokenAt(i)).isEqualTo(a.tokenAt(i));
            }
            if (turn > 0) {
                int dropped = keptFrom[turn] - 1;
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.promptToken(dropped))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("token " + dropped + " was dropped");
                org.assertj.core.api.Assertions.assertThatThrownBy(b::promptTokens)
                        .isInstanceOf(IllegalStateException.class);
            }
            if (turn < 3) {
                qa.schedule(
                        qa.nowNanos() + 1,
                        io.servesim.sim.Phase.PASS_COMPLETION,
                        0,
                        (k, p) -> wa.onRequestDone(a, 9, false),
                        0,
                        0);
                qb.schedule(
                        qb.nowNanos() + 1,
                        io.servesim.sim.Phase.PASS_COMPLETION,
                        0,
                        (k, p) -> wb.onRequestDone(b, 9, false),
                        0,
                        0);
            }
        }
    }

    @Test
    void aSessionTurnsPromptHashes_reuseThePreviousTurns_andEqualHashingEveryToken() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        SessionWorkload w = oneSession(q, got, 4, 37, 13, 9, 5);
        int blockSize = 4;
        for (int turn = 0; turn < 4; turn++) {
            while (q.runNext()) {}
            assertThat(got).hasSize(turn + 1);
            Request r = got.get(turn);
            long[] expected = io.servesim.kv.BlockHasher.promptHashes(r.promptTokens(), r.promptLength(), blockSize);
            assertThat(expected.length).isGreaterThan(turn * 4); // later turns reach past the reused blocks
            assertThat(r.promptHashes(blockSize)).isEqualTo(expected);
            assertThat(r.promptHashes(blockSize)).isEqualTo(expected); // again (a re-dispatch): same values
            assertThat(r.promptHashes(8)) // another block size (another pool): its own chain
                    .isEqualTo(io.servesim.kv.BlockHasher.promptHashes(r.promptTokens(), r.promptLength(), 8));
            if (turn < 3) {
                r.promptHashes(blockSize); // the block size the next turn is looked up with
                final int done = turn;
                q.schedule(
                        q.nowNanos() + 1,
                        io.servesim.sim.Phase.PASS_COMPLETION,
                        0,
                        (k, p) -> w.onRequestDone(got.get(done), 9, false),
                        0,
                        0);
            }
        }
    }

    @Test
    void rejectedTurn_endsItsSession_recordsItsUnsentTurnsAsAbandoned_andConcurrencyStartsTheNextSession() {
        EventQueue q = new EventQueue();
        List<Request> got = new ArrayList<>();
        List<Request> abandoned = new ArrayList<>();
        SessionWorkload w = new SessionWorkload(
                new SessionsConfig(2L, null, 3, TEN, TEN, TEN, DistributionConfig.fixed(0), 0, 1, 0.0),
                new ArrivalConfig(ArrivalConfig.Type.CONCURRENCY, null, 1),
                new RandomStreams(2));
        w.start(q, new io.servesim.workload.RequestSink() {
            @Override
            public void submit(Request request) {
                got.add(request);
            }

            @Override
            public void abandoned(Request request) {
                abandoned.add(request);
            }
        });
        while (q.runNext()) {}
        assertThat(got).hasSize(1);
        w.onRequestDone(got.get(0), 0, true);
        // its turns 1 and 2 are never sent: each is recorded, the prompt growing by the turn's 10 new tokens and the
        // previous turn's 10 requested outputs
        assertThat(abandoned).extracting(Request::turn).containsExactly(1, 2);
        assertThat(abandoned).extracting(Request::sessionId).containsOnly(0L);
        assertThat(abandoned).extracting(Request::promptLength).containsExactly(30, 50);
        assertThat(abandoned.get(1).lastTurn()).isTrue();
        while (q.runNext()) {}
        assertThat(got).hasSize(2);
        assertThat(got.get(1).sessionId()).isEqualTo(1);
        assertThat(got.get(1).turn()).isZero();
        assertThat(got.get(1).id()).isEqualTo(3); // ids 1 and 2 went to the abandoned turns
        assertThat(w.requestsCreated()).isEqualTo(4);
    }
}
