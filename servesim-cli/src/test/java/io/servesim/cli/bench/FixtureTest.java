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
     * later by the measured CPU part ({@code step_overhead_us}, {@code per_sequence_overhead_us}) it echoes, and again
     * by the defaults refitted with the per-shape weight streaming (item 15, docs/accuracy.md) and the re-measured CPU
     * part (the fixture's timing is fixed: only the echoed config changed).
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "b7118a5b783a03dcde3b901781c4d7388aa9c0abcbaed1fdf8ae96a9370e038e",
            "1/kvcr-off", "5e20920e07a89e831d0ddb7fcc01528d50cd04d3386d336ad689293aa764b39f",
            "1/kvcr-idle", "1093f1043e26151708a39a3b34e45370eeb45d7cc37915aeea7e815ca00ecdd1",
            "1/kvcr-hinted", "9833af6973076f669d99c92767d130c31a8db6c2e981e8e1236b01ebe6609e93",
            "8/g2-only", "f2bd25ee36d7afb8e59ed42a74103fc4bf04ce3e29133f301dd9c9e04b8fa0eb",
            "8/kvcr-off", "8acc120421ac184cc645885561bd30ef00dd16a85ccf8b3b9e51f5e66bb310b0",
            "8/kvcr-idle", "3d31f8148f9072515e1fa2424c055c5c3442ee9a90345e85c557812f0784495f",
            "8/kvcr-hinted", "8e6388b7fc69fab1d8fdbc21c7ef24ae885567c7190ba573e440a9b07e0dac32",
            "1/pd", "7b5eea660a84761dfeea4049cb6624b5e7fe6413a4834213871315f51b4d273b",
            "8/pd", "1a1052851e488d2088c66a84d872429468947ef6d02d295ca1c1cd9a02bad6fd");

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
