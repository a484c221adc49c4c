package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.report.Summaries;
import io.servesim.report.Summary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A heterogeneous fleet ({@code cluster.pools}): each pool's workers step at its own timing with its own engine
 * settings, merged over the top-level sections, and the summary reports every pool.
 */
class HeterogeneousPoolsTest {
    private static final long MS = 1_000_000L;

    /** Two pools of one worker: fixed timing, prefill 20 ms and decode 10 ms on "fast", both doubled on "slow". */
    private static final String TWO_POOLS = """
            workload:
              type: synthetic
              synthetic:
                requests: 2
                input_tokens: {type: fixed, value: 10}
                output_tokens: {type: fixed, value: 3}
              arrival: {type: constant, rate: 1}
            engine:
              scheduler: {async_scheduling: false}
            timing:
              type: fixed
              fixed: {prefill_ms: 20, decode_ms: 10}
            cluster:
              router: {policy: round_robin}
              pools:
                - name: fast
                  workers: 1
                - name: slow
                  workers: 1
                  timing: {fixed: {prefill_ms: 40, decode_ms: 20}}
                  engine: {scheduler: {max_num_seqs: 8}}
            """;

    private static SimConfig load(String yaml, String... sets) {
        return ConfigLoader.fromYaml(yaml, "pools.yaml", List.of(sets));
    }

