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
     * only by the resolved config's two new keys {@code timing.gpu_p2p} and {@code timing.link_gbytes_per_s}.
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "a3031ebdad5059a132dfb871ecb6080b53f8c18d6290b6601b51cc83ed35c772",
            "1/kvcr-off", "963f694052b9b9e1edae19ae91ce55f9b0980bc4d5eb7375be729aebb466a235",
            "1/kvcr-idle", "0019d5723c28063cf58e8d17ed04314682df9a0861dc1880ce229e9dbdd38cb9",
            "1/kvcr-hinted", "493c0462802d5932207e67a88887b0c08e4ba9b362d85e00e3304dc50966fd2a",
            "8/g2-only", "1756b0d5707a2183c31961da89cbaa1eecfaccf849de3ce199f3ffbf5bdf9dcb",
            "8/kvcr-off", "09ab6a8ea357c4e75f85283077d7b755bb5552f9f0708e50a2ad8bedcd8af3dd",
            "8/kvcr-idle", "407c81c336fa3f0c50cd172800c483f1f040883e7ff5e99320d42094ecc03acd",
            "8/kvcr-hinted", "2731c83dfe91abf61d5274047a46c0bd34dcf240b92816dbb26e40edb6130122",
            "1/pd", "f2979b549c23adfb9e40fce3939f04f035216a25e34df7eedf3a1dec56733346",
            "8/pd", "c4fd58539c61475dbb87afa553c6aad84a6133d8514637c4b27a2b3e2a3ace28");

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
