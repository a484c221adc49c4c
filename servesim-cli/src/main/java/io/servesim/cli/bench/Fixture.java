package io.servesim.cli.bench;

import io.servesim.api.Result;
import io.servesim.api.Servesim;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.ReportWriter;
import io.servesim.report.Summary;
import io.servesim.run.RunResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The KVCR fixture of {@code servesim bench fixture} (issue "Step 5"; docs/performance.md): a fixed multi-turn
 * session workload scaled with the worker count, in four arms. The workload lives in {@code fixture.yaml} beside
 * this class; {@link #config} adds the cell's size and the arm's keys.
 */
public final class Fixture {
    /**
     * The arms, in table order: four KVCR arms, and {@code pd}: the same workload on a disaggregated cluster (a
     * quarter of the workers prefill, the rest decode; G2 and KVCR off; docs/pd.md).
     */
    public static final List<String> ARMS = List.of("g2-only", "kvcr-off", "kvcr-idle", "kvcr-hinted", "pd");

    /** Sessions per worker. */
    public static final int SESSIONS_PER_WORKER = 8;

    /** Turns per session. */
    public static final int TURNS = 11;

    private Fixture() {}

    /** The fixture's YAML (defaults for every cell). */
    public static String yaml() {
        try (InputStream in = Fixture.class.getResourceAsStream("fixture.yaml")) {
            if (in == null) {
                throw new IllegalStateException("fixture.yaml missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The config of one cell.
     *
     * @param workers workers (W)
     * @param dp attention-DP ranks per worker
     * @param arm one of {@link #ARMS}
     */
    public static SimConfig config(int workers, int dp, String arm) {
        boolean kvcr = arm.equals("kvcr-idle") || arm.equals("kvcr-hinted");
        boolean migrate = arm.equals("kvcr-off") || arm.equals("kvcr-hinted");
        if (!ARMS.contains(arm)) {
            throw new IllegalArgumentException("unknown arm '" + arm + "' (known: " + String.join(", ", ARMS) + ")");
        }
        if (arm.equals("pd")) {
            if (workers < 2) {
                throw new IllegalArgumentException("arm pd needs at least 2 workers (a prefill and a decode pool)");
            }
            int prefill = Math.max(1, workers / 4);
            return ConfigLoader.fromYaml(
                    yaml(),
                    "fixture.yaml",
                    List.of(
                            "cluster.workers=" + workers,
                            "cluster.attention_dp=" + dp,
                            "workload.sessions.sessions=" + SESSIONS_PER_WORKER * workers,
                            String.format(Locale.ROOT, "workload.arrival.rate=%s", workers * 200.0 / TURNS),
                            "engine.kv_cache.host_offload.num_host_blocks=0",
                            "cluster.mode=disaggregated",
                            "cluster.prefill={workers: " + prefill + ", router: {policy: least_loaded}}",
                            "cluster.decode={workers: " + (workers - prefill) + "}",
                            "cluster.disagg.transfer={nic_gbytes_per_s: 50.0, first_byte_ms: 1.0}"));
        }
        return ConfigLoader.fromYaml(
                yaml(),
                "fixture.yaml",
                List.of(
                        "cluster.workers=" + workers,
                        "cluster.attention_dp=" + dp,
                        "workload.sessions.sessions=" + SESSIONS_PER_WORKER * workers,
                        // 200/11 session starts per worker-second: about 200 turn arrivals per worker-second
                        String.format(Locale.ROOT, "workload.arrival.rate=%s", workers * 200.0 / TURNS),
                        "workload.sessions.migrate_fraction=" + (migrate ? "0.2" : "0.0"),
                        "engine.kvcr.enabled=" + kvcr));
    }

    /** What one replay of a cell measured. */
    public record Measurement(
            long requests,
            long virtualNanos,
            long replayNanos,
            long allocatedBytes,
            String canonicalSha256,
            Summary summary) {}

    /**
     * Replays a cell once: the replay time runs from building the simulation to the end of report finalisation
     * (summary and canonical digest), excluding config parsing; the bytes this thread allocated over the same span
     * come with it (the JVM's per-thread counter: it hardly moves between runs, where the time does).
     */
    public static Measurement replay(SimConfig config) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long bytes0 = threads.getCurrentThreadAllocatedBytes();
        long t0 = System.nanoTime();
        Result run = Servesim.run(config);
        RunResult result = run.raw();
        Summary summary = run.summary();
        String sha = canonicalSha256(result, summary);
        long t1 = System.nanoTime();
        long bytes = threads.getCurrentThreadAllocatedBytes() - bytes0;
        return new Measurement(result.requestsCreated(), result.endNanos(), t1 - t0, bytes, sha, summary);
    }

    /** SHA-256 of the run's canonical.json, computed without writing it. */
    public static String canonicalSha256(RunResult result, Summary summary) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            try (Writer w = new OutputStreamWriter(
                    new DigestOutputStream(java.io.OutputStream.nullOutputStream(), md), StandardCharsets.UTF_8)) {
                ReportWriter.writeCanonical(result, summary, w);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
