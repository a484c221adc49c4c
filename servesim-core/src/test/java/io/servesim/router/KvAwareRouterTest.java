package io.servesim.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.KvRouterConfig;
import io.servesim.kv.BlockHasher;
import io.servesim.report.Summaries;
import io.servesim.run.Simulation;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Dynamo's KV router cost on hand-built states: cost = w × (A_r + ISL − overlap × bs) / bs + D_r + request blocks,
 * block size 4, 3 ranks, the prompt {@code 1..12} (3 full blocks; at most (12 − 1) / 4 = 2 can hit).
 */
class KvAwareRouterTest {
    private static final int[] PROMPT = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    private long[] hashes;

    private KvAwareRouter router(double weight, double temperature, String mode, long[] now) {
        long h0 = BlockHasher.hashBlock(BlockHasher.ROOT, PROMPT, 0, 4);
        long h1 = BlockHasher.hashBlock(h0, PROMPT, 4, 4);
        long h2 = BlockHasher.hashBlock(h1, PROMPT, 8, 4);
        hashes = new long[] {h0, h1, h2};
        return new KvAwareRouter(new RouterContext(
                3,
                1,
                new LoadIndex(3),
                new RandomStreams(5),
                null,
                new KvRouterConfig(weight, temperature, KvRouterConfig.Mode.of(mode), 1.0),
                4,
                () -> now[0]));
    }

    private static Request req() {
        return new Request(0, -1, 0, true, 0, PROMPT, 1, 0);
    }

    @Test
    void withoutOverlap_theRankWithTheLowestPrefillAndDecodeLoadWins() {
        KvAwareRouter r = router(1.0, 0, "exact", new long[1]);
        r.onRankLoad(0, 0, 1, 8, 5); // 8/4 + 5 = 7
        r.onRankLoad(1, 0, 1, 0, 6); // 0 + 6 = 6
        r.onRankLoad(2, 0, 1, 4, 5); // 1 + 5 = 6 -> tie with rank 1: lower index wins
        assertThat(r.route(req())).isEqualTo(1);
    }

    @Test
    void cachedPrefixBlocks_lowerTheCost_byOverlapWeightPerBlock() {
        KvAwareRouter r = router(1.0, 0, "exact", new long[1]);
        r.onRankLoad(0, 0, 1, 0, 6); // base 6
        r.onRankLoad(1, 0, 1, 0, 5); // base 5
        r.onRankLoad(2, 0, 1, 0, 7); // base 7, but holds 2 blocks: 7 - 2 = 5 -> ties rank 1 at 5
        r.stored(2, hashes[0]);
        r.stored(2, hashes[1]);
        r.stored(2, hashes[2]); // the third block cannot hit (last token never hits): overlap stays 2
        assertThat(r.route(req())).isEqualTo(1);
        r.onRankLoad(1, 0, 1, 0, 6); // now rank 2 (cost 5) beats ranks 0 and 1 (6)
        assertThat(r.route(req())).isEqualTo(2);
        r.removed(2, hashes[0]); // leading run broken: overlap 0, cost 7
        assertThat(r.route(req())).isEqualTo(0);
    }

    @Test
    void overlapWeight_scalesThePrefillTerm() {
        KvAwareRouter r = router(3.0, 0, "exact", new long[1]);
        r.onRankLoad(0, 0, 1, 0, 9); // base 9
        r.onRankLoad(1, 0, 1, 0, 13); // base 13, overlap 2: 13 - 3 * 2 = 7 < 9
        r.onRankLoad(2, 0, 1, 0, 10);
        r.stored(1, hashes[0]);
        r.stored(1, hashes[1]);
        assertThat(r.route(req())).isEqualTo(1);
    }

    @Test
    void approximateMode_remembersItsOwnDecisionsUntilTheTtlExpires() {
        long[] now = {0};
        KvAwareRouter r = router(1.0, 0, "approximate", now);
        r.onRankLoad(0, 0, 1, 0, 3);
        r.onRankLoad(1, 0, 1, 0, 2);
        r.onRankLoad(2, 0, 1, 0, 4);
        assertThat(r.route(req())).isEqualTo(1); // least loaded; its blocks are now assumed cached on rank 1
        r.onRankLoad(1, 0, 1, 0, 4); // rank 1 base 4, overlap 2 -> 2, beats rank 0 (3)
        assertThat(r.route(req())).isEqualTo(1);
        now[0] = 2_000_000_000L; // 2 s later: the 1 s TTL expired, rank 1 is just base 4 again
        assertThat(r.route(req())).isZero();
    }

    @Test
    void positiveTemperature_samplesEveryRank_butFavoursTheCheapest() {
        KvAwareRouter r = router(1.0, 0.5, "exact", new long[1]);
        r.onRankLoad(0, 0, 1, 0, 0);
        r.onRankLoad(1, 0, 1, 0, 10);
        r.onRankLoad(2, 0, 1, 0, 20);
        int[] counts = new int[3];
        for (int i = 0; i < 3000; i++) {
            counts[r.route(req())]++;
        }
        assertThat(counts[0]).isGreaterThan(counts[1]);
        assertThat(counts[1]).isGreaterThan(counts[2]);
        assertThat(counts[2]).isPositive();
    }

    /**
     * The multi-turn excerpt of the Mooncake conversation trace (187 rows of 40 conversations; 65.5 % reuse under an
     * infinite cache): KV-aware routing sends each follow-up to the rank holding its conversation.
     */
    @Test
    void onTheMooncakeConversationExcerpt_kvAwareReusesMorePrefixThanRoundRobin() {
        double rr = reuse("round_robin");
        double kv = reuse("kv_aware");
        assertThat(kv).isGreaterThan(rr + 0.15);
        assertThat(kv).isLessThanOrEqualTo(0.6545); // never above the infinite-cache reuse of the excerpt
    }

    private static double reuse(String policy) {
        List<String> sets = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=mooncake",
                "workload.trace.path=src/test/resources/traces/mooncake_conversation_multiturn.jsonl",
                "cluster.workers=4",
                "cluster.router.policy=" + policy,
                "timing.type=polynomial"));
        return Summaries.of(Simulation.run(ConfigLoader.fromYaml("", "test", sets)))
                .prefixReuseRatio();
    }
}
