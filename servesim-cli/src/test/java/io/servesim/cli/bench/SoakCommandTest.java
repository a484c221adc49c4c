package io.servesim.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.cli.CliRun;
import io.servesim.cli.Main;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** servesim bench soak: random drain/fail schedules with the engine's invariants checked after every step. */
class SoakCommandTest {
    @Test
    void aSmallSoak_survivesItsEvents_withNoViolation_andSaysWhatItChecked() {
        CliRun r = CliRun.of("bench", "soak", "--tries", "2", "--workers", "16", "--events", "12");
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        assertThat(r.out())
                .contains("soak: 2 simulations x 16 workers, 24 drain/fail events")
                .contains("0 invariant violations")
                .containsPattern("[1-9][0-9]* steps checked");
    }

    @Test
    void eachTrysSchedule_drainsOrFailsDistinctWorkers_andIsSeeded() {
        SimConfig c = ConfigLoader.fromYaml("", "t", SoakCommand.config(7, 32, 40));
        assertThat(c.cluster().events()).hasSize(32); // at most one event per worker
        assertThat(c.cluster().events().stream().map(e -> e.worker()).distinct().count())
                .isEqualTo(32);
        assertThat(SoakCommand.config(7, 32, 40)).isEqualTo(SoakCommand.config(7, 32, 40));
        assertThat(SoakCommand.config(8, 32, 40)).isNotEqualTo(SoakCommand.config(7, 32, 40));
        assertThat(List.of("drain", "fail"))
                .containsAll(c.cluster().events().stream()
                        .map(e -> e.action().configName())
                        .distinct()
                        .toList());
    }

    @Test
    void theSummary_addsUpToTheRequestLog_andEveryStagedPullEndsOnce_inAFaultySoakTry() {
        SimConfig c = ConfigLoader.fromYaml("", "t", SoakCommand.config(2, 32, 20)); // even seed: KVCR on
        io.servesim.run.RunResult r = io.servesim.run.Simulation.run(c);
        assertThat(SoakCommand.summaryAddsUp(r)).isEmpty();
        io.servesim.report.Summary s = io.servesim.report.Summaries.of(r);
        assertThat(s.kvcr().staged()).isPositive(); // the pull check is not vacuous
        assertThat(s.requests()).isEqualTo(r.log().size());
    }

    @Test
    void badArguments_areUsageErrors() {
        assertThat(CliRun.of("bench", "soak", "--tries", "0").exit()).isEqualTo(Main.USAGE);
    }
}
