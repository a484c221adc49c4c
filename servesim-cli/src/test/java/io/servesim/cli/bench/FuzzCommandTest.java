package io.servesim.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.cli.CliRun;
import io.servesim.cli.Main;
import org.junit.jupiter.api.Test;

/** servesim bench fuzz: a table of outcomes per target; bad arguments are usage errors naming the option. */
class FuzzCommandTest {
    @Test
    void aFewTries_printOneRowPerTarget_withNoCrash() {
        CliRun r = CliRun.of("bench", "fuzz", "--tries", "40", "--targets", "config,azure");
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        assertThat(r.out())
                .contains("target", "clear error", "crash")
                .containsPattern("config +40 +[0-9]+ +[0-9]+ +0 +0 ")
                .containsPattern("azure +40 +[0-9]+ +[0-9]+ +0 +0 ")
                .doesNotContain("mooncake");
    }

    @Test
    void anUnknownTargetOrNoTries_isAUsageErrorNamingTheOption() {
        CliRun unknown = CliRun.of("bench", "fuzz", "--targets", "parquet");
        assertThat(unknown.exit()).isEqualTo(Main.USAGE);
        assertThat(unknown.err())
                .contains("--targets: unknown target 'parquet'")
                .contains("mooncake");
        CliRun none = CliRun.of("bench", "fuzz", "--tries", "0");
        assertThat(none.exit()).isEqualTo(Main.USAGE);
        assertThat(none.err()).contains("--tries must be >= 1");
    }
}
