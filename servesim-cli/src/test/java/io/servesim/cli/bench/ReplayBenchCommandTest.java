package io.servesim.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.cli.CliRun;
import io.servesim.cli.Main;
import org.junit.jupiter.api.Test;

/** servesim bench replay: one config several times in a warm JVM, with its canonical digest. */
class ReplayBenchCommandTest {
    @Test
    void aSmallReplay_printsEachRun_theMinimumPerRequest_itsAllocation_andOneDigest() {
        CliRun r = CliRun.of(
                "bench",
                "replay",
                "../examples/quickstart.yaml",
                "--set",
                "workload.sessions.sessions=40",
                "--repeat",
                "2",
                "--warmup",
                "1");
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        assertThat(r.out())
                .containsPattern("run 1: replay [0-9]+ ms, allocated [0-9]+\\.[0-9] MB")
                .containsPattern("run 2: replay [0-9]+ ms, allocated [0-9]+\\.[0-9] MB")
                .containsPattern("2 runs after 1 warm-up: min [0-9]+ ms \\([0-9.]+ us/request\\)")
                .containsPattern("allocated [0-9]+\\.[0-9] MB per replay \\(least\\)")
                .containsPattern("canonical sha256 [0-9a-f]{64}");
    }

    @Test
    void badArguments_areUsageErrors() {
        assertThat(CliRun.of("bench", "replay", "../examples/quickstart.yaml", "--repeat", "0")
                        .exit())
                .isEqualTo(Main.USAGE);
        assertThat(CliRun.of("bench", "replay").exit()).isEqualTo(Main.USAGE);
    }
}