    @Test
    void eachPoolStepsAtItsOwnTiming_andTheSummaryReportsEveryPool() {
        // round robin: request 0 (t = 0) on worker 0 of "fast", request 1 (t = 1 s) on worker 1 of "slow"; each runs
        // alone in the synchronous loop: prefill step, then two decode steps
        RunResult r = Simulation.run(load(TWO_POOLS));
        RequestLog log = r.log();
        int[] byId = log.indicesByRequestId();
        int a = byId[0];
        int b = byId[1];
        assertThat(log.worker(a)).isZero();
        assertThat(log.worker(b)).isEqualTo(1);
        assertThat(log.firstTokenNanos(a) - log.arrivalNanos(a)).isEqualTo(20 * MS);
        assertThat(log.lastTokenNanos(a) - log.arrivalNanos(a)).isEqualTo(40 * MS);
        assertThat(log.firstTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(40 * MS);
        assertThat(log.lastTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(80 * MS);

        Summary s = Summaries.of(r);
        assertThat(s.pools()).extracting(Summary.Pool::name).containsExactly("fast", "slow");
        Summary.Pool fast = s.pools().get(0);
        Summary.Pool slow = s.pools().get(1);
        assertThat(fast.firstWorker()).isZero();
        assertThat(slow.firstWorker()).isEqualTo(1);
        assertThat(fast.requestsRouted()).isEqualTo(1);
        assertThat(slow.completed()).isEqualTo(1);
        assertThat(fast.ttftMs().mean()).isEqualTo(20.0);
        assertThat(fast.tpotMs().mean()).isEqualTo(10.0);
        assertThat(slow.ttftMs().mean()).isEqualTo(40.0);
        assertThat(slow.tpotMs().mean()).isEqualTo(20.0);
        assertThat(slow.e2eMs().mean()).isEqualTo(80.0);
        assertThat(s.ttftMs().mean()).isEqualTo(30.0); // the fleet: both requests
        assertThat(s.completed()).isEqualTo(fast.completed() + slow.completed());
    }

    @Test
    void requestsCsv_endsInThePoolOfEachRequestsWorker_keptOrStreamed(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        java.io.StringWriter kept = new java.io.StringWriter();
        io.servesim.report.ReportWriter.writeRequestsCsv(
                Simulation.run(load(TWO_POOLS)).log(), kept);
        List<String> lines = kept.toString().lines().toList();
        assertThat(lines.get(0)).startsWith("request_id,").endsWith(",restarts,pool");
        assertThat(lines.get(1)).startsWith("0,,0,0,").endsWith(",fast"); // request 0 on worker 0
        assertThat(lines.get(2)).startsWith("1,,0,1,").endsWith(",slow");
        assertThat(lines).hasSize(3);

        Path zst = dir.resolve("requests.csv.zst");
        new Simulation(load(TWO_POOLS, "output.stream_requests=true"))
                .streamRequestsTo(zst)
                .run();
        try (java.io.InputStream in = new com.github.luben.zstd.ZstdInputStream(Files.newInputStream(zst))) {
            assertThat(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
                    .isEqualTo(kept.toString());
        }

        java.io.StringWriter uniform = new java.io.StringWriter();
        io.servesim.report.ReportWriter.writeRequestsCsv(
                Simulation.run(load(TWO_POOLS.replaceAll("(?s)  pools:.*", "  workers: 2\n")))
                        .log(),
                uniform);
        assertThat(uniform.toString().lines().findFirst().orElseThrow()).endsWith(",restarts"); // no pools: no column
    }

    @Test
    void aPoolNamesOnlyWhatDiffers_theRestIsTheTopLevelSections_andWorkersIsTheSum() {
        SimConfig c = load(TWO_POOLS);
        assertThat(c.cluster().workers()).isEqualTo(2);
        assertThat(c.cluster().pools().get(0).timing()).isEqualTo(c.timing()); // nothing overridden
        assertThat(c.cluster().pools().get(0).engine()).isEqualTo(c.engine());
        assertThat(c.cluster().pools().get(1).timing().fixed().decodeMs()).isEqualTo(20.0);
        assertThat(c.cluster().pools().get(1).timing().fixed().prefillMs()).isEqualTo(40.0);
        assertThat(c.cluster().pools().get(1).engine().scheduler().maxNumSeqs()).isEqualTo(8);
        assertThat(c.cluster().pools().get(1).engine().scheduler().asyncScheduling())
                .isFalse(); // from the top level
        assertThat(c.cluster().poolOf(0)).isZero();
        assertThat(c.cluster().poolOf(1)).isEqualTo(1);
        // a written config (the expanded pools, workers = their sum) loads back to the same config
        SimConfig again = load(ConfigLoader.toYaml(c));
        assertThat(again).isEqualTo(c);
        // --set reaches a pool by index (a sweep axis over one pool's size or GPU), and is checked like any key
        SimConfig bigger = load(TWO_POOLS, "cluster.pools[1].workers=3", "cluster.pools[0].timing.fixed.decode_ms=7");
        assertThat(bigger.cluster().workers()).isEqualTo(4);
        assertThat(bigger.cluster().pools().get(1).workers()).isEqualTo(3);
        assertThat(bigger.cluster().pools().get(0).timing().fixed().decodeMs()).isEqualTo(7.0);
        assertThatThrownBy(() -> load(TWO_POOLS, "cluster.pools[2].workers=1"))
                .hasMessageContaining("cluster.pools[2]: the list has 2 element(s); index 2 is past its end");
        assertThatThrownBy(() -> load(TWO_POOLS, "cluster.pools[x].workers=1"))
                .hasMessageContaining("expected key[index] with a non-negative whole index");
        assertThatThrownBy(() -> load(TWO_POOLS, "cluster.router[0]=1")).hasMessageContaining("is not a list here");
        // a --set on the top level reaches every pool that does not override the key
        SimConfig set = load(TWO_POOLS, "timing.fixed.decode_ms=5");
        assertThat(set.cluster().pools().get(0).timing().fixed().decodeMs()).isEqualTo(5.0);
        assertThat(set.cluster().pools().get(1).timing().fixed().decodeMs()).isEqualTo(20.0);
    }

    @Test
    void eachPoolDerivesItsOwnKvCapacity_fromItsGpu() {
        SimConfig c = load("""
                timing: {model: llama-3.1-8b, gpu: h100-sxm}
                cluster:
                  pools:
                    - {name: h100, workers: 2}
                    - {name: l40s, workers: 1, timing: {gpu: l40s}}
                """);
        List<io.servesim.timing.Deployment> d = Simulation.deployments(c);
        assertThat(d).hasSize(2);
        assertThat(d.get(0).gpu().name()).isEqualTo("h100-sxm");
        assertThat(d.get(1).gpu().name()).isEqualTo("l40s");
        assertThat(d.get(1).numGpuBlocks()).isLessThan(d.get(0).numGpuBlocks()); // 48 GB against 80
    }

    @Test
    void poolsThatCannotShareAFleet_areConfigErrorsNamingTheKey() {
        List<String[]> cases = new ArrayList<>();
        cases.add(new String[] {
            "cluster: {workers: 3, pools: [{name: a, workers: 1}, {name: b, workers: 1}]}",
            "cluster.workers: is 3 but cluster.pools hold 2 workers"
        });
        cases.add(new String[] {
            "cluster: {pools: [{name: a, workers: 1}, {name: a, workers: 1}]}",
            "cluster.pools[1].name: 'a' names two pools"
        });
        cases.add(new String[] {
            "cluster: {pools: [{name: a, workers: 1, engine: {kvcr: {enabled: true}}}]}", "cluster.pools[0].engine.kvcr"
        });
        cases.add(new String[] {
            "cluster: {pools: [{name: a, workers: 1, engine: {kv_cache: {block_size: 32}}}, {name: b, workers: 1}]}",
            "cluster.pools[1].engine.kv_cache.block_size: is 16 but pool 'a' uses 32"
        });
        cases.add(new String[] {
            "cluster: {pools: [{name: a, workers: 1, timing: 3}]}",
            "cluster.pools[0].timing: expected a mapping of the keys that differ"
        });
        cases.add(new String[] {"cluster: {pools: [{name: a, workers: 1, timing: {gpuu: h100-sxm}}]}", "gpuu"});
        cases.add(new String[] {"cluster: {pools: [{name: a, workers: 0}]}", "workers"});
        for (String[] c : cases) {
            assertThatThrownBy(() -> load(c[0]))
                    .as(c[0])
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining(c[1]);
        }
        // pools of two models: found when their models are resolved, naming the pool's key
        SimConfig twoModels = load("""
                timing: {model: llama-3.1-8b, gpu: h100-sxm}
                cluster: {pools: [{name: a, workers: 1}, {name: b, workers: 1, timing: {model: qwen3-32b}}]}
                """);
        assertThatThrownBy(() -> Simulation.deployments(twoModels))
                .isInstanceOf(ConfigException.class)
                .hasMessage("cluster.pools[1].timing.model: is qwen3-32b but pool 'a' serves llama-3.1-8b; every pool"
                        + " serves the same model");
        // a preset and an FP8 release of it, named by its Hugging Face id, are one model
        SimConfig fp8Pool = load("""
                timing: {model: llama-3.1-8b, gpu: h100-sxm}
                cluster:
                  pools:
                    - {name: bf16, workers: 1}
                    - {name: fp8, workers: 1, timing: {model: RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic}}
                """);
        List<io.servesim.timing.Deployment> both = Simulation.deployments(fp8Pool);
        assertThat(both.get(1).model().weightDtype(io.servesim.config.TimingConfig.Dtype.BF16))
                .isEqualTo(io.servesim.config.TimingConfig.Dtype.FP8);
        assertThat(both.get(1).numGpuBlocks()).isGreaterThan(both.get(0).numGpuBlocks()); // 8 GB of weights, not 16
        // a pool whose own GPU cannot hold the model: the deployment error names the pool's key
        SimConfig tooSmall = load("""
                timing: {model: llama-3.1-70b, gpu: h100-sxm, tensor_parallel: 4}
                cluster: {pools: [{name: ok, workers: 1}, {name: small, workers: 1, timing: {tensor_parallel: 1}}]}
                """);
        assertThatThrownBy(() -> Simulation.deployments(tooSmall))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.pools[1].");
    }

    @Test
    void aFleetWithoutPools_writesNoPoolsKey_soEarlierConfigsAndDigestsAreUnchanged() {
        SimConfig c = load("{}");
        assertThat(c.cluster().pools()).isEmpty();
        assertThat(ConfigLoader.toYaml(c)).doesNotContain("pools");
        assertThat(Summaries.of(Simulation.run(load("workload: {synthetic: {requests: 3}}")))
                        .pools())
                .isEmpty();
    }

    @Test
    void aPoolMayRunItsOwnEngineKind_withThatEnginesDefaults() {
        // pool "slow" runs TensorRT-LLM: it gets engine.trtllm's defaults and the synchronous loop; each request runs
        // alone, so both engines take the same steps here
        SimConfig c = load(TWO_POOLS.replace("engine: {scheduler: {max_num_seqs: 8}}", "engine: {kind: trtllm}"));
        assertThat(c.cluster().pools().get(0).engine().kind()).isEqualTo(io.servesim.config.EngineKind.VLLM);
        assertThat(c.cluster().pools().get(0).engine().trtllm()).isNull();
        assertThat(c.cluster().pools().get(1).engine().kind()).isEqualTo(io.servesim.config.EngineKind.TRTLLM);
        assertThat(c.cluster().pools().get(1).engine().trtllm().maxBatchSize()).isEqualTo(2048);
        assertThat(c.cluster().pools().get(1).engine().scheduler().asyncScheduling())
                .isFalse();
        assertThat(ConfigLoader.fromYaml(ConfigLoader.toYaml(c), "again.yaml", List.of()))
                .isEqualTo(c);
        RunResult r = Simulation.run(c);
        RequestLog log = r.log();
        int b = log.indicesByRequestId()[1];
        assertThat(log.worker(b)).isEqualTo(1);
        assertThat(log.firstTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(40 * MS);
        assertThat(log.lastTokenNanos(b) - log.arrivalNanos(b)).isEqualTo(80 * MS);
        assertThatThrownBy(() -> load(TWO_POOLS.replace(
                        "engine: {scheduler: {max_num_seqs: 8}}", "engine: {trtllm: {max_batch_size: 4}}")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.pools[1].engine.trtllm");
    }
}
