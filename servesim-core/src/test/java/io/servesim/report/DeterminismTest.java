package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Same config + seed ⇒ byte-identical canonical output. The pinned digest guards behaviour: a change that moves it
 * must be intended, and the digest updated in the same commit with the reason in the message. Last moved on
 * 2026-12-05 by the resolved config it echoes: two new keys {@code timing.gpu_p2p} and {@code
 * timing.link_gbytes_per_s}, then {@code timing.custom_gpu.attention_kernel} and the refitted {@code timing.roofline}
 * defaults, then the measured CPU part ({@code step_overhead_us}, {@code per_sequence_overhead_us}), then the
 * defaults refitted with the per-shape weight streaming and the re-measured CPU part (the pinned runs use polynomial
 * timing; the canonical output stripped of the config is equal to the one before each time, and the last time the
 * previous digests came back exactly with the previous defaults set as overrides); on 2026-12-06 by the new key
 * {@code timing.roofline.collective_efficiency} and the defaults refitted with it (output without the config equal),
 * then by the defaults refitted with {@code mfu} held at 0.95 and the re-measured CPU part, and refitted again under
 * that CPU part (output without the config equal each time), then by the new keys {@code timing.vllm_version} and
 * {@code timing.roofline.pcie_collective_efficiency}, then {@code timing.expert_dtype} (echoed as null; output without
 * the config equal on every bundled example and on Mixtral and Qwen3-30B-A3B roofline replays), then {@code
 * engine.scheduler.reserve_full_isl} (echoed as true; output without the config equal on every bundled example), then
 * {@code engine.kv_cache.hybrid_window} (echoed as null; output without the config equal on every bundled example);
 * the KVCR digest once more when {@code engine.scheduler.max_num_seqs} and {@code max_num_batched_tokens} became null
 * by default (vLLM's per-GPU defaults, resolved in timing.Deployment; the example has no GPU: the same 1024 and 8192);
 * all three when summary.json's {@code deployment} began to report those two limits as in effect (output without the
 * two keys equal on every bundled example); all three again when the roofline defaults were refitted on the corpus
 * with vLLM's measured BF16 and FP8 fused-MoE kernels (docs/accuracy.md item 19: {@code mbu}, {@code kv_mbu}, {@code
 * layer_overhead_us}, {@code collective_efficiency} and {@code moe_efficiency} changed; the canonical config echoes
 * them, and the quickstart's roofline steps take the new values); and all three when the corpus fit gained the
 * client frontend's time per request in a token's step (docs/accuracy.md item 25: the same five coefficients were
 * refitted with it; the canonical config echoes them); and all four when the corpus fit gained vLLM's measured decode
 * attention layer (item 26: the five roofline coefficients refitted; the pinned configs run polynomial timing, so
 * only the canonical config's echo of the defaults changed).
 */
class DeterminismTest {
    /** SHA-256 of canonical.json for examples/quickstart.yaml (defaults: vLLM's async engine loop). */
    static final String QUICKSTART_CANONICAL_SHA256 =
            "96f5e981aed13ecff0f2f24bcc434a6d7a1141392da731d58e01be64b3906ded";

    static String canonical(Path config, List<String> overrides) throws IOException {
        SimConfig c = ConfigLoader.load(config, overrides);
        RunResult r = Simulation.run(c);
        StringWriter w = new StringWriter();
        ReportWriter.writeCanonical(r, Summaries.of(r), w);
        return w.toString();
    }

    static String sha256(String s) throws NoSuchAlgorithmException {
        return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void bundledExamples_giveByteIdenticalCanonicalOutput_onEveryRun() throws IOException {
        for (String example : List.of("quickstart.yaml", "synthetic.yaml", "sessions-g2.yaml")) {
            Path p = Path.of("..", "examples", example);
            List<String> small = switch (example) {
                case "synthetic.yaml" -> List.of("workload.synthetic.requests=3000");
                case "sessions-g2.yaml" -> List.of("workload.sessions.sessions=200");
                default -> List.of();
            };
            assertThat(canonical(p, small)).as(example).isEqualTo(canonical(p, small));
        }
    }

    @Test
    void quickstartCanonicalDigest_isPinned() throws Exception {
        String c = canonical(Path.of("..", "examples", "quickstart.yaml"), List.of());
        assertThat(c).startsWith("{\"config\":").contains("\"schema\":\"servesim.canonical.v1\"");
        assertThat(sha256(c)).isEqualTo(QUICKSTART_CANONICAL_SHA256);
    }

    /** SHA-256 of canonical.json for examples/quickstart.yaml with the synchronous engine loop. */
    static final String QUICKSTART_SYNC_CANONICAL_SHA256 =
            "b8c38ea6c505951688cd9bf2dbd31d09ec9fb08c95561fca03a9b0178487fda6";

    @Test
    void quickstartSyncCanonicalDigest_isPinned() throws Exception {
        String c = canonical(
                Path.of("..", "examples", "quickstart.yaml"), List.of("engine.scheduler.async_scheduling=false"));
        assertThat(c).contains("\"async_scheduling\":false");
        assertThat(sha256(c)).isEqualTo(QUICKSTART_SYNC_CANONICAL_SHA256);
    }

    /**
     * SHA-256 of canonical.json for examples/quickstart.yaml with clients that give up after 5 s (1,321 turns time
     * out and end their sessions: 2,439 later turns abandoned).
     */
    static final String QUICKSTART_TIMEOUTS_CANONICAL_SHA256 =
            "aa18b555b73525d0437a2d85c8d7ec5de9ea60fa82429edcd2aeff26d188b4cd";

    @Test
    void quickstartWithClientTimeoutsCanonicalDigest_isPinned() throws Exception {
        String c = canonical(Path.of("..", "examples", "quickstart.yaml"), List.of("workload.client_timeout_s=5"));
        assertThat(c).contains("\"timed_out\":1321").contains("\"abandoned\":2439");
        assertThat(sha256(c)).isEqualTo(QUICKSTART_TIMEOUTS_CANONICAL_SHA256);
    }

    @Test
    void differentSeeds_giveDifferentCanonicalOutput() throws IOException {
        Path p = Path.of("..", "examples", "quickstart.yaml");
        List<String> small = List.of("workload.sessions.sessions=50");
        List<String> other = List.of("workload.sessions.sessions=50", "workload.seed=8");
        assertThat(canonical(p, small)).isNotEqualTo(canonical(p, other));
    }

    /** SHA-256 of canonical.json for examples/kvcr-sessions.yaml with 300 sessions (KVCR pulls and G2 on). */
    static final String KVCR_CANONICAL_SHA256 = "6cf0ac55cc8b2915a0b81433beedd8773542766fc0929fa22e4a2e8c969837f4";

    @Test
    void kvcrCanonicalDigest_isPinned() throws Exception {
        String c =
                canonical(Path.of("..", "examples", "kvcr-sessions.yaml"), List.of("workload.sessions.sessions=300"));
        assertThat(c).contains("\"kvcr\":{\"aborted\":");
        assertThat(sha256(c)).isEqualTo(KVCR_CANONICAL_SHA256);
    }
}
