package io.servesim.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.ZstdInputStream;
import io.servesim.config.ConfigLoader;
import io.servesim.report.ReportWriter;
import io.servesim.report.Summaries;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.InputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Streamed per-request rows and bounded-memory percentiles (10 M-request runs). */
class StreamingMetricsTest {
    private static final List<String> SMALL = List.of(
            "workload.synthetic.requests=400",
            "workload.synthetic.input_tokens={type: uniform, min: 16, max: 300}",
            "workload.synthetic.output_tokens={type: uniform, min: 1, max: 40}",
            "workload.arrival.rate=200",
            "cluster.workers=3",
            "cluster.router.policy=least_loaded",
            "timing.type=polynomial");

    @Test
    void streamedRequestsCsv_holdsTheSameBytesAsTheInMemoryOne_inRequestIdOrder(@TempDir Path dir) throws Exception {
        RunResult kept = Simulation.run(ConfigLoader.fromYaml("", "t", SMALL));
        StringWriter expected = new StringWriter();
        ReportWriter.writeRequestsCsv(kept.log(), expected);

        List<String> streamedSets = new java.util.ArrayList<>(SMALL);
        streamedSets.add("output.stream_requests=true");
        Path zst = dir.resolve("requests.csv.zst");
        RunResult streamed = new Simulation(ConfigLoader.fromYaml("", "t", streamedSets))
                .streamRequestsTo(zst)
                .run();
        String actual;
        try (InputStream in = new ZstdInputStream(Files.newInputStream(zst))) {
            actual = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(actual).isEqualTo(expected.toString());
        assertThat(streamed.log().size()).isZero(); // nothing kept in memory
        assertThat(streamed.streamedRequestsSha256())
                .isEqualTo(java.util.HexFormat.of()
                        .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                                .digest(actual.getBytes(StandardCharsets.UTF_8))));
        // the summary does not depend on where the rows went
        assertThat(Summaries.of(streamed).ttftMs()).isEqualTo(Summaries.of(kept).ttftMs());
        assertThat(Summaries.of(streamed).e2eMs()).isEqualTo(Summaries.of(kept).e2eMs());
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList())
                    .containsExactly("requests.csv.zst"); // the temporary file was renamed into place
        }
    }

    @Test
    void percentiles_areExactUpToTheLimit_thenFromHdrHistogramWithin3SignificantDigits() {
        LatencyDistribution exact = new LatencyDistribution().exactLimit(2_000);
        LatencyDistribution bounded = new LatencyDistribution().exactLimit(100);
        for (long v = 1; v <= 1_000; v++) {
            exact.record(v * 1_000);
            bounded.record(v * 1_000);
        }
        assertThat(exact.exact()).isTrue();
        assertThat(exact.method()).isEqualTo("exact");
        assertThat(exact.stats(1).p50()).isEqualTo(500_500.0); // numpy: between the 500th and 501st value
        assertThat(bounded.exact()).isFalse();
        assertThat(bounded.method()).isEqualTo("hdr_histogram_3_significant_digits");
        Stats s = bounded.stats(1);
        assertThat(s.count()).isEqualTo(1_000);
        assertThat(s.mean()).isEqualTo(500_500.0); // count, mean, min and max stay exact
        assertThat(s.min()).isEqualTo(1_000.0);
        assertThat(s.max()).isEqualTo(1_000_000.0);
        assertThat(s.p50()).isCloseTo(500_500.0, org.assertj.core.data.Percentage.withPercentage(0.2));
        assertThat(s.p99()).isCloseTo(990_010.0, org.assertj.core.data.Percentage.withPercentage(0.2));
    }

    @Test
    void distinctValuesBelowTheLimit_stayExact_howeverManySamples() {
        LatencyDistribution d = new LatencyDistribution().exactLimit(10);
        for (int i = 0; i < 100_000; i++) {
            d.record(1_000L * (i % 5));
        }
        assertThat(d.exact()).isTrue();
        assertThat(d.stats(1).p50()).isEqualTo(2_000.0);
    }

    @Test
    void summary_statesWhichPercentileMethodWasUsed() {
        List<String> tight = new java.util.ArrayList<>(SMALL);
        tight.add("output.exact_percentile_samples=10");
        assertThat(Summaries.of(Simulation.run(ConfigLoader.fromYaml("", "t", SMALL)))
                        .percentileMethod())
                .isEqualTo("exact");
        assertThat(Summaries.of(Simulation.run(ConfigLoader.fromYaml("", "t", tight)))
                        .percentileMethod())
                .isEqualTo("hdr_histogram_3_significant_digits");
    }
}
