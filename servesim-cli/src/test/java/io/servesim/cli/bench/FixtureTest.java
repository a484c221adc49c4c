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
    /** Canonical SHA-256 of every W8 cell, by "dp/arm". */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "4256725183946d299928a02668fb3dc4d71979f903b507b0f08f903fb95e61de",
            "1/kvcr-off", "381ccd4390a77f77fafd80a6f4706bf242981a9c62a0059b962207d53134eb6a",
            "1/kvcr-idle", "560c6846a3bfe5c0fc836d5ea3940443aa02d94ff3beacf3642d4329d1442e9c",
            "1/kvcr-hinted", "195d8599d0c9e457463572e1a2c03024dc4a2872ffe652ae8c8c3f52c7a726b2",
            "8/g2-only", "130d6201ae4b76681abd735da3f70a53faafa5b1f05b0a8cddf281e65f083da8",
            "8/kvcr-off", "5b40c6e9d262723c733dda9d7ecb6af30ce307eabf10416f1a50af2ec8af396e",
            "8/kvcr-idle", "3d508dc1508096932cb96fef2f08111cf043ebab453563467f0f2b5d18d17fda",
            "8/kvcr-hinted", "f11871852391b32c819b823e33aeabbd4226174835646550b4eef5e4a8cbe5cc");

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
