package io.servesim.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.sweep.LocalEngine;
import io.servesim.sweep.SweepEngine;
import io.servesim.sweep.SweepOutput;
import io.servesim.sweep.SweepSpec;
import io.servesim.sweep.Sweeps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same sweep locally with 1 and 2 threads and on embedded Spark: byte-identical result tables. */
class SparkSweepTest {
    @TempDir
    Path tmp;

    @Test
    void localOneThread_localTwoThreads_andEmbeddedSpark_giveByteIdenticalResults() throws IOException {
        Path spec = tmp.resolve("sweep.yaml");
        Files.writeString(spec, """
                base:
                  workload: {type: synthetic, synthetic: {requests: 150, input_tokens: {type: uniform, min: 50, max: 600}}, arrival: {rate: 40}}
                  cluster: {workers: 2, router: {policy: least_loaded}}
                  timing: {type: polynomial}
                space:
                  cluster.workers: [1, 2, 3]
                  engine.scheduler.max_num_seqs: [8, 64]
                  workload.seed: [1, 2]
                search: {type: grid}
                slo: {ttft_p90_ms: 400}
                """);
        SweepSpec s = SweepSpec.load(spec);
        String one;
        try (SweepEngine e = new LocalEngine(1, (d, t) -> {})) {
            one = SweepOutput.resultsCsv(s, Sweeps.run(s, e, false).results());
        }
        String two;
        try (SweepEngine e = new LocalEngine(2, (d, t) -> {})) {
            two = SweepOutput.resultsCsv(s, Sweeps.run(s, e, false).results());
        }
        String spark;
        try (SparkSweepEngine e = new SparkSweepEngine("local[2]")) {
            Sweeps.Outcome o = Sweeps.run(s, e, false);
            spark = SweepOutput.resultsCsv(s, o.results());
            e.writeExtras(s, o, tmp);
        }
        assertThat(one.lines().count()).isEqualTo(1 + 12);
        assertThat(two).isEqualTo(one);
        assertThat(spark).isEqualTo(one);
        try (var files = Files.list(tmp.resolve("results.parquet"))) {
            assertThat(files.anyMatch(p -> p.toString().endsWith(".parquet"))).isTrue();
        }
    }

    @Test
    void anEmbeddedMasterBindsLoopbackOnly_aClusterMasterLeavesTheDriverAddressToSpark() {
        assertThat(SparkSweepEngine.driverSettings("local[2]"))
                .containsEntry("spark.driver.bindAddress", "127.0.0.1")
                .containsEntry("spark.driver.host", "127.0.0.1");
        for (String master : java.util.List.of("spark://head:7077", "k8s://https://api:6443", "yarn")) {
            assertThat(SparkSweepEngine.driverSettings(master))
                    .as(master)
                    .doesNotContainKeys("spark.driver.bindAddress", "spark.driver.host")
                    .containsEntry("spark.ui.enabled", "false");
        }
    }
}
