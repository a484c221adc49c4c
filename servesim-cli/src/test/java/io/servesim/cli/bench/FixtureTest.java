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
     * without those two keys is equal on every bundled example, the pd and KVCR ones included).
     */
    static final Map<String, String> W8_DIGESTS = Map.of(
            "1/g2-only", "bc14f65067b86717ee7e65469c42972bf1c68c54c96df32c019397b7db3769ce",
            "1/kvcr-off", "a50427ec84b454ed2a348616999e3e0e06c85b6bb61c9464b2ac788d8f7226f4",
            "1/kvcr-idle", "7853ffe48c07295be0df44e30e12c30b90e53d5f09a9ae3ffd4a744a8a0db3b2",
            "1/kvcr-hinted", "9940d85a14cb8522e74465bbfa0395a0a1806b7dc542e7d614459eb9c2167b49",
            "8/g2-only", "05021862f2323a26b42afd497d1eb4e565401b2ef5d130867844d17d65eb820d",
            "8/kvcr-off", "c53ed287e409e39dfeaa42ab1eb24a4cacafc8bbb8e1d732f7778220b5796979",
            "8/kvcr-idle", "f04c1afd18ffd81c59c608910639274349ff590bd0e9dbb8bd962f800412dff2",
            "8/kvcr-hinted", "0142c5485a77a043fc27ae4d095a204f742fbd113a401aee734e9a66a8f0e761",
            "1/pd", "4919a3036dce528cdf556c8f3dda463f7a701047bb86611df024b8a2e388582b",
            "8/pd", "0af29963c49b4e20af2111243935965e87b903fe1e7bb2968be9b93bd6a5220e");

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
