package io.servesim.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.run.RankStats;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attention-DP ranks of one worker, lockstep vs independent, by hand. Fixed timing: a step with prefill costs
 * 10 ms + 1 ms per prefill token, a step with decodes 10 ms. Round robin puts A on rank 0 and B on rank 1.
 * A: arrives at 0, prompt 4, 4 outputs. B: arrives at 15 ms, prompt 100, 2 outputs.
 */
class AttentionDpTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    private RunResult run(String dpMode) throws IOException {
        Path trace = tmp.resolve("two.jsonl");
        Files.writeString(trace, """
                {"arrival_ms":0,"input_length":4,"output_length":4}
                {"arrival_ms":15,"input_length":100,"output_length":2}
                """);
        return Simulation.run(ConfigLoader.fromYaml(
                "",
                "test",
                List.of(
                        "workload.type=trace",
                        "workload.trace.format=servesim",
                        "workload.trace.path=" + trace,
                        "cluster.workers=1",
                        "cluster.attention_dp=2",
                        "cluster.dp_mode=" + dpMode,
                        "cluster.router.policy=round_robin",
                        "timing.type=fixed",
                        "engine.scheduler.async_scheduling=false", // these hand-computed times follow the synchronous
                        // loop
                        "timing.fixed.prefill_ms=10",
                        "timing.fixed.prefill_per_token_ms=1",
                        "timing.fixed.decode_ms=10")));
    }

    @Test
    void lockstep_aRequestArrivingMidPassWaitsForTheBarrier_andDecodesWaitForTheSlowestRank() throws IOException {
        RunResult r = run("lockstep");
        RequestLog log = r.log();
        int[] byId = log.indicesByRequestId();
        int a = byId[0];
        int b = byId[1];
        assertThat(log.rank(a)).isZero();
        assertThat(log.rank(b)).isEqualTo(1);
        // pass 1 [0,14): A prefill. pass 2 [14,24): A decode; B arrived at 15 but waits for the barrier.
        // pass 3 [24,134): A decode (10 ms) + B prefill (110 ms): ends at the slowest rank.
        // pass 4 [134,144): both decode.
        assertThat(log.firstTokenNanos(a)).isEqualTo(14 * MS);
        assertThat(log.lastTokenNanos(a)).isEqualTo(144 * MS);
        assertThat(log.firstScheduledNanos(b)).isEqualTo(24 * MS);
        assertThat(log.firstTokenNanos(b)).isEqualTo(134 * MS);
        assertThat(log.lastTokenNanos(b)).isEqualTo(144 * MS);
        RankStats r0 = r.ranks().get(0);
        RankStats r1 = r.ranks().get(1);
        assertThat(r0.passes()).isEqualTo(4);
        assertThat(r1.passes()).isEqualTo(2);
        assertThat(r0.busyNanos()).isEqualTo(144 * MS); // every pass it joined lasted the slowest rank's time
        assertThat(r1.busyNanos()).isEqualTo(120 * MS);
        assertThat(r1.prefillTokens()).isEqualTo(100);
        assertThat(r0.decodeTokens()).isEqualTo(3);
    }

    @Test
    void independent_eachRankStepsOnItsOwn_soDecodesDoNotWaitForTheOtherRanksPrefill() throws IOException {
        RunResult r = run("independent");
        RequestLog log = r.log();
        int[] byId = log.indicesByRequestId();
        int a = byId[0];
        int b = byId[1];
        // rank 0: [0,14) prefill, then decodes at 24, 34, 44. rank 1: B starts on arrival: [15,125), [125,135).
        assertThat(log.lastTokenNanos(a)).isEqualTo(44 * MS);
        assertThat(log.firstScheduledNanos(b)).isEqualTo(15 * MS);
        assertThat(log.firstTokenNanos(b)).isEqualTo(125 * MS);
        assertThat(log.lastTokenNanos(b)).isEqualTo(135 * MS);
        assertThat(r.ranks().get(0).busyNanos()).isEqualTo(44 * MS);
    }

    @Test
    void loadImbalanceRatio_isMaxOverMeanWorkerBusyTime() {
        assertThat(io.servesim.report.SummariesAccess.imbalance(new long[] {30, 10, 20}))
                .isEqualTo(1.5);
        assertThat(io.servesim.report.SummariesAccess.imbalance(new long[] {0, 0}))
                .isZero();
    }

    @Test
    void authoredDpRank_winsOverTheRoutersRank_andAnOutOfRangeRankIsAnInputError() throws IOException {
        Path trace = tmp.resolve("ranked.jsonl");
        Files.writeString(trace, """
                {"arrival_ms":0,"input_length":4,"output_length":1,"dp_rank":1}
                {"arrival_ms":1,"input_length":4,"output_length":1,"dp_rank":1}
                {"arrival_ms":2,"input_length":4,"output_length":1}
                """);
        List<String> sets = List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace,
                "cluster.workers=1",
                "cluster.attention_dp=2",
                "cluster.router.policy=round_robin");
        RunResult r = Simulation.run(ConfigLoader.fromYaml("", "test", sets));
        int[] byId = r.log().indicesByRequestId();
        assertThat(r.log().rank(byId[0])).isEqualTo(1); // round robin would say 0
        assertThat(r.log().rank(byId[1])).isEqualTo(1); // round robin would say 1 anyway
        assertThat(r.log().rank(byId[2])).isZero(); // no authored rank: round robin's third pick
        List<String> oneRank = new java.util.ArrayList<>(sets);
        oneRank.add("cluster.attention_dp=1");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Simulation.run(ConfigLoader.fromYaml("", "test", oneRank)))
                .hasMessage("ranked.jsonl:1: dp_rank: is 1 but workers have only 1 attention-DP ranks"
                        + " (cluster.attention_dp)");
    }
}
