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
     * part (the fixture's timing is fixed: only the echoed config changed), and once more by the corpus refit under
     * that CPU part with the CPU part re-measured under it (docs/accuracy.md; echo only again). On 2026-12-06 by the
     * new key {@code timing.roofline.collective_efficiency} and the defaults refitted with it (echo only: the pinned
     * examples' canonical output without the config was checked equal before and after), and again by the defaults
     * refitted with {@code mfu} held at 0.95, the CPU part re-measured and the rest refitted under it (echo only,
     * checked the same way), then by the new keys {@code timing.vllm_version} and {@code
     * timing.roofline.pcie_collective_efficiency}, then {@code timing.expert_dtype}, then {@code
     * engine.scheduler.reserve_full_isl} (echo only each time; for the last, every cell's canonical output was checked
     * equal with the gate on and off: the fixture's pool never binds it), then {@code engine.kv_cache.hybrid_window}
     * (echo only: the fixture's model has no sliding-window layers).
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "365a577065146e059c7cdef321e8b4e77596c12b3e5963a60894c41d18a5394b",
            "1/kvcr-off", "3834b36d03258c7d8d8f96f8ba2c9c20b28eafe162893deb50cc70e0e9527230",
            "1/kvcr-idle", "f130c95407e9e768e80ec7b45f635a3d9beb922fef22f7bf6a6343725055d94f",
            "1/kvcr-hinted", "2f3718ce9d1a7fcd33203deeb451492e9559003064ecd28a97992396e2abfbf1",
            "8/g2-only", "e0d65c1c8ecb02040fe7afdf7c4df884b007bff7c4cfc9d5f175a0e820eef776",
            "8/kvcr-off", "61dcafbad8fbdc10afb4a18fe5c5e3122ea3944ebd7ebec9fb76fb6c7a9a8a65",
            "8/kvcr-idle", "d3af026e2606b0bc939fee10c944adcd40c92cb8a22a7570e0d6ff575b6ed107",
            "8/kvcr-hinted", "9cf058bb36bd794fe577fe61c495d00e832f2b3d678f05fedbbdfcab47ae9cbb",
            "1/pd", "2d84c5479fb1930cae1f3c94ae140caaef24a177d493840074fb8888e4f5d587",
            "8/pd", "18e3265984440092d8b75534beafc0e0617fba8f1f42a572838164c808b2b7a4");

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
                .contains("peak_heap_mb,canonical_sha256")
                .endsWith(",allocated_mb_per_replay");
        assertThat(csv).hasSize(3);
        assertThat(csv.get(2)).startsWith("2,1,kvcr-hinted,176,");
        // a replay allocates: the last column is a positive number of megabytes
        assertThat(Double.parseDouble(csv.get(2).substring(csv.get(2).lastIndexOf(',') + 1)))
                .isPositive();
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
