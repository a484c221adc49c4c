package io.servesim.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ClientFrontend;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import io.servesim.workload.trace.TraceFormatException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.assertj.core.data.Offset;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** validate's metric definitions by hand, and calibrate recovering parameters it was simulated with. */
class ValidationTest {
    @TempDir
    Path dir;

    @Test
    void measuredJsonl_definesTtftTpotE2eAsTheBenchmarkDoes() throws IOException {
        Path m = dir.resolve("m.jsonl");
        Files.writeString(m, """
                {"request_id": "a", "input_toks": 10, "output_toks": 5, "queued_ts": 100.0, "first_token_ts": 100.5, "last_token_ts": 101.3}
                {"request_id": "b", "input_toks": 10, "output_toks": 1, "queued_ts": 100.2, "first_token_ts": 100.4, "last_token_ts": 100.4}
                {"request_id": "c", "input_toks": 10, "output_toks": 3, "queued_ts": 101.0, "first_token_ts": 101.1, "last_token_ts": 101.5}
                """);
        MeasuredRun r = MeasuredRun.read(m);
        assertThat(r.ttftMs()).containsExactly(new double[] {500, 200, 100}, Offset.offset(1e-6));
        assertThat(r.tpotMs()).containsExactly(new double[] {200, 200}, Offset.offset(1e-6)); // (0.8 s / 4), (0.4 / 2)
        assertThat(r.e2eMs()).containsExactly(new double[] {1300, 200, 500}, Offset.offset(1e-6));
        assertThat(r.durationS()).isCloseTo(1.5, Offset.offset(1e-9)); // 100.0 → 101.5
        assertThat(r.outputTokens()).isEqualTo(9);
    }

