package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import java.util.List;
import org.junit.jupiter.api.Test;

/** cluster.events drain: from its time on, no router sends the worker anything new; what it has completes. */
class DrainTest {
    private static final long MS = 1_000_000L;

    private static RunResult run(String router, String... extra) {
        List<String> sets = new java.util.ArrayList<>(List.of(
                "workload.type=sessions",
                "workload.sessions.sessions=40",
                "workload.sessions.turns=3",
                "workload.sessions.first_input_tokens={type: fixed, value: 64}",
                "workload.sessions.new_input_tokens={type: fixed, value: 16}",
                "workload.sessions.output_tokens={type: fixed, value: 8}",
                "workload.arrival.type=constant",
                "workload.arrival.rate=200",
                "cluster.workers=3",
                "cluster.attention_dp=2",
                "cluster.router.policy=" + router,
                "cluster.events=[{at_ms: 100, worker: 1, action: drain}]",
                "timing.type=fixed"));
        sets.addAll(List.of(extra));
        return Simulation.run(ConfigLoader.fromYaml("", "test", sets));
    }

    @Test
    void drainedWorker_getsNothingNewFromAnyRouter_andEveryRequestStillCompletes() {
        for (String router : List.of("round_robin", "random", "least_loaded", "session_affinity", "kv_aware")) {
            RunResult r = run(router);
            RequestLog log = r.log();
            boolean servedBefore = false;
            for (int i = 0; i < log.size(); i++) {
                assertThat(log.status(i).status()).isEqualTo("completed");
                if (log.worker(i) == 1) {
                    assertThat(log.arrivalNanos(i)).as(router).isLessThan(100 * MS);
                    servedBefore = true;
                }
            }
            assertThat(servedBefore)
                    .as(router + " used worker 1 before the drain")
                    .isTrue();
            assertThat(log.size()).isEqualTo(120);
            assertThat(r.counters().workersDrained()).isEqualTo(1);
        }
    }

    /** Migrating turns (routeExcluding) respect the drain too; random routing used to ignore it there. */
    @Test
    void migratingTurns_neverLandOnTheDrainedWorker() {
        for (String router : List.of("round_robin", "random", "least_loaded", "session_affinity", "kv_aware")) {
            RequestLog log =
                    run(router, "workload.sessions.migrate_fraction=0.6").log();
            int migratedAfter = 0;
            for (int i = 0; i < log.size(); i++) {
                if (log.arrivalNanos(i) >= 100 * MS) {
                    assertThat(log.worker(i)).as(router).isNotEqualTo(1);
                    migratedAfter += log.migrated(i) ? 1 : 0;
                }
            }
            assertThat(migratedAfter)
                    .as(router + " migrated turns after the drain")
                    .isPositive();
        }
    }

    @Test
    void whenEveryWorkerDrains_newWorkIsRejectedAsNoWorker_notSentToWorkerZero() {
        for (String router : List.of("round_robin", "random", "least_loaded", "session_affinity", "kv_aware")) {
            RequestLog log = run(
                            router,
                            "cluster.events=[{at_ms: 100, worker: 0, action: drain}, {at_ms: 100, worker: 1, action:"
                                    + " drain}, {at_ms: 100, worker: 2, action: drain}]")
                    .log();
            int rejected = 0;
            for (int i = 0; i < log.size(); i++) {
                if (log.arrivalNanos(i) >= 100 * MS) { // fleet events come first at an instant
                    // a turn that reaches no worker is rejected, and its session's later turns are abandoned then
                    assertThat(log.status(i).reason()).as(router).isIn("no_worker", "session_ended");
                    rejected += log.status(i).reason().equals("no_worker") ? 1 : 0;
                } else {
                    assertThat(log.status(i).status()).as(router).isEqualTo("completed");
                }
            }
            assertThat(rejected).as(router).isPositive();
        }
    }

    @Test
    void whenEveryWorkerFailsAtTimeZero_theRunLastsUntilItsLastRejection() {
        RunResult r = run(
                "round_robin",
                "cluster.events=[{at_ms: 0, worker: 0, action: fail}, {at_ms: 0, worker: 1, action: fail},"
                        + " {at_ms: 0, worker: 2, action: fail}]");
        RequestLog log = r.log();
        long lastArrival = 0;
        for (int i = 0; i < log.size(); i++) {
            // each session's first turn reaches no worker; its later turns are abandoned at that instant
            assertThat(log.status(i).reason()).isIn("no_worker", "session_ended");
            lastArrival = Math.max(lastArrival, log.arrivalNanos(i));
        }
        assertThat(lastArrival).isPositive();
        assertThat(r.endNanos()).isEqualTo(lastArrival); // duration_ms used to read 0
    }

    @Test
    void badEvents_areConfigErrorsNamingTheField() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "", "t", List.of("cluster.events=[{at_ms: 5, worker: 3, action: drain}]")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.events[0].worker: is 3 but there are only 1 workers");
        assertThatThrownBy(() -> ConfigLoader.fromYaml(
                        "", "t", List.of("cluster.events=[{at_ms: 5, worker: 0, action: crash}]")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.events[0].action")
                .hasMessageContaining("drain")
                .hasMessageContaining("fail");
    }
}
