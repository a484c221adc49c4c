package io.servesim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

class ConfigLoaderTest {
    private static SimConfig load(String yaml, String... overrides) {
        return ConfigLoader.fromYaml(yaml, "test.yaml", List.of(overrides));
    }

    // ---- defaults ------------------------------------------------------------------------------------------

    @Test
    void engineLoop_isVllmsDefaultForTheStatedVersion_asyncFrom0_14_perPool_unlessStated() {
        // vllm-project/vllm#27614 turned async scheduling on by default in v0.14.0
        assertThat(load("").engine().scheduler().asyncScheduling()).isTrue(); // no version: today's default
        assertThat(load("", "timing.vllm_version=0.13.2").engine().scheduler().asyncScheduling())
                .isFalse();
        assertThat(load("", "timing.vllm_version=v0.14.0rc1")
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .isTrue();
        assertThat(load("", "timing.vllm_version=0.12", "engine.scheduler.async_scheduling=true")
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .isTrue(); // stated wins
        // SGLang's overlap scheduler does not follow vLLM's version
        assertThat(load("", "timing.vllm_version=0.12", "engine.kind=sglang")
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .isTrue();
        // each pool with its own timing's version, over the top-level one
        SimConfig pools = load("""
                timing: {vllm_version: "0.12.0"}
                cluster:
                  pools:
                    - {name: old, workers: 1}
                    - {name: new, workers: 1, timing: {vllm_version: "0.19.0"}}
                    - {name: forced, workers: 1, engine: {scheduler: {async_scheduling: true}}}
                """);
        assertThat(pools.engine().scheduler().asyncScheduling()).isFalse();
        assertThat(pools.cluster().pools().stream()
                        .map(p -> p.engine().scheduler().asyncScheduling())
                        .toList())
                .containsExactly(false, true, true);
        // the full-sequence admission gate resolves per pool the same way (from v0.19.0)
        assertThat(pools.cluster().pools().stream()
                        .map(p -> p.engine().scheduler().reserveFullIsl())
                        .toList())
                .containsExactly(false, true, false);
    }

    @Test
    void fullSequenceAdmission_isVllmsDefaultForTheStatedVersion_from0_19_perPool_unlessStated_vllmOnly() {
        // vllm-project/vllm#37307 (scheduler_reserve_full_isl, default True) landed after v0.18.0 branched
        java.util.function.Function<String[], Boolean> gate =
                sets -> load("", sets).engine().scheduler().reserveFullIsl();
        assertThat(gate.apply(new String[0])).isTrue(); // no version: today's default
        assertThat(gate.apply(new String[] {"timing.vllm_version=0.18.1"})).isFalse();
        assertThat(gate.apply(new String[] {"timing.vllm_version=0.19.0"})).isTrue();
        assertThat(gate.apply(new String[] {"timing.vllm_version=0.12", "engine.scheduler.reserve_full_isl=true"}))
                .isTrue(); // stated wins
        // each pool with its own timing's version: checked with the engine loop's pools above
        // SGLang and TensorRT-LLM admit by their own rules: off, and asking for vLLM's gate is an error
        assertThat(gate.apply(new String[] {"engine.kind=sglang"})).isFalse();
        assertThatThrownBy(() -> load("", "engine.kind=trtllm", "engine.scheduler.reserve_full_isl=true"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.scheduler.reserve_full_isl")
                .hasMessageContaining("engine.kind: vllm");
    }

    @Test
    void emptyYaml_givesTheReferenceDefaults() {
        SimConfig c = load("");

        assertThat(c.engine().kvCache().blockSize()).isEqualTo(16);
        assertThat(c.engine().kvCache().numGpuBlocks()).isNull(); // derived, or 27,500 without model and GPU
        assertThat(io.servesim.timing.Deployment.resolve(c).numGpuBlocks()).isEqualTo(27500);
        assertThat(c.engine().kvCache().prefixCaching()).isTrue();
        // batch limits: vLLM's defaults for timing.gpu, resolved with the deployment (no GPU: the H100's)
        assertThat(c.engine().scheduler().maxNumSeqs()).isNull();
        assertThat(c.engine().scheduler().maxNumBatchedTokens()).isNull();
        assertThat(io.servesim.timing.Deployment.resolve(c).maxNumSeqs()).isEqualTo(1024);
        assertThat(io.servesim.timing.Deployment.resolve(c).maxNumBatchedTokens())
                .isEqualTo(8192);
        assertThat(c.engine().scheduler().policy()).isEqualTo(SchedulerConfig.Policy.FCFS);
        assertThat(c.engine().maxModelLen()).isNull();
        assertThat(c.workload().seed()).isEqualTo(42L);
        assertThat(c.workload().type()).isEqualTo(WorkloadType.SYNTHETIC);
        assertThat(c.workload().synthetic().requests()).isEqualTo(1000L);
        assertThat(c.workload().synthetic().inputTokens()).isEqualTo(DistributionConfig.fixed(1024));
        assertThat(c.workload().arrival().type()).isEqualTo(ArrivalConfig.Type.POISSON);
        assertThat(c.workload().arrival().rate()).isEqualTo(10.0);
        assertThat(c.cluster().workers()).isEqualTo(1);
        assertThat(c.cluster().router().policy()).isEqualTo(RouterPolicy.ROUND_ROBIN);
        assertThat(c.timing().type()).isEqualTo(TimingType.AUTO);
        assertThat(c.timing().effectiveType()).isEqualTo(TimingType.FIXED); // no model and GPU named
        assertThat(c.timing().fixed().prefillMs()).isEqualTo(20.0);
        assertThat(c.output().requestsCsv()).isTrue();
    }

    @Test
    void commentOnlyYaml_isTheSameAsEmptyYaml() {
        assertThat(load("# nothing here\n")).isEqualTo(load(""));
    }

    @Test
    void defaultMaxModelLen_isWhatOneRanksKvPoolHolds() {
        assertThat(load("").engine().effectiveMaxModelLen()).isEqualTo((27500 - 1) * 16);
    }

    /**
     * vLLM's API-server batch limits follow the GPU ({@code EngineArgs.get_batch_defaults}): 1024 sequences and 8192
     * tokens on GPUs with at least 70 GiB that are not A100s, 256 and 2048 elsewhere; a stated value wins.
     */
    @Test
    void batchLimits_areVllmsDefaultsForTheGpu_unlessStated() {
        java.util.function.Function<String[], io.servesim.timing.Deployment> d =
                sets -> io.servesim.timing.Deployment.resolve(load("", sets));
        for (String gpu : List.of("h100-sxm", "h200-sxm", "b200", "rtx-pro-6000")) {
            io.servesim.timing.Deployment large = d.apply(new String[] {"timing.gpu=" + gpu});
            assertThat(List.of(large.maxNumSeqs(), large.maxNumBatchedTokens()))
                    .as(gpu)
                    .containsExactly(1024, 8192);
        }
        for (String gpu : List.of("a100-sxm-80gb", "l40s", "rtx-4090")) {
            io.servesim.timing.Deployment small = d.apply(new String[] {"timing.gpu=" + gpu});
            assertThat(List.of(small.maxNumSeqs(), small.maxNumBatchedTokens()))
                    .as(gpu)
                    .containsExactly(256, 2048);
        }
        io.servesim.timing.Deployment stated =
                d.apply(new String[] {"timing.gpu=l40s", "engine.scheduler.max_num_batched_tokens=4096"});
        assertThat(List.of(stated.maxNumSeqs(), stated.maxNumBatchedTokens())).containsExactly(256, 4096);
    }

    @Test
    void userValues_mergeKeyByKeyOverTheDefaults() {
        SimConfig c = load("engine:\n  scheduler:\n    max_num_seqs: 64\n");

        assertThat(c.engine().scheduler().maxNumSeqs()).isEqualTo(64);
        assertThat(c.engine().scheduler().maxNumBatchedTokens()).isNull(); // the default, resolved per GPU
        assertThat(c.engine().scheduler().longPrefillTokenThreshold()).isZero();
        assertThat(c.engine().kvCache().blockSize()).isEqualTo(16);
    }

    @Test
    void nonMappingTopLevel_isRejectedNamingTheSource() {
        assertThatThrownBy(() -> load("- a\n- b\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("test.yaml")
                .hasMessageContaining("mapping");
    }

    // ---- unknown keys --------------------------------------------------------------------------------------

    @Test
    void kneeExponent_outsideOneToAThousand_isRefusedNamingTheKey() {
        for (String bad : List.of("0.5", "-3", "1001", ".nan")) {
            assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.roofline.knee_exponent=" + bad)))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("timing.roofline.knee_exponent: must be");
        }
        assertThat(ConfigLoader.fromYaml("", "t", List.of("timing.roofline.knee_exponent=1"))
                        .timing()
                        .roofline()
                        .kneeExponent())
                .isEqualTo(1.0);
    }

    @Test
    void anEmptyKey_isNamed_notAnAnonymousUnknownKey() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("\"\": 1\n", "t.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("(top level): empty key '' (allowed: cluster, engine");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("engine:\n  \"\": 1\n", "t.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine")
                .hasMessageContaining("empty key ''");
    }

    @Test
    void unknownTopLevelKey_isRejectedWithItsPathAndTheAllowedKeys() {
        assertThatThrownBy(() -> load("clustr:\n  workers: 2\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("clustr: unknown key")
                .hasMessageContaining("cluster")
                .hasMessageContaining("workload")
                .hasMessageContaining("engine")
                .satisfies(e -> assertThat(((ConfigException) e).path()).isEqualTo("clustr"));
    }

    @Test
    void unknownKey_isRejectedWithItsPathAndTheAllowedKeys() {
        assertThatThrownBy(() -> load("engine:\n  scheduler:\n    max_num_seq: 8\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.scheduler.max_num_seq")
                .hasMessageContaining("unknown key")
                .hasMessageContaining("max_num_seqs")
                .hasMessageContaining("max_num_batched_tokens")
                .satisfies(e -> assertThat(((ConfigException) e).path()).isEqualTo("engine.scheduler.max_num_seq"));
    }

    @Test
    void unknownKeyInsideADistribution_isRejectedWithItsFullPath() {
        assertThatThrownBy(() -> load("workload:\n  synthetic:\n    input_tokens: {type: fixed, valu: 3}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("workload.synthetic.input_tokens.valu")
                .hasMessageContaining("value");
    }

    // ---- wrong types ---------------------------------------------------------------------------------------

    @Test
    void wrongType_namesTheFullPath() {
        assertThatThrownBy(() -> load("cluster: {workers: abc}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.workers: ")
                .hasMessageContaining("abc");
    }

    @Test
    void fractionalNumberForAnInteger_isRejectedNamingThePath() {
        assertThatThrownBy(() -> load("engine:\n  scheduler:\n    max_num_seqs: 1.5\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.scheduler.max_num_seqs");
    }

    @Test
    void scalarWhereASectionIsExpected_isRejectedNamingThePath() {
        assertThatThrownBy(() -> load("engine:\n  kv_cache: 5\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kv_cache");
    }

    @Test
    void nullForARequiredPrimitive_isRejectedNamingThePath() {
        assertThatThrownBy(() -> load("cluster:\n  workers: null\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.workers");
    }

    @Test
    void wrongTypeInsideADistribution_namesTheFullPath() {
        assertThatThrownBy(() -> load("workload: {synthetic: {input_tokens: {type: fixed, value: abc}}}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.synthetic.input_tokens.value: ");
    }

    @Test
    void integerOutOfRange_isRejectedNamingThePath() {
        assertThatThrownBy(() -> load("cluster: {workers: 99999999999}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.workers: ")
                .hasMessageContaining("out of range");
    }

    // ---- value validation ----------------------------------------------------------------------------------

    @Test
    void negativeArrivalRate_isRejectedNamingTheFullPath() {
        assertThatThrownBy(() -> load("workload:\n  arrival: {rate: -1.0}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.arrival.rate: ")
                .hasMessageContaining("-1.0")
                .satisfies(e -> assertThat(((ConfigException) e).path()).isEqualTo("workload.arrival.rate"));
    }

    @Test
    void clientFrontend_isOffByDefault_notEchoed_andTakesItsTwoTerms() {
        SimConfig none = load("");
        assertThat(none.output().clientFrontend()).isNull();
        assertThat(ConfigLoader.toTree(none).path("output").has("client_frontend"))
                .as("an unset view leaves the echoed config (and every pinned digest) as it was")
                .isFalse();
        SimConfig set = load("output:\n  client_frontend: {overhead_ms: 6, per_request_us: 66.5}\n");
        assertThat(set.output().clientFrontend()).isEqualTo(new ClientFrontend(6, 66.5));
        assertThat(load("", "output.client_frontend.overhead_ms=4").output().clientFrontend())
                .as("a term left out is zero")
                .isEqualTo(ClientFrontend.constant(4));
    }

    @Test
    void clientFrontend_badValues_areRejectedNamingTheFullPath() {
        assertThatThrownBy(() -> load("", "output.client_frontend.per_request_us=-1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("output.client_frontend.per_request_us: ")
                .hasMessageContaining(">= 0");
        assertThatThrownBy(() -> load("", "output.client_frontend.overhead=1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("output.client_frontend.overhead: ")
                .hasMessageContaining("overhead_ms");
        assertThatThrownBy(() -> load("", "output.client_frontend.overhead_ms=1", "output.stream_requests=true"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("output.client_frontend: ")
                .hasMessageContaining("stream_requests: false");
        assertThatThrownBy(() -> load(
                        "",
                        "output.client_frontend.overhead_ms=1",
                        "cluster.mode=disaggregated",
                        "cluster.prefill={workers: 1}",
                        "cluster.decode={workers: 1}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("output.client_frontend: ")
                .hasMessageContaining("aggregated");
    }

    @Test
    void zeroWorkers_isRejectedNamingTheFullPath() {
        assertThatThrownBy(() -> load("cluster: {workers: 0}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.workers: ")
                .hasMessageContaining(">= 1");
    }

    @Test
    void blockSizeVllmDoesNotAccept_isRejectedNamingTheFullPathAndTheAllowedSizes() {
        assertThatThrownBy(() -> load("engine:\n  kv_cache: {block_size: 10}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.kv_cache.block_size: ")
                .hasMessageContaining("16")
                .hasMessageContaining("got 10");
    }

    @Test
    void unknownEnumValue_isRejectedNamingTheFullPathAndTheChoices() {
        assertThatThrownBy(() -> load("workload:\n  arrival: {type: bursty}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.arrival.type: ")
                .hasMessageContaining("bursty")
                .hasMessageContaining("poisson, constant, concurrency");
    }

    @Test
    void concurrencyArrival_requiresItsConcurrencyNamingTheFullPath() {
        assertThatThrownBy(() -> load("workload:\n  arrival: {type: concurrency}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.arrival.concurrency: ")
                .hasMessageContaining("required");
    }

    @Test
    void validationErrorDeepInSessions_namesTheFullPath() {
        assertThatThrownBy(() -> load("workload:\n  sessions:\n    turns: 0\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.sessions.turns: ");
    }

    @Test
    void missingRequiredDistributionParameter_namesItsFullPath() {
        assertThatThrownBy(() -> load("workload:\n  synthetic:\n    input_tokens: {type: uniform, min: 3}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.synthetic.input_tokens.max: ")
                .hasMessageContaining("required");
    }

    @Test
    void uniformWithMaxBelowMin_isRejectedNamingMax() {
        assertThatThrownBy(() -> load("workload:\n  synthetic:\n    output_tokens: {type: uniform, min: 9, max: 3}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.synthetic.output_tokens.max: ");
    }

    @Test
    void switchingDistributionType_replacesTheDefaultObjectWholesale() {
        SimConfig c = load("workload:\n  synthetic:\n    input_tokens: {type: uniform, min: 3, max: 9}\n");

        DistributionConfig d = c.workload().synthetic().inputTokens();
        assertThat(d.type()).isEqualTo(DistributionConfig.Type.UNIFORM);
        assertThat(d.min()).isEqualTo(3.0);
        assertThat(d.max()).isEqualTo(9.0);
        assertThat(d.value())
                .as("the fixed default's value must not leak into uniform")
                .isNull();
    }

    @Test
    void sameDistributionType_mergesKeyByKey() {
        SimConfig c = load("workload:\n  synthetic:\n    input_tokens: {max: 2000}\n");

        DistributionConfig d = c.workload().synthetic().inputTokens();
        assertThat(d.type()).isEqualTo(DistributionConfig.Type.FIXED);
        assertThat(d.value()).isEqualTo(1024.0);
        assertThat(d.max()).isEqualTo(2000.0);
    }

    @Test
    void maxModelLenLargerThanTheKvPool_isRejectedNamingEngineMaxModelLen() {
        // (num_gpu_blocks - 1) * block_size = (10 - 1) * 16 = 144
        String yaml = "engine:\n  max_model_len: 145\n  kv_cache: {num_gpu_blocks: 10, block_size: 16}\n";

        assertThatThrownBy(() -> load(yaml))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.max_model_len: ")
                .hasMessageContaining("144");
    }

    @Test
    void maxModelLenExactlyTheKvPool_isAccepted() {
        SimConfig c = load("engine:\n  max_model_len: 144\n  kv_cache: {num_gpu_blocks: 10, block_size: 16}\n");

        assertThat(c.engine().effectiveMaxModelLen()).isEqualTo(144);
    }

    // ---- --set overrides -----------------------------------------------------------------------------------

    @Test
    void setOverride_replacesAUserValue() {
        SimConfig c = load("cluster: {workers: 3}\n", "cluster.workers=5");

        assertThat(c.cluster().workers()).isEqualTo(5);
    }

    @Test
    void setOverrides_applyInOrderSoTheLaterWins() {
        SimConfig c = load("", "cluster.workers=2", "engine.scheduler.max_num_seqs=7", "cluster.workers=9");

        assertThat(c.cluster().workers()).isEqualTo(9);
        assertThat(c.engine().scheduler().maxNumSeqs()).isEqualTo(7);
    }

    @Test
    void setOverride_withUnknownLeafKey_namesThePathAndTheAllowedKeys() {
        assertThatThrownBy(() -> load("", "engine.scheduler.max_num_seq=8"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.scheduler.max_num_seq: unknown key")
                .hasMessageContaining("max_num_seqs");
    }

    @Test
    void setOverride_withUnknownSection_namesThePathUpToTheUnknownKey() {
        assertThatThrownBy(() -> load("", "engine.schedular.max_num_seqs=8"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.schedular: unknown key")
                .hasMessageContaining("scheduler");
    }

    @Test
    void setOverride_throughAScalar_isRejected() {
        assertThatThrownBy(() -> load("", "cluster.workers.count=3"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster.workers")
                .hasMessageContaining("not a section");
    }

    @Test
    void setOverride_withoutEquals_isRejected() {
        assertThatThrownBy(() -> load("", "cluster.workers"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("path=value");
    }

    @Test
    void setOverride_withFlowYamlObject_switchesTheDistribution() {
        SimConfig c = load("", "workload.synthetic.output_tokens={type: uniform, min: 4, max: 40}");

        DistributionConfig d = c.workload().synthetic().outputTokens();
        assertThat(d.type()).isEqualTo(DistributionConfig.Type.UNIFORM);
        assertThat(d.min()).isEqualTo(4.0);
        assertThat(d.max()).isEqualTo(40.0);
        assertThat(d.value()).isNull();
    }

    @Test
    void setOverride_withFlowYamlObject_mergesIntoASection() {
        SimConfig c = load("", "engine.kv_cache={block_size: 32, num_gpu_blocks: 100}");

        assertThat(c.engine().kvCache().blockSize()).isEqualTo(32);
        assertThat(c.engine().kvCache().numGpuBlocks()).isEqualTo(100);
        assertThat(c.engine().kvCache().prefixCaching()).isTrue();
    }

    @Test
    void setOverride_withInvalidValue_isValidatedLikeTheFile() {
        assertThatThrownBy(() -> load("", "workload.arrival.rate=-3"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.arrival.rate: ");
    }

    @Test
    void setOverride_withMalformedYamlValue_namesThePath() {
        assertThatThrownBy(() -> load("", "cluster.workers=[1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.workers: ")
                .hasMessageContaining("not valid YAML");
    }

    @Test
    void setOverride_switchingOnlyTheType_requiresTheNewTypesParameters() {
        assertThatThrownBy(() -> load("", "workload.synthetic.input_tokens.type=uniform"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.synthetic.input_tokens.min: ")
                .hasMessageContaining("required");
    }

    @Test
    void setOverride_withUnknownKeyInsideAFlowObject_namesItsFullPath() {
        assertThatThrownBy(() -> load("", "engine={kv_cache: {bogus: 1}}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.kv_cache.bogus: unknown key")
                .hasMessageContaining("num_gpu_blocks");
    }

    @Test
    void setOverride_withNull_clearsANullableValue() {
        SimConfig c = load("engine: {max_model_len: 100}\n", "engine.max_model_len=null");

        assertThat(c.engine().maxModelLen()).isNull();
    }

    // ---- malformed YAML and files --------------------------------------------------------------------------

    @Test
    void malformedYaml_reportsTheSourceNameAndALineNumber() {
        String yaml = "cluster:\n  workers: 2\nengine:\n  scheduler: [unclosed\n  kv_cache: {}\n";

        assertThatThrownBy(() -> ConfigLoader.fromYaml(yaml, "broken.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageMatching("(?s)broken\\.yaml:\\d+: malformed YAML.*");
    }

    @Test
    void malformedYamlOnALaterLine_reportsThatLine() {
        String yaml = "a: 1\nb: 2\nc: 3\nd: [1, 2\n";

        assertThatThrownBy(() -> ConfigLoader.fromYaml(yaml, "x.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> {
                    String msg = e.getMessage();
                    assertThat(msg).startsWith("x.yaml:");
                    int line = Integer.parseInt(msg.substring("x.yaml:".length(), msg.indexOf(':', 7)));
                    assertThat(line).isGreaterThanOrEqualTo(4);
                });
    }

    @Test
    void missingFile_isAConfigException(@TempDir Path dir) {
        Path missing = dir.resolve("nope.yaml");

        assertThatThrownBy(() -> ConfigLoader.load(missing, List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("not found")
                .hasMessageContaining("nope.yaml");
    }

    @Test
    void loadFromFile_appliesOverrides(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("c.yaml");
        Files.writeString(f, "cluster: {workers: 3}\n");

        SimConfig c = ConfigLoader.load(f, List.of("cluster.attention_dp=2"));

        assertThat(c.cluster().workers()).isEqualTo(3);
        assertThat(c.cluster().attentionDp()).isEqualTo(2);
    }

    // ---- tree / YAML round trips ---------------------------------------------------------------------------

    @Test
    void toTree_usesSnakeCaseKeys() {
        JsonNode tree = ConfigLoader.toTree(load(""));

        assertThat(tree.path("engine").path("kv_cache").path("block_size").asInt())
                .isEqualTo(16);
        assertThat(tree.path("engine")
                        .path("scheduler")
                        .path("long_prefill_token_threshold")
                        .asInt(-1))
                .isEqualTo(0);
        assertThat(tree.path("workload").path("synthetic").has("input_tokens")).isTrue();
        assertThat(tree.path("engine").has("kvCache")).isFalse();
    }

    @Test
    void toTree_thenBind_roundTripsToAnEqualConfig() {
        SimConfig c = load("""
                workload:
                  synthetic:
                    input_tokens: {type: lognormal, mean: 500, stddev: 100, min: 1}
                cluster: {workers: 4, router: {policy: least_loaded}}
                """, "engine.max_model_len=4096");

        assertThat(ConfigLoader.bind(ConfigLoader.toTree(c))).isEqualTo(c);
    }

    @Test
    void toYaml_thenFromYaml_roundTripsToAnEqualConfig() {
        SimConfig c = load("timing: {type: polynomial}\nworkload: {type: sessions, arrival: {rate: 3.5}}\n");

        assertThat(ConfigLoader.fromYaml(ConfigLoader.toYaml(c), "roundtrip.yaml", List.of()))
                .isEqualTo(c);
    }

    @Test
    void defaults_returnsAFreshCopyEachTime() {
        ObjectNode a = ConfigLoader.defaults();
        ((ObjectNode) a.get("cluster")).put("workers", 99);

        assertThat(ConfigLoader.defaults().path("cluster").path("workers").asInt())
                .isEqualTo(1);
    }

    @Test
    void bundledExamples_loadWithoutErrors() throws Exception {
        Path examples = findExamples();
        try (var files = Files.list(examples)) {
            List<Path> yamls =
                    files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
            assertThat(yamls).isNotEmpty();
            for (Path p : yamls) {
                if (p.getFileName().toString().startsWith("sweep")) {
                    // sweep specs, not replay configs
                    io.servesim.sweep.SweepSpec sweep = io.servesim.sweep.SweepSpec.load(p);
                    assertThat(sweep.dimensions()).as(p.toString()).isNotEmpty();
                    assertThat(io.servesim.sweep.Sweeps.configWarnings(sweep))
                            .as(p.toString())
                            .isEmpty();
                    continue;
                }
                // examples use the current key names: loading them warns about nothing
                assertThat(ConfigLoader.loadWithWarnings(p, List.of()).warnings())
                        .as(p.toString())
                        .isEmpty();
            }
        }
    }

    private static Path findExamples() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("examples");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException(
                "examples/ directory not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void duplicateKey_isRejected_notSilentlyOverwritten() {
        assertThatThrownBy(() -> load("cluster:\n  workers: 2\ncluster:\n  workers: 3\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cluster");
    }

    @Test
    void integerWhereABooleanIsExpected_isRejectedNamingTheField() {
        assertThatThrownBy(() -> load("output: {requests_csv: 1}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("output.requests_csv: ")
                .hasMessageContaining("expected true or false");
    }

    @Test
    void wrongScalarType_saysWhatWasExpectedAndWhatWasGiven() {
        assertThatThrownBy(() -> load("cluster: {workers: abc}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.workers: expected an integer")
                .hasMessageContaining("abc");
    }

    @Test
    void changingTheArrivalType_keepsTheOtherArrivalDefaults() {
        SimConfig c = load("workload:\n  arrival: {type: constant}\n");
        assertThat(c.workload().arrival().type()).isEqualTo(ArrivalConfig.Type.CONSTANT);
        assertThat(c.workload().arrival().rate()).isEqualTo(10.0);
    }

    @Test
    void setOverride_canAddAValidKeyAbsentFromTheDefaults_likeMinOfAFixedDistribution() {
        SimConfig c = load("", "workload.synthetic.input_tokens.min=16");
        assertThat(c.workload().synthetic().inputTokens().min()).isEqualTo(16.0);
        assertThat(c.workload().synthetic().inputTokens().value()).isEqualTo(1024.0);
    }

    @Test
    void nullForAnInteger_saysExpectedAnIntegerGotNull() {
        assertThatThrownBy(() -> load("cluster: {workers: null}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.workers: ")
                .hasMessageNotContaining("'null'");
    }

    @Test
    void newerKeys_areValidatedNamingTheirFullPath() {
        assertThatThrownBy(() -> load("", "cluster.dp_mode=sync"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.dp_mode: unknown value 'sync'")
                .hasMessageContaining("lockstep, independent");
        assertThatThrownBy(() -> load("", "cluster.router.kv.mode=guess"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.router.kv.mode: ");
        assertThatThrownBy(() -> load("", "cluster.router.kv.temperature=-1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.router.kv.temperature: ");
        assertThatThrownBy(() -> load("", "workload.sessions.migrate_fraction=1.5"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.sessions.migrate_fraction: must be between 0 and 1");
        assertThatThrownBy(() -> load("", "workload.trace.format=csv"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.trace.format: unknown value 'csv'");
        assertThatThrownBy(() -> load("", "workload.trace.arrival=concurrency"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("workload.trace.concurrency: is required");
        assertThatThrownBy(() -> load(
                        "", "engine.kv_cache.host_offload.num_host_blocks=8", "engine.kv_cache.prefix_caching=false"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(
                        "engine.kv_cache.host_offload.num_host_blocks: host offload needs prefix_caching");
        assertThatThrownBy(() -> load("", "engine.kv_cache.host_offload.scope=global"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.kv_cache.host_offload.scope: unknown value 'global'");
        assertThatThrownBy(() -> load("", "cluster.router.affinity_load_cap=-2"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.router.affinity_load_cap: ");
    }

    @Test
    @org.junit.jupiter.api.Timeout(30) // /dev/zero was read until the heap ran out
    void aConfigFileBeyondFourMebibytes_isRefusedAtOnce(@org.junit.jupiter.api.io.TempDir Path dir)
            throws java.io.IOException {
        Path big = dir.resolve("big.yaml");
        byte[] comment = "# a comment line that is not a config\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (var out = java.nio.file.Files.newOutputStream(big)) {
            for (int written = 0; written <= ConfigLoader.MAX_CONFIG_BYTES; written += comment.length) {
                out.write(comment);
            }
        }
        assertThatThrownBy(() -> ConfigLoader.load(big, java.util.List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("larger than 4 MiB");
        Path zero = Path.of("/dev/zero");
        if (java.nio.file.Files.isReadable(zero)) {
            assertThatThrownBy(() -> ConfigLoader.load(zero, java.util.List.of()))
                    .hasMessageContaining("larger than 4 MiB");
        }
    }
}