    @Test
    void measuredCsv_andMalformedRows_failWithFileAndLine() throws IOException {
        Path ok = dir.resolve("m.csv");
        Files.writeString(ok, "request_id,ttft_ms,tpot_ms,e2e_ms\n1,10,2,50\n2,20,,20\n");
        MeasuredRun r = MeasuredRun.read(ok);
        assertThat(r.ttftMs()).containsExactly(10, 20);
        assertThat(r.tpotMs()).containsExactly(2);
        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, "request_id,ttft_ms,tpot_ms,e2e_ms\n1,ten,2,50\n");
        assertThatThrownBy(() -> MeasuredRun.read(bad))
                .isInstanceOf(TraceFormatException.class)
                .hasMessageContaining("bad.csv:2: ttft_ms");
    }

    @Test
    void ksDistance_isTheLargestGapBetweenEmpiricalCdfs() {
        assertThat(Validation.ks(new double[] {1, 2, 3, 4}, new double[] {1, 2, 3, 4}))
                .isZero();
        assertThat(Validation.ks(new double[] {1, 2}, new double[] {3, 4})).isEqualTo(1.0);
        assertThat(Validation.ks(new double[] {1, 2, 3, 4}, new double[] {3, 4, 5, 6}))
                .isEqualTo(0.5);
    }

    /**
     * A calibration-friendly measured run: requests one at a time (60 s apart, so never batched) with prompts from
     * 1,000 to 30,000 tokens: TTFT varies with the prompt (compute: mfu), TPOT with the context (KV reads, up to a
     * fifth of a decode step here: mbu) on top of a constant (weight read + step overhead), so every fitted parameter
     * shows in the per-request latencies.
     */
    private SimConfig config(String... extra) throws IOException {
        Path trace = dir.resolve("w.jsonl");
        StringBuilder sb = new StringBuilder();
        java.util.SplittableRandom rng = new java.util.SplittableRandom(5);
        for (int i = 0; i < 40; i++) {
            sb.append(String.format(
                    Locale.ROOT,
                    "{\"arrival_ms\":%d,\"input_length\":%d,\"output_length\":%d}%n",
                    i * 60_000,
                    1_000 + rng.nextInt(29_000),
                    20 + rng.nextInt(180)));
        }
        Files.writeString(trace, sb.toString());
        List<String> sets = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=servesim",
                "workload.trace.path=" + trace,
                "engine.scheduler.max_num_seqs=64",
                "engine.scheduler.max_num_batched_tokens=2048",
                "timing.model=llama-3.1-8b",
                "timing.gpu=l40s",
                // the synchronous loop pays the CPU part on top of every step; the async loop hides it behind the GPU
                // part, where no latency could tell its size
                "engine.scheduler.async_scheduling=false"));
        sets.addAll(List.of(extra));
        return ConfigLoader.fromYaml("", "t", sets);
    }

    private Path measuredFrom(RunResult r) throws IOException {
        var log = r.log();
        StringBuilder sb = new StringBuilder();
        for (int i : log.indicesByRequestId()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "{\"request_id\": %d, \"input_toks\": %d, \"output_toks\": %d, \"queued_ts\": %.9f,"
                            + " \"first_token_ts\": %.9f, \"last_token_ts\": %.9f}%n",
                    log.requestId(i),
                    log.inputTokens(i),
                    log.outputTokens(i),
                    log.arrivalNanos(i) / 1e9,
                    log.firstTokenNanos(i) / 1e9,
                    log.lastTokenNanos(i) / 1e9));
        }
        Path m = dir.resolve("measured.jsonl");
        Files.writeString(m, sb.toString());
        return m;
    }

    /**
     * The client-side frontend's two terms by hand: three requests arriving together share every step (each of
     * their first and last tokens comes from a step serving three), a fourth arrives alone a minute later (one).
     * With 2 ms plus 100 µs per request in the step, the first three gain 2.3 ms on TTFT and E2E, the fourth 2.1,
     * and TPOT — derived from the two as a client derives it — moves by nothing, as both delays are equal.
     */
    @Test
    void clientFrontend_addsItsConstantAndItsTimePerRequestInTheTokensStep() throws IOException {
        Path trace = dir.resolve("f.jsonl");
        Files.writeString(trace, """
                {"arrival_ms": 0, "input_length": 64, "output_length": 5}
                {"arrival_ms": 0, "input_length": 64, "output_length": 5}
                {"arrival_ms": 0, "input_length": 64, "output_length": 5}
                {"arrival_ms": 60000, "input_length": 64, "output_length": 5}
                """);
        SimConfig c = ConfigLoader.fromYaml(
                "",
                "t",
                List.of("workload.type=trace", "workload.trace.format=servesim", "workload.trace.path=" + trace));
        RunResult r = Simulation.run(c);
        MeasuredRun m = MeasuredRun.read(measuredFrom(r));
        Validation none = Validation.of(m, r, ClientFrontend.NONE, Long.MIN_VALUE, Long.MAX_VALUE);
        Validation with = Validation.of(m, r, new ClientFrontend(2, 100), Long.MIN_VALUE, Long.MAX_VALUE);
        double shift = (3 * 2.3 + 2.1) / 4;
        for (String metric : List.of("ttft_ms", "e2e_ms")) {
            assertThat(with.metrics().get(metric).simulated().mean()
                            - none.metrics().get(metric).simulated().mean())
                    .as(metric)
                    .isCloseTo(shift, Offset.offset(1e-9));
            assertThat(with.metrics().get(metric).simulated().max()
                            - none.metrics().get(metric).simulated().max())
                    .as(metric + " of a request of the three (the slowest)")
                    .isCloseTo(2.3, Offset.offset(1e-9));
        }
        assertThat(with.metrics().get("tpot_ms").simulated().mean())
                .isCloseTo(none.metrics().get("tpot_ms").simulated().mean(), Offset.offset(1e-12));
        assertThat(Validation.of(m, r, ClientFrontend.constant(2), Long.MIN_VALUE, Long.MAX_VALUE)
                        .metrics()
                        .get("ttft_ms")
                        .simulated()
                        .mean())
                .isCloseTo(none.metrics().get("ttft_ms").simulated().mean() + 2, Offset.offset(1e-9));
        assertThatThrownBy(() -> new ClientFrontend(1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("per_request_us");
    }

    @Test
    void validatingASimulatedRunAgainstItself_hasZeroErrorAndZeroKs() throws IOException {
        SimConfig c = config();
        RunResult r = Simulation.run(c);
        Validation v = Validation.of(MeasuredRun.read(measuredFrom(r)), Simulation.run(c));
        for (Validation.Metric m : v.metrics().values()) {
            assertThat(m.errorPct("mean")).isCloseTo(0, Offset.offset(1e-6));
            assertThat(m.ks()).isZero();
        }
    }

    /**
     * Calibration from the defaults recovers a run simulated with known parameters: the fitted model reproduces the
     * measured distributions, the compute efficiency (which alone sets a long prefill) and the decode step time at
     * short and long context. Memory efficiency and per-step overhead are reported as a pair: per-request
     * latencies constrain their sum far more than their split (docs/accuracy.md).
     */
    @Test
    void calibrate_recoversTheParametersARunWasSimulatedWith() throws IOException {
        SimConfig truth =
                config("timing.roofline.mfu=0.35", "timing.roofline.mbu=0.55", "timing.roofline.step_overhead_us=6000");
        Path measured = measuredFrom(Simulation.run(truth));
        // from a fixed start, not the shipped defaults (they move with every corpus refit; at batch 1 the step overhead
        // trades against mbu, and from far below the truth the search can run to the lower bound)
        SimConfig start =
                config("timing.roofline.mfu=0.6", "timing.roofline.mbu=0.8", "timing.roofline.step_overhead_us=3000");
        Calibrator.Result fit = new Calibrator(start, MeasuredRun.read(measured), 200).fit();
        for (Validation.Metric m : fit.validation().metrics().values()) {
            for (String stat : Validation.STATS) {
                assertThat(Math.abs(m.errorPct(stat))).as(stat).isLessThan(3.0);
            }
        }
        assertThat(fit.roofline().mfu()).isCloseTo(0.35, Percentage.withPercentage(5));
        io.servesim.timing.ModelSpec model = io.servesim.timing.Specs.model("llama-3.1-8b", "t");
        io.servesim.timing.GpuSpec gpu = io.servesim.timing.Specs.gpu("l40s", "t");
        var trueModel = new io.servesim.timing.RooflineTiming(
                model,
                gpu,
                1,
                1,
                io.servesim.config.TimingConfig.Dtype.BF16,
                null,
                2,
                2,
                truth.timing().roofline(),
                true);
        var fitModel = new io.servesim.timing.RooflineTiming(
                model, gpu, 1, 1, io.servesim.config.TimingConfig.Dtype.BF16, null, 2, 2, fit.roofline(), true);
        for (int context : new int[] {1_000, 20_000}) {
            io.servesim.timing.StepBatch b = new io.servesim.timing.StepBatch();
            b.reset(1 << 20);
            b.add(1, context, true);
            // the synchronous step, CPU then GPU part: what per-request latencies measure
            assertThat((double) fitModel.stepNanos(b) + fitModel.cpuNanos(b))
                    .as("decode step at context " + context)
                    .isCloseTo((double) trueModel.stepNanos(b) + trueModel.cpuNanos(b), Percentage.withPercentage(3));
        }
        assertThat(fit.atBound()).isEmpty();
    }
}
