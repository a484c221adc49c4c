package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestStatus;
import io.servesim.report.Summaries;
import io.servesim.report.Summary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Worker failure and the time limit: no request is ever lost. Round robin, prefill step 10 ms + 1 ms per token,
 * decode step 10 ms. A: t=0, 100 tokens, 5 outputs; B: t=1, 10 tokens, 1 output; C: t=60, 10 tokens, 1 output.
 */
class FailureTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    private RunResult run(String... extra) throws IOException {
        Path trace = tmp.resolve("fail.jsonl");
        Files.writeString(trace, """
                {"arrival_ms":0,"input_length":100,"output_length":5}
                {"arrival_ms":1,"input_length":10,"output_length":1}
                {"arrival_ms":60,"input_length":10,"output_length":1}
                """);
        List<String> sets = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace,
                "cluster.router.policy=round_robin",
                "timing.type=fixed",
                "timing.fixed.prefill_ms=10",
                "timing.fixed.prefill_per_token_ms=1",
                "timing.fixed.decode_ms=10"));
        sets.addAll(List.of(extra));
        return Simulation.run(ConfigLoader.fromYaml("", "test", sets));
    }

    @Test
    void failedWorker_restartsItsInFlightRequestsElsewhereFromScratch_keepingTheirArrivalTime() throws IOException {
        // A prefills [0, 110) on w0; w0 fails at 50: A restarts on w1 (idle again after B [1, 21)) at 50:
        // prefill [50, 160) → TTFT 160 ms from its original arrival. C (t=60) also goes to w1: step [160, 190) is
        // C's prefill (10 + 10) plus A's decode (10); A's last 3 decodes end at 220.
        RunResult r = run("cluster.workers=2", "cluster.events=[{at_ms: 50, worker: 0, action: fail}]");
        RequestLog log = r.log();
        int a = log.indicesByRequestId()[0];
        assertThat(log.worker(a)).isEqualTo(1);
        assertThat(log.restarts(a)).isEqualTo(1);
        assertThat(log.firstScheduledNanos(a)).isEqualTo(50 * MS);
        assertThat(log.firstTokenNanos(a)).isEqualTo(160 * MS);
        assertThat(log.lastTokenNanos(a)).isEqualTo(220 * MS);
        assertThat(log.outputTokens(a)).isEqualTo(5);
        int c = log.indicesByRequestId()[2];
        assertThat(log.worker(c)).isEqualTo(1); // nothing new goes to the failed worker
        Summary s = Summaries.of(r);
        assertThat(s.restarts()).isEqualTo(1);
        assertThat(s.workersFailed()).isEqualTo(1);
        assertThat(s.completed()).isEqualTo(3);
    }

    @Test
    void whenEveryWorkerHasFailed_inFlightAndLaterRequestsAreRejectedWithNoWorker() throws IOException {
        RunResult r = run("cluster.events=[{at_ms: 5, worker: 0, action: fail}]");
        RequestLog log = r.log();
        assertThat(log.size()).isEqualTo(3);
        for (int i : log.indicesByRequestId()) {
            assertThat(log.status(i)).isEqualTo(RequestStatus.REJECTED_NO_WORKER);
            assertThat(log.firstTokenNanos(i)).isEqualTo(-1);
        }
        Summary s = Summaries.of(r);
        assertThat(s.rejected()).isEqualTo(3);
        assertThat(s.restarts()).isEqualTo(2); // A and B were queued on the worker when it failed
    }

    @Test
    void timeLimit_endsTheRunThere_andRequestsStillInTheSystemAreIncomplete() throws IOException {
        // one worker: A prefills [0, 110), B waits; at the 50 ms limit both are still in the system; C (t=60) never
        // arrives
        RunResult r = run("limits.time_limit_s=0.05");
        RequestLog log = r.log();
        assertThat(r.requestsCreated()).isEqualTo(2);
        assertThat(log.size()).isEqualTo(2);
        for (int i = 0; i < log.size(); i++) {
            assertThat(log.status(i)).isEqualTo(RequestStatus.INCOMPLETE);
        }
        Summary s = Summaries.of(r);
        assertThat(s.incomplete()).isEqualTo(2);
        assertThat(s.completed()).isZero();
        assertThat(s.durationMs()).isEqualTo(50.0);
        assertThat(s.ttftMs().count()).isZero();
    }

    @Test
    void timeLimit_beyondTheLastEvent_changesNothing() throws IOException {
        RunResult open = run("cluster.workers=2");
        RunResult capped = run("cluster.workers=2", "limits.time_limit_s=100");
        assertThat(Summaries.of(capped).completed()).isEqualTo(3);
        assertThat(capped.endNanos()).isEqualTo(open.endNanos());
    }
}
