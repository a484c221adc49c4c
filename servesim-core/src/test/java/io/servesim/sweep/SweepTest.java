package io.servesim.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sweep specs, point generation, evaluation and outputs. */
class SweepTest {
    @TempDir
    Path tmp;

    private static final String BASE = """
            base:
              workload: {type: synthetic, synthetic: {requests: 120, input_tokens: {type: uniform, min: 50, max: 400}, output_tokens: {type: fixed, value: 16}}, arrival: {rate: 30}}
              cluster: {workers: 2, router: {policy: least_loaded}}
              timing: {type: fixed}
            """;

    private SweepSpec spec(String rest) throws IOException {
        Path f = tmp.resolve("s" + System.nanoTime() + ".yaml");
        Files.writeString(f, BASE + rest);
        return SweepSpec.load(f);
    }

    @Test
    void grid_isTheCartesianProductInCanonicalOrder_lastDimensionFastest() throws IOException {
        SweepSpec s = spec("""
                space:
                  cluster.workers: [1, 2]
                  engine.scheduler.max_num_seqs: {from: 16, to: 48, step: 16}
                """);
        List<List<String>> g = Sweeps.grid(s);
        assertThat(g).hasSize(6);
        assertThat(g.get(0)).containsExactly("cluster.workers=1", "engine.scheduler.max_num_seqs=16");
        assertThat(g.get(1)).containsExactly("cluster.workers=1", "engine.scheduler.max_num_seqs=32");
        assertThat(g.get(3)).containsExactly("cluster.workers=2", "engine.scheduler.max_num_seqs=16");
        assertThat(g.get(5)).containsExactly("cluster.workers=2", "engine.scheduler.max_num_seqs=48");
    }

    @Test
    void configWarnings_nameADeprecatedSpacePath_andADeprecatedKeyInTheBase_once() throws IOException {
        SweepSpec old = spec("""
                  engine: {kvcr: {enabled: true, bandwidth_gbps: 50}}
                space:
                  engine.kvcr.fabric_gbps: [100, 200]
                """);
        SweepSpec current = spec("""
                space:
                  engine.kvcr.fabric_gbytes_per_s: [100, 200]
                """);

        assertThat(Sweeps.configWarnings(old))
                .containsExactly(
                        "engine.kvcr.bandwidth_gbps is deprecated: use engine.kvcr.bandwidth_gbytes_per_s (GB/s)",
                        "engine.kvcr.fabric_gbps is deprecated: use engine.kvcr.fabric_gbytes_per_s (GB/s)");
        assertThat(Sweeps.configWarnings(current)).isEmpty();
        assertThat(Sweeps.points(old).get(1).config().engine().kvcr().fabricGbytesPerS())
                .isEqualTo(200.0);
    }

    @Test
    void random_isASeededSubsetOfTheGridInGridOrder() throws IOException {
        String space = """
                space:
                  cluster.workers: [1, 2, 3, 4]
                  engine.scheduler.max_num_seqs: [8, 16, 32, 64, 128]
                """;
        SweepSpec a = spec(space + "search: {type: random, points: 7, seed: 3}\n");
        SweepSpec b = spec(space + "search: {type: random, points: 7, seed: 3}\n");
        SweepSpec c = spec(space + "search: {type: random, points: 7, seed: 4}\n");
        List<RunSpec> pa = Sweeps.points(a);
        assertThat(pa).hasSize(7);
        assertThat(pa.stream().map(RunSpec::overrides).toList())
                .isEqualTo(Sweeps.points(b).stream().map(RunSpec::overrides).toList());
        assertThat(pa.stream().map(RunSpec::overrides).toList())
                .isNotEqualTo(Sweeps.points(c).stream().map(RunSpec::overrides).toList());
        List<List<String>> grid = Sweeps.grid(a);
        int last = -1;
        for (RunSpec p : pa) {
            int at = grid.indexOf(p.overrides().subList(2, p.overrides().size()));
            assertThat(at).isGreaterThan(last); // distinct, in grid order
            last = at;
        }
    }

    @Test
    void aFailedPointIsReportedWithItsError_andTheSweepGoesOn_unlessFailFast() throws IOException {
        SweepSpec s = spec("""
                space:
                  engine.scheduler.max_num_seqs: [16, 0, 32]
                slo: {ttft_p90_ms: 100000}
                """);
        List<PointResult> r;
        try (SweepEngine e = new LocalEngine(1, (d, t) -> {})) {
            r = Sweeps.run(s, e, false).results();
        }
        assertThat(r).hasSize(3);
        assertThat(r.get(0).error()).isNull();
        assertThat(r.get(1).error()).contains("max_num_seqs");
        assertThat(r.get(2).error()).isNull();
        assertThat(r.get(2).sloPass()).isTrue();
        // with a huge SLO every completed request is good: goodput = completed / duration
        assertThat(r.get(0).goodputRps())
                .isEqualTo(r.get(0).completed() / r.get(0).durationS());
        List<PointResult> ff;
        try (SweepEngine e = new LocalEngine(1, (d, t) -> {})) {
            ff = Sweeps.run(s, e, true).results();
        }
        assertThat(ff.get(2).error()).contains("not run");
        String csv = SweepOutput.resultsCsv(s, r);
        assertThat(csv.lines().skip(2).findFirst().orElseThrow()).contains("config error");
    }

