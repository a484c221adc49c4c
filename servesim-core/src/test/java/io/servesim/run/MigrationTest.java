package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.SessionWorkload;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Session migration with hints: the seeded share of follow-ups moves; the hint names the previous worker. */
class MigrationTest {
    private static final double FRACTION = 0.25;

    private static RunResult run(String router) {
        return Simulation.run(ConfigLoader.fromYaml(
                "",
                "test",
                List.of(
                        "workload.type=sessions",
                        "workload.seed=11",
                        "workload.sessions.sessions=40",
                        "workload.sessions.turns=4",
                        "workload.sessions.first_input_tokens={type: fixed, value: 200}",
                        "workload.sessions.new_input_tokens={type: fixed, value: 40}",
                        "workload.sessions.output_tokens={type: fixed, value: 20}",
                        "workload.sessions.think_time_ms={type: fixed, value: 50}",
                        "workload.sessions.migrate_fraction=" + FRACTION,
                        "workload.arrival.rate=20",
                        "cluster.workers=4",
                        "cluster.attention_dp=2",
                        "cluster.router.policy=" + router,
                        "timing.type=fixed")));
    }

    @Test
    void exactlyTheSeededFollowUps_migrate_toAnotherWorker_withAHintAtThePreviousWorker() {
        for (String router : List.of("session_affinity", "round_robin", "least_loaded", "random", "kv_aware")) {
            RunResult r = run(router);
            RequestLog log = r.log();
            Map<String, Integer> byTurn = new HashMap<>();
            for (int i = 0; i < log.size(); i++) {
                byTurn.put(log.sessionId(i) + "/" + log.turn(i), i);
            }
            RandomStreams streams = new RandomStreams(11);
            int followUps = 0;
            int migratedCount = 0;
            for (int i = 0; i < log.size(); i++) {
                if (log.turn(i) == 0) {
                    assertThat(log.migrated(i)).isFalse();
                    assertThat(log.hintWorker(i)).isEqualTo(-1);
                    continue;
                }
                followUps++;
                boolean expected = SessionWorkload.migrates(streams, log.sessionId(i), log.turn(i), FRACTION);
                assertThat(log.migrated(i))
                        .as("%s: session %d turn %d", router, log.sessionId(i), log.turn(i))
                        .isEqualTo(expected);
                int prev = byTurn.get(log.sessionId(i) + "/" + (log.turn(i) - 1));
                if (expected) {
                    migratedCount++;
                    assertThat(log.worker(i)).isNotEqualTo(log.worker(prev));
                }
                if (log.worker(i) != log.worker(prev)) {
                    assertThat(log.hintWorker(i)).isEqualTo(log.worker(prev));
                    assertThat(log.hintRank(i)).isEqualTo(log.rank(prev));
                    // the previous turn's blocks are still cached there (large pool): its prompt's 13 full blocks
                    assertThat(log.hintBlocks(i)).isGreaterThanOrEqualTo(12);
                } else {
                    assertThat(log.hintWorker(i)).isEqualTo(-1);
                    assertThat(log.hintBlocks(i)).isZero();
                }
            }
            assertThat(followUps).isEqualTo(120);
            assertThat(migratedCount).isBetween(15, 45); // about a quarter, exactly as drawn
        }
    }

    @Test
    void sessionAffinity_keepsNonMigratedFollowUpsOnTheirPreviousRank() {
        RunResult r = run("session_affinity");
        RequestLog log = r.log();
        Map<String, Integer> byTurn = new HashMap<>();
        for (int i = 0; i < log.size(); i++) {
            byTurn.put(log.sessionId(i) + "/" + log.turn(i), i);
        }
        for (int i = 0; i < log.size(); i++) {
            if (log.turn(i) > 0 && !log.migrated(i)) {
                int prev = byTurn.get(log.sessionId(i) + "/" + (log.turn(i) - 1));
                assertThat(log.worker(i)).isEqualTo(log.worker(prev));
                assertThat(log.rank(i)).isEqualTo(log.rank(prev));
            }
        }
    }
}
