package io.servesim.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The corpus loop: every run replayed with its own deployment, in order, identically on one thread or several. */
class CorpusTest {
    private static final Path CORPUS = Path.of("src/test/resources/corpus");

    /** Every statistic and count of a result, as text, for comparing evaluations. */
    private static String fingerprint(Corpus.Result r) {
        StringBuilder sb = new StringBuilder(r.run().name());
        r.validation().metrics().forEach((name, m) -> {
            sb.append(' ')
                    .append(name)
                    .append(' ')
                    .append(m.measured())
                    .append(' ')
                    .append(m.simulated());
            sb.append(' ').append(m.ks());
        });
        sb.append(' ').append(r.validation().simulatedOutputTokS()).append(' ').append(r.numGpuBlocks());
        return sb.toString();
    }

    @Test
    void everyRun_isComparedWithItsMeasurement_inOrder_andThreadsChangeNothing() {
        List<RunFolder> runs = RunFolder.corpus(CORPUS);
        List<String> seen = new ArrayList<>();
        List<Corpus.Result> one =
                Corpus.evaluate(runs, null, List.of(), 1, r -> seen.add(r.run().name()));
        assertThat(seen).containsExactly(runs.get(0).name(), runs.get(1).name());
        Corpus.Result blis = one.get(0);
        assertThat(blis.validation().metrics().get("ttft_ms").measured().count())
                .isEqualTo(120);
        assertThat(blis.validation().metrics().get("ttft_ms").simulated().count())
                .isEqualTo(120);
        assertThat(blis.numGpuBlocks().stated()).isEqualTo(7462);
        assertThat(blis.numGpuBlocks().used()).isEqualTo(7462);
        assertThat(blis.numGpuBlocks().derived()).isNotNull();
        assertThat(blis.config().workload().trace().sharedPrefix()).isNotNull(); // lengths only: approximated
        Corpus.Result sharegpt = one.get(1);
        assertThat(sharegpt.validation().metrics().get("e2e_ms").measured().count())
                .isEqualTo(60);
        assertThat(sharegpt.config().workload().trace().sharedPrefix()).isNull(); // real token ids
        assertThat(sharegpt.numGpuBlocks().used())
                .isEqualTo(sharegpt.numGpuBlocks().derived());
        assertThat(sharegpt.validation().measuredOutputTokS()).isPositive();

        List<Corpus.Result> three = Corpus.evaluate(runs, null, List.of(), 3);
        assertThat(three)
                .extracting(CorpusTest::fingerprint)
                .containsExactlyElementsOf(
                        one.stream().map(CorpusTest::fingerprint).toList());
    }

    @Test
    void theSharedOverrides_applyToEveryRun() {
        List<Corpus.Result> r =
                Corpus.evaluate(RunFolder.corpus(CORPUS), null, List.of("timing.roofline.step_overhead_us=100000"), 2);
        assertThat(r)
                .allSatisfy(x -> assertThat(x.config().timing().roofline().stepOverheadUs())
                        .isEqualTo(100000.0));
    }

    @Test
    void aFailingRun_endsTheEvaluationWithAnErrorNamingIt(@TempDir Path tmp) throws IOException {
        for (String f : List.of("meta.json", "workload.jsonl", "measured.jsonl")) {
            Path dir = tmp.resolve("bad_run");
            Files.createDirectories(dir);
            Files.copy(CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen").resolve(f), dir.resolve(f));
        }
        Files.writeString(
                tmp.resolve("bad_run/workload.jsonl"),
                "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 0}\n",
                java.nio.file.StandardOpenOption.APPEND);
        RunFolder bad = RunFolder.read(tmp.resolve("bad_run"));
        assertThatThrownBy(() -> Corpus.evaluate(List.of(bad), null, List.of(), 2))
                .hasMessageStartingWith("run bad_run: ");
        assertThatThrownBy(() -> Corpus.evaluate(bad, null, List.of("engine.scheduler.max_num_seqs=0")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("run bad_run: engine.scheduler.max_num_seqs: must be >= 1, got 0");

        // handed to onFailure instead, the failing run is skipped and the runs after it are evaluated, in order
        RunFolder good = RunFolder.read(CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen"));
        for (int threads : new int[] {1, 2}) {
            List<String> events = new ArrayList<>();
            List<Corpus.Result> results = Corpus.evaluate(
                    List.of(bad, good, bad),
                    null,
                    List.of(),
                    threads,
                    0,
                    r -> events.add("ok " + r.run().name()),
                    (run, e) -> events.add("failed " + run.name() + ": " + e.getMessage()));
            assertThat(results).extracting(r -> r.run().name()).containsExactly(good.name());
            assertThat(events).as("threads " + threads).hasSize(3);
            assertThat(events.get(0)).startsWith("failed bad_run: run bad_run: ");
            assertThat(events.get(1)).isEqualTo("ok blis_H100_Llama-2-7b_tp1_codegen");
            assertThat(events.get(2)).isEqualTo(events.get(0));
        }
    }

    @Test
    void arrivalWindows_partitionTheRun_eachComparedOnItsOwnRequests() {
        RunFolder run = RunFolder.corpus(CORPUS).get(0); // 120 requests over 21.5 s
        Corpus.Result whole = Corpus.evaluate(run, null, List.of());
        assertThat(whole.windows()).isEmpty();
        Corpus.Result r = Corpus.evaluate(run, null, List.of(), 5);
        assertThat(r.windows()).extracting(Corpus.Window::fromS).containsExactly(0.0, 5.0, 10.0, 15.0, 20.0);
        long measured = 0;
        long simulated = 0;
        double weightedMean = 0;
        for (Corpus.Window w : r.windows()) {
            assertThat(w.toS() - w.fromS()).isEqualTo(5.0);
            Validation.Metric ttft = w.validation().metrics().get("ttft_ms");
            assertThat(ttft.simulated().count()).isEqualTo(ttft.measured().count()); // the same requests on both sides
            measured += ttft.measured().count();
            simulated += ttft.simulated().count();
            weightedMean += ttft.measured().mean() * ttft.measured().count();
        }
        // every request in exactly one window, and the windows' means average back to the run's
        assertThat(measured).isEqualTo(120L);
        assertThat(simulated).isEqualTo(120L);
        assertThat(weightedMean / 120)
                .isCloseTo(
                        whole.validation().metrics().get("ttft_ms").measured().mean(),
                        org.assertj.core.data.Offset.offset(1e-9));
        assertThatThrownBy(() -> Corpus.evaluate(run, null, List.of(), -1)).hasMessageContaining("window must be >= 0");
    }
}
