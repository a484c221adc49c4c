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
     * (echo only: the fixture's model has no sliding-window layers). Then by summary.json's {@code
     * deployment.max_num_seqs} and {@code max_num_batched_tokens}, the vLLM limits in effect (the canonical output
     * without those two keys is equal on every bundled example, the pd and KVCR ones included). Then by the defaults
     * refitted with vLLM's measured BF16 and FP8 fused-MoE kernels (docs/accuracy.md item 19; echo only: every cell's
     * canonical output without the config is equal before and after). Then by the defaults refitted with the client
     * frontend's time per request in a token's step (docs/accuracy.md item 25; echo only: the fixture's timing is
     * fixed). Then by the defaults refitted with vLLM's measured decode attention layer (item 26; echo only again).
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "fa2d3876368a227c64b1e3ea1b3ad8bb5d3b5b44ce5fc4e9c6659ea6beb70bf4",
            "1/kvcr-off", "56fb3d4429619db0c00ec1d1e057def1244e5d4d64d97da6acfc600fb5d78728",
            "1/kvcr-idle", "4fd24aacb584f96ae7526ae12f2ccf81cd1bb679b2f3f2534d5f0e1be57c0a93",
            "1/kvcr-hinted", "420136a00efecefa2cef1ae4e2b747d931e843724cc47fed36bdc047690be424",
            "8/g2-only", "69f8c47ed0811801a1b4dc49caf765e9915885d62dc2af5ff7c5f1a1b09d1393",
            "8/kvcr-off", "7632b667e1b165272f5e7c07e8be0413e5da85d4cef0c9960d947dbe2d34fa2c",
            "8/kvcr-idle", "da35613c3f8a30fe3ab8b360f79755243cc63a4a5300361df98b54836eaabf85",
            "8/kvcr-hinted", "bae88ff8e041630c7127be45e40a4302d3df36aaa602bd1735f98502e29cf0c8",
            "1/pd", "67d5328edbad4f6f553aa2556115e1442e29acc70e4eb3ae0604f42f3c5e5b77",
            "8/pd", "eaccf5f5773cc38cfa8643e20c12589cf30967d109ae6502f1c3d7df2c7a16b1");

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
