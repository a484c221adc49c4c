package io.servesim.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.cli.Main;
import io.servesim.config.SimConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The KVCR fixture: its workload is the documented one, and the canonical digests of the W8 cells are pinned, so
 * an optimisation that changes any result fails here (update them only for an intended behaviour change).
 */
class FixtureTest {
    /**
     * Canonical SHA-256 of every W8 cell, by "dp/arm". The pd cells changed on 2026-12-04 only by the output they
     * echo: the resolved config's {@code cluster.disagg.transfer.kv_lease_s} and {@code summary.json}'s {@code
     * pd.expired} (the canonical output stripped of those two keys is equal to the one before, and requests.csv is
     * byte-identical; no worker fails in the fixture, so no lease ever expires). All cells changed on 2026-12-05
     * only by the resolved config's two new keys {@code timing.gpu_p2p} and {@code timing.link_gbytes_per_s}, then by
     * the refitted {@code timing.roofline} defaults and {@code timing.custom_gpu.attention_kernel} it echoes, and
     * later by the measured CPU part ({@code step_overhead_us}, {@code per_sequence_overhead_us}) it echoes (the
     * fixture's timing is fixed).
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "f6bcb566fcfa2c25bcab2c33f5006c2fc7247e9eaea3e0ed387c91b169b0ef33",
            "1/kvcr-off", "cbd8fcf5a3e12d5f6fab032a94deb2d84da3d377c5e774eaa003d108b0ac4b19",
            "1/kvcr-idle", "bc1d8e4484ce1d6d5af6aa7a9dd9faccede8eeb1937cd82a48de0585d635b29a",
            "1/kvcr-hinted", "4f4278a9be908a31807cdb289e2a3e0f1ad18acfc2a8e3ad9be5f40f1419b874",
            "8/g2-only", "80a2d4b45b823816bd599844f57181eb94c7425ff30d9d02d7236c53c6f14ba7",
            "8/kvcr-off", "6a3082b782e03166c9b3a33e39a37701ac880ee3f4c03a28a6389b0822d74a6f",
            "8/kvcr-idle", "22acabefa8305bebbd839cc94b070d7fd6c271c2f2ba5fcee3e8f7e13a017d57",
            "8/kvcr-hinted", "3a416c10d7ec315a9a88c88590aadadffcc9aeca6fada026dffb84498ba645f8",
            "1/pd", "fb3a1584571f6043dc1dcc33f5dec1a7b63c63fdfa0ba2ec74958410d598f00c",
            "8/pd", "bc00bc83ff471e56d43082b1a2caa9f72e64b4bffe44f7524c9690d73100ac62");

    @Test
    void w8CellDigests_arePinned() {
        for (int dp : List.of(1, 8)) {
            for (String arm : Fixture.ARMS) {
                Fixture.Measurement m = Fixture.replay(Fixture.config(8, dp, arm));
                assertThat(m.requests()).isEqualTo(8L * Fixture.SESSIONS_PER_WORKER * Fixture.TURNS);
                assertThat(m.canonicalSha256()).as(dp + "/" + arm).isEqualTo(W8_DIGESTS.get(dp + "/" + arm));
            }
        }
    }

    @Test
    void fixtureConfig_isTheDocumentedWorkload_withTheArmsKeys() {
        SimConfig c = Fixture.config(32, 8, "kvcr-hinted");
        assertThat(c.cluster().workers()).isEqualTo(32);
        assertThat(c.cluster().attentionDp()).isEqualTo(8);
        assertThat(c.workload().sessions().sessions()).isEqualTo(256);
        assertThat(c.workload().sessions().turns()).isEqualTo(11);
        assertThat(c.workload().arrival().rate()).isCloseTo(32 * 200.0 / 11, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(c.workload().sessions().sharedPrefixTokens()).isEqualTo(512);
        assertThat(c.workload().sessions().migrateFraction()).isEqualTo(0.2);
        assertThat(c.engine().kvcr().enabled()).isTrue();
        assertThat(c.engine().kvCache().numGpuBlocks()).isEqualTo(512);
        assertThat(c.engine().kvCache().hostOffload().numHostBlocks()).isEqualTo(4096);
        SimConfig idle = Fixture.config(32, 1, "kvcr-idle");
        assertThat(idle.engine().kvcr().enabled()).isTrue();
        assertThat(idle.workload().sessions().migrateFraction()).isZero();
        SimConfig off = Fixture.config(32, 1, "kvcr-off");
        assertThat(off.engine().kvcr().enabled()).isFalse();
        assertThat(off.workload().sessions().migrateFraction()).isEqualTo(0.2);
    }

    @Test
    void benchFixture_writesTheTableAsCsvAndJson(@TempDir Path dir) throws IOException {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(
                new PrintWriter(out),
                new PrintWriter(err),
                "bench",
                "fixture",
                "--workers=2",
                "--dp=1",
                "--arm=kvcr-off,kvcr-hinted",
                "--repeat=1",
                "--warmup=0",
                "--no-fork",
                "--out=" + dir);
        assertThat(code).as(err.toString()).isZero();
        List<String> csv = Files.readAllLines(dir.resolve("fixture.csv"));
        assertThat(csv.get(0))
                .startsWith("workers,dp,arm,requests,virtual_ms,replay_ms,us_per_request_cold,us_per_request_warm,")
                .contains("peak_heap_mb,canonical_sha256");
        assertThat(csv).hasSize(3);
        assertThat(csv.get(2)).startsWith("2,1,kvcr-hinted,176,");
        assertThat(Files.readString(dir.resolve("fixture.json"))).contains("\"arm\" : \"kvcr-hinted\"");
        assertThat(out.toString()).contains("kvcr-hinted / kvcr-off");
        // the table's directory is one benchmark's output exactly when its manifest matches
        assertThat(io.servesim.report.RunDirectory.BENCH_FIXTURE.verify(dir)).isNull();
        Files.writeString(dir.resolve("fixture.json"), "[]\n");
        assertThat(io.servesim.report.RunDirectory.BENCH_FIXTURE.verify(dir))
                .contains("mixes two benchmark tables: fixture.json differs");
    }

    @Test
    void unknownArm_isAUsageErrorListingTheKnownOnes() {
        StringWriter err = new StringWriter();
        int code = Main.execute(
                new PrintWriter(new StringWriter()),
                new PrintWriter(err),
                "bench",
                "fixture",
                "--arm=fast",
                "--no-fork");
        assertThat(code).isEqualTo(Main.USAGE);
        assertThat(err.toString()).contains("unknown arm 'fast'").contains("kvcr-hinted");
    }
}
