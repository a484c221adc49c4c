package io.servesim.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.KvRouterConfig;
import io.servesim.config.RouterPolicy;
import io.servesim.kv.KvEventSink;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Routing rules: round robin order, vLLM's 4W+R least-loaded score, sticky sessions. */
class RouterTest {
    private static Request req(long session, int turn, boolean last) {
        return new Request(0, session, turn, last, 0, new int[] {1}, 1, 0);
    }

    @Test
    void roundRobin_rotatesWorkers_withAPerWorkerRankCursor() {
        LoadIndex load = new LoadIndex(6);
        Router r = new RoundRobinRouter(new RouterContext(3, 2, load, new RandomStreams(1)));
        List<Integer> got = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            got.add(r.route(req(-1, 0, true)));
        }
        // W0r0, W1r0, W2r0, W0r1, W1r1, W2r1, W0r0 as global indices worker * 2 + rank
        assertThat(got).containsExactly(0, 2, 4, 1, 3, 5, 0);
    }

    @Test
    void leastLoaded_picksTheLowestFourTimesWaitingPlusRunning_lowestIndexOnTies() {
        LoadIndex load = new LoadIndex(3);
        Router r = new LeastLoadedRouter(new RouterContext(3, 1, load, new RandomStreams(1)));
        assertThat(r.route(req(-1, 0, true))).isZero();
        load.update(0, 1, 0); // score 4
        load.update(1, 0, 3); // score 3
        load.update(2, 0, 4); // score 4
        assertThat(r.route(req(-1, 0, true))).isEqualTo(1);
        load.update(1, 0, 5); // score 5: now 0 and 2 tie at 4
        assertThat(r.route(req(-1, 0, true))).isZero();
        assertThat(load.scoreOf(1)).isEqualTo(5);
    }

    @Test
    void sessionAffinity_keepsASessionOnItsFirstRank_andPlacesNewSessionsByLoad() {
        LoadIndex load = new LoadIndex(2);
        Router r = new SessionAffinityRouter(new RouterContext(2, 1, load, new RandomStreams(1)));
        int first = r.route(req(5, 0, false));
        assertThat(first).isZero();
        load.update(0, 3, 3); // rank 0 becomes busy
        assertThat(r.route(req(5, 1, false))).isZero(); // sticky despite load
        assertThat(r.route(req(6, 0, false))).isEqualTo(1); // new session: least loaded
        assertThat(r.route(req(5, 2, true))).isZero(); // last turn: still sticky, then forgotten
        assertThat(r.route(req(5, 3, true))).isEqualTo(1); // same id again is a new session
    }

    @Test
    void unknownRouterName_listsTheKnownOnes() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("cluster.router.policy=kv")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("cluster.router.policy: unknown router 'kv'"
                        + " (known: kv_aware, least_loaded, random, round_robin, session_affinity)");
    }

    @Test
    void everyPolicy_buildsARouterWhoseBehaviourMatchesItsDeclaredCapabilities() {
        for (RouterPolicy p : RouterPolicy.values()) {
            Router r = Routers.create(p, new RouterContext(2, 2, new LoadIndex(4), new RandomStreams(1)));
            assertThat(r.usesLoad()).as(p + " reads the load index").isEqualTo(p.readsLoadIndex());
            assertThat(r instanceof KvEventSink)
                    .as(p + " consumes KV events")
                    .isEqualTo(p.needsKvEvents(KvRouterConfig.Mode.EXACT));
            assertThat(p.needsKvEvents(KvRouterConfig.Mode.APPROXIMATE)).isFalse();
            assertThat(RouterPolicy.of(p.configName())).isSameAs(p);
        }
    }

    /**
     * The regression: a migrating turn (routeExcluding) used to draw uniformly over every other worker's ranks,
     * draining ones included. 3 workers of 1 rank, worker 1 draining, worker 0 excluded: only worker 2 is allowed,
     * whatever the seed (before the fix, about half of the draws picked worker 1).
     */
    @Test
    void random_routeExcluding_neverPicksADrainingWorker() {
        for (long seed = 0; seed < 200; seed++) {
            Router r = new RandomRouter(new RouterContext(3, 1, new LoadIndex(3), new RandomStreams(seed)));
            r.onWorkerDraining(1);
            for (int i = 0; i < 10; i++) {
                assertThat(r.routeExcluding(req(7, 1, false), 0))
                        .as("seed " + seed)
                        .isEqualTo(2);
            }
        }
    }

    @Test
    void random_routeExcluding_staysOnTheExcludedWorker_whenEveryOtherWorkerDrains() {
        Router r = new RandomRouter(new RouterContext(3, 2, new LoadIndex(6), new RandomStreams(3)));
        r.onWorkerDraining(1);
        r.onWorkerDraining(2);
        for (int i = 0; i < 50; i++) {
            assertThat(r.routeExcluding(req(7, 1, false), 0) / 2).isZero();
        }
    }

    /** 4 workers of 2 ranks, workers 1 and 3 draining: new work goes to 0 or 2, and a turn leaving 0 goes to 2. */
    @Test
    void everyRouter_avoidsDrainingWorkers_inRouteAndRouteExcluding() {
        for (RouterPolicy p : RouterPolicy.values()) {
            Router r = Routers.create(p, new RouterContext(4, 2, new LoadIndex(8), new RandomStreams(11)));
            r.onWorkerDraining(1);
            r.onWorkerDraining(3);
            for (int i = 0; i < 40; i++) {
                int g = r.route(req(i % 5 == 0 ? -1 : i, 0, false));
                assertThat(g / 2).as(p + " route").isIn(0, 2);
                assertThat(r.routeExcluding(req(100 + i, 1, false), 0) / 2)
                        .as(p + " routeExcluding")
                        .isEqualTo(2);
            }
        }
    }

    /**
     * When every worker drains, draining is moot: each router still returns a valid rank (round robin and random
     * spread over all ranks; the load-ordered routers, whose heaps rank every draining rank equal, take rank 0;
     * kv_aware above temperature 0 the last rank).
     */
    @Test
    void everyRouter_stillReturnsARank_whenEveryWorkerDrains() {
        for (RouterPolicy p : RouterPolicy.values()) {
            Router r = Routers.create(p, new RouterContext(3, 2, new LoadIndex(6), new RandomStreams(5)));
            for (int w = 0; w < 3; w++) {
                r.onWorkerDraining(w);
            }
            for (int i = 0; i < 20; i++) {
                assertThat(r.route(req(i, 0, false))).as(p + " route").isBetween(0, 5);
                assertThat(r.routeExcluding(req(50 + i, 1, false), 1))
                        .as(p + " routeExcluding")
                        .isBetween(0, 5);
            }
        }
    }

    @Test
    void sessionAffinity_forgetsASessionThatEndedEarly() {
        LoadIndex load = new LoadIndex(2);
        Router r = new SessionAffinityRouter(new RouterContext(2, 1, load, new RandomStreams(1)));
        assertThat(r.route(req(5, 0, false))).isZero();
        r.onSessionEnded(5); // e.g. its turn was rejected
        load.update(0, 1, 0);
        assertThat(r.route(req(5, 0, false))).isEqualTo(1); // placed afresh by load
    }

    @Test
    void random_isSeeded_coversEveryRank_andIsReproducible() {
        Router a = new RandomRouter(new RouterContext(4, 2, new LoadIndex(8), new RandomStreams(7)));
        Router b = new RandomRouter(new RouterContext(4, 2, new LoadIndex(8), new RandomStreams(7)));
        Router c = new RandomRouter(new RouterContext(4, 2, new LoadIndex(8), new RandomStreams(8)));
        int[] counts = new int[8];
        List<Integer> seqA = new ArrayList<>();
        List<Integer> seqB = new ArrayList<>();
        List<Integer> seqC = new ArrayList<>();
        for (int i = 0; i < 8000; i++) {
            int g = a.route(req(-1, 0, true));
            counts[g]++;
            seqA.add(g);
            seqB.add(b.route(req(-1, 0, true)));
            seqC.add(c.route(req(-1, 0, true)));
        }
        assertThat(seqA).isEqualTo(seqB).isNotEqualTo(seqC);
        for (int n : counts) {
            assertThat(n).isBetween(850, 1150); // 1000 expected per rank
        }
    }

    @Test
    void sessionAffinity_movesASessionWhoseRankExceedsTheLoadCap() {
        LoadIndex load = new LoadIndex(2);
        SessionAffinityRouter r = new SessionAffinityRouter(new RouterContext(2, 1, load, new RandomStreams(1), 5));
        assertThat(r.route(req(9, 0, false))).isZero();
        load.update(0, 1, 1); // score 5: at the cap, stays
        assertThat(r.route(req(9, 1, false))).isZero();
        load.update(0, 1, 2); // score 6 > 5: moved to the least-loaded rank, and stays there
        assertThat(r.route(req(9, 2, false))).isEqualTo(1);
        load.update(0, 0, 0);
        assertThat(r.route(req(9, 3, false))).isEqualTo(1);
        assertThat(r.moves()).isEqualTo(1);
    }
}
