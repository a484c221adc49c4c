package io.servesim.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedding API, used as a planner or a notebook would: configs in code, runs in memory, many per JVM. */
class ServesimTest {
    static SimConfig small(int workers, String router) {
        return Servesim.config()
                .set("workload.synthetic.requests", 400)
                .set("workload.arrival", java.util.Map.of("type", "poisson", "rate", 40.0))
                .set("cluster.workers", workers)
                .set("cluster.router.policy", router)
                .build();
    }

    @Test
    void aConfigBuiltInCode_runsInMemory_andGivesSummaryAndRecords() {
        Result r = Servesim.run(small(2, "least_loaded"));
        assertThat(r.summary().requests()).isEqualTo(400);
        assertThat(r.summary().completed()).isEqualTo(400);
        List<RequestRecord> rows = r.requests().toList();
        assertThat(rows).hasSize(400);
        assertThat(rows).extracting(RequestRecord::requestId).isSorted();
        assertThat(rows).allSatisfy(q -> assertThat(q.ttftNanos()).isPositive());
        assertThat(r.raw().streamedRequestsSha256()).isNull(); // nothing went to disk
        assertThat(r.summary().ttftMs().count()).isEqualTo(400);
    }

    @Test
    void yamlTextAndBuilder_giveTheSameConfig() {
        SimConfig fromYaml = Servesim.configFromYaml("cluster: {workers: 3, router: {policy: round_robin}}");
        SimConfig fromCode = Servesim.config()
                .set("cluster.workers", 3)
                .set("cluster.router.policy", "round_robin")
                .build();
        assertThat(fromCode).isEqualTo(fromYaml);
        assertThat(Servesim.configFrom("cluster: {workers: 3}")
                        .set("cluster.router.policy=round_robin")
                        .build())
                .isEqualTo(fromYaml);
    }

    @Test
    void aBadSetting_failsWithItsKeyPath() {
        assertThatThrownBy(() -> Servesim.config().set("cluster.workerz", 3).build())
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.workerz");
        assertThatThrownBy(() -> Servesim.config().set("cluster.workers", -1).build())
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.workers");
    }

    @Test
    void manyRunsInOneJvm_sequentialAndConcurrent_shareNoState() throws Exception {
        SimConfig a = small(3, "kv_aware");
        SimConfig b = small(2, "random");
        String first = Servesim.run(a).canonicalJson();
        String other = Servesim.run(b).canonicalJson();
        assertThat(Servesim.run(a).canonicalJson()).isEqualTo(first).isNotEqualTo(other);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<String> x = pool.submit(() -> Servesim.run(a).canonicalJson());
            Future<String> y = pool.submit(() -> Servesim.run(b).canonicalJson());
            assertThat(x.get()).isEqualTo(first);
            assertThat(y.get()).isEqualTo(other);
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void filesAreWrittenOnlyWhenAsked(@TempDir Path dir) throws IOException {
        Result r = Servesim.run(small(2, "round_robin"));
        assertThat(dir).isEmptyDirectory();
        r.writeTo(dir.resolve("run"));
        assertThat(Files.readString(dir.resolve("run/canonical.json"))).isEqualTo(r.canonicalJson());
        assertThat(dir.resolve("run/requests.csv")).exists();
        assertThat(dir.resolve("run/summary.json")).exists();
    }

    @Test
    void streamedRows_goToTheGivenFile_andAreNotKept(@TempDir Path dir) {
        SimConfig c = Servesim.config()
                .set("workload.synthetic.requests", 200)
                .set("output.stream_requests", true)
                .build();
        assertThatThrownBy(() -> Servesim.run(c)).hasMessageContaining("streamRequestsTo");
        Result r = Servesim.run(c, RunOptions.defaults().streamRequestsTo(dir.resolve("requests.csv.zst")));
        assertThat(r.requests()).isEmpty();
        assertThat(r.summary().completed()).isEqualTo(200);
        assertThat(dir.resolve("requests.csv.zst")).exists();
        assertThat(r.raw().streamedRequestsSha256()).hasSize(64);
    }
}
