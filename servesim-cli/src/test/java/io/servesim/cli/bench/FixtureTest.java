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
     * fixed).
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "873344cf891b46d2b47610bd038f1df5cfc3a9c330258de4b43eea2e91b54a5c",
            "1/kvcr-off", "4e6e1964fbac07f969bdc81ac18606c0383d7e6084f157bac9a0716b7ddcddd2",
            "1/kvcr-idle", "12a81641bdeaee3d02fced06d37285ad5579866b24a715082a1f640131a56ec8",
            "1/kvcr-hinted", "f38642e95fd229970ffb5a4eb4b92e3b50e86c4924b9490957f2fd828da1eb69",
            "8/g2-only", "b1df6d2e1c574fb8b7c24dcf81c03ae336a22451de662e7de0ab696accfa52e7",
            "8/kvcr-off", "f86cbe708e8cefe038183843e703fa20a36be1e1a7f27546689aa164a7d09f14",
            "8/kvcr-idle", "ffd2a93452d9fc36ff17790f1e01ebfbd36a86800822a323906399ab6afab288",
            "8/kvcr-hinted", "54dda114464fdee8d2d09c538209135943124d7ba1e92f4c88ab5a234409d7c4",
            "1/pd", "bc37efed831782681e49dcfa54e8f6df64416e85bd8143f5b1e4c6321fdb372f",
            "8/pd", "70a8838144a11e2a936d087385a93ba94e74915e7c66f31c5d07e5fd1dcc23dd");

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
