package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Synthetic sessions lose no turn: when a turn is rejected (its prompt reaches {@code max_model_len}), the session's
 * later turns are never sent and each ends in the request log as {@code abandoned}, so every configured turn of every
 * session has exactly one row, as trace rows do.
 */
class AbandonedTurnsTest {
    @Test
    void theTurnsAfterARejectedOne_areRecordedAsAbandoned_soEveryConfiguredTurnHasARow() {
        // prompts grow by ~100 + 50 tokens a turn: the third or fourth turn of most sessions exceeds 400 tokens
        RunResult r = Simulation.run(ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "workload.type=sessions",
                        "workload.sessions.sessions=20",
                        "workload.sessions.turns=6",
                        "workload.sessions.first_input_tokens={type: uniform, min: 50, max: 250}",
                        "workload.sessions.new_input_tokens={type: fixed, value: 100}",
                        "workload.sessions.output_tokens={type: fixed, value: 50}",
                        "engine.max_model_len=400",
                        "timing.type=fixed")));
        RequestLog log = r.log();
        assertThat(log.size()).isEqualTo(20 * 6);
        Map<String, Integer> byStatus = new TreeMap<>();
        Map<Long, Integer> rowsPerSession = new TreeMap<>();
        for (int i = 0; i < log.size(); i++) {
            byStatus.merge(log.status(i).status(), 1, Integer::sum);
            rowsPerSession.merge(log.sessionId(i), 1, Integer::sum);
        }
        assertThat(byStatus).containsKeys("completed", "rejected", "abandoned");
        assertThat(rowsPerSession)
                .hasSize(20)
                .allSatisfy((session, rows) -> assertThat(rows).isEqualTo(6));
        // a session's abandoned turns come after its rejected one, and only after a rejection
        for (int i = 0; i < log.size(); i++) {
            if (log.status(i).status().equals("abandoned")) {
                long session = log.sessionId(i);
                boolean rejectedEarlier = false;
                for (int j = 0; j < log.size(); j++) {
                    if (log.sessionId(j) == session
                            && log.status(j).status().equals("rejected")
                            && log.turn(j) < log.turn(i)) {
                        rejectedEarlier = true;
                    }
                }
                assertThat(rejectedEarlier).as("row %d", i).isTrue();
            }
        }
        assertThat(io.servesim.report.Summaries.of(r).abandoned()).isEqualTo((long) byStatus.get("abandoned"));
    }
}