    @Test
    void withAClientFrontend_theSlosAndLatencyColumns_areTheClientsView() throws IOException {
        SweepSpec s = spec("""
                space:
                  output.client_frontend.overhead_ms: [0, 1000000]
                slo: {ttft_p90_ms: 100000}
                """);
        List<PointResult> r;
        try (SweepEngine e = new LocalEngine(1, (d, t) -> {})) {
            r = Sweeps.run(s, e, false).results();
        }
        assertThat(r.get(0).sloPass()).isTrue();
        assertThat(r.get(0).goodputRps())
                .isEqualTo(r.get(0).completed() / r.get(0).durationS());
        // the same engine run, every token 1,000 s later at the client: every request misses a 100 s TTFT
        assertThat(r.get(1).ttftP90Ms())
                .isCloseTo(r.get(0).ttftP90Ms() + 1e6, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(r.get(1).e2eP99Ms()).isCloseTo(r.get(0).e2eP99Ms() + 1e6, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(r.get(1).tpotP99Ms()).isCloseTo(r.get(0).tpotP99Ms(), org.assertj.core.data.Offset.offset(1e-9));
        assertThat(r.get(1).sloPass()).isFalse();
        assertThat(r.get(1).goodputRps()).isZero();
        assertThat(r.get(1).completed()).isEqualTo(r.get(0).completed());
    }

    @Test
    void bisect_findsEachDeploymentsHighestLoadThatMeetsTheSlo() throws IOException {
        // prefill costs 20 ms + 0.2 ms per token: one worker prefills about 15 prompts per second
        SweepSpec s = spec("""
                space:
                  cluster.workers: [1, 2]
                  timing.fixed.prefill_per_token_ms: [0.2]
                search: {type: bisect, load_path: workload.arrival.rate, low: 5, high: 400, iterations: 5}
                slo: {ttft_p90_ms: 300}
                """);
        Sweeps.Outcome o;
        try (SweepEngine e = new LocalEngine(2, (d, t) -> {})) {
            o = Sweeps.run(s, e, false);
        }
        assertThat(o.capacities()).hasSize(2);
        for (Sweeps.Capacity c : o.capacities()) {
            assertThat(c.capacity()).isBetween(5.0, 400.0);
            double lowestFailing = Double.POSITIVE_INFINITY;
            boolean capacityPassed = false;
            for (PointResult r : o.results()) {
                if (r.deployment() != c.deployment()) {
                    continue;
                }
                String last = r.overrides().get(r.overrides().size() - 1);
                double rate = Double.parseDouble(last.substring(last.indexOf('=') + 1));
                if (r.sloPass() && rate == c.capacity()) {
                    capacityPassed = true;
                }
                if (!r.sloPass()) {
                    lowestFailing = Math.min(lowestFailing, rate);
                }
            }
            assertThat(capacityPassed).isTrue();
            assertThat(lowestFailing).isGreaterThan(c.capacity());
            assertThat(lowestFailing - c.capacity()).isLessThanOrEqualTo((400 - 5) / 32.0 + 1e-9); // 5 halvings
        }
        assertThat(o.capacities().get(1).capacity())
                .isGreaterThan(o.capacities().get(0).capacity()); // 2 > 1 worker
    }

    @Test
    void paretoBestAndBestYaml_areConsistent_andBestYamlReplays() throws IOException {
        SweepSpec s = spec("""
                space:
                  cluster.workers: [1, 2, 4]
                slo: {ttft_p90_ms: 100000}
                objective: throughput_per_gpu
                """);
        Sweeps.Outcome o;
        try (SweepEngine e = new LocalEngine(2, (d, t) -> {})) {
            o = Sweeps.run(s, e, false);
        }
        Files.writeString(tmp.resolve("capacity.csv"), "an earlier bisect sweep's capacities\n");
        SweepOutput.writeAll(s, o, tmp);
        assertThat(tmp.resolve("capacity.csv")).doesNotExist(); // a grid sweep has none: no stale file beside it
        PointResult best = SweepOutput.best(s, o.results());
        for (PointResult r : o.results()) {
            assertThat(best.objective()).isGreaterThanOrEqualTo(r.objective());
        }
        List<PointResult> front = SweepOutput.pareto(s, o.results());
        assertThat(front).isNotEmpty();
        for (PointResult a : front) {
            for (PointResult b : o.results()) {
                boolean dominates = b.ttftP90Ms() <= a.ttftP90Ms()
                        && b.throughputPerGpu() >= a.throughputPerGpu()
                        && (b.ttftP90Ms() < a.ttftP90Ms() || b.throughputPerGpu() > a.throughputPerGpu());
                assertThat(dominates).isFalse();
            }
        }
        var cfg = ConfigLoader.load(tmp.resolve("best.yaml"), List.of());
        assertThat(cfg.cluster().workers())
                .isEqualTo(Integer.parseInt(best.overrides().get(2).substring("cluster.workers=".length())));
        assertThat(Files.readString(tmp.resolve("results.csv"))).startsWith("point_id,deployment,cluster.workers,gpus");
    }

    @Test
    void badSpecs_failNamingTheKey() throws IOException {
        assertThatThrownBy(() -> spec("serach: {type: grid}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("serach: unknown key");
        assertThatThrownBy(() -> spec("slo: {ttft_p80_ms: 3}\n"))
                .hasMessageStartingWith("slo.ttft_p80_ms: unknown SLO");
        assertThatThrownBy(() -> spec("search: {type: bisect, low: 1, high: 9, iterations: 3}\n"))
                .hasMessageStartingWith("slo: bisect");
        assertThatThrownBy(() -> spec("objective: fastest\n")).hasMessageContaining("unknown objective 'fastest'");
        SweepSpec typo = spec("space:\n  cluster.wrokers: [1, 2]\n");
        try (SweepEngine e = new LocalEngine(1, (d, t) -> {})) {
            assertThatThrownBy(() -> Sweeps.run(typo, e, false))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("wrokers")
                    .hasMessageContaining("sweep point 0");
        }
    }
}
