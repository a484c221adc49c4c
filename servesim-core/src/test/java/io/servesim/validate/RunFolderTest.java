package io.servesim.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.config.ConfigException;
import io.servesim.config.SharedPrefixConfig;
import io.servesim.config.SimConfig;
import io.servesim.config.TimingConfig;
import io.servesim.config.TraceFormat;
import io.servesim.config.VllmVersion;
import io.servesim.workload.trace.TraceFormatException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** A measured-run folder: meta.json checked and mapped onto a config, measured.jsonl read, KV pool size checked. */
class RunFolderTest {
    private static final String CORPUS = "src/test/resources/corpus/";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path tmp;

    /** A minimal valid meta.json (H100, Llama-2-7B, every nullable field null), with {@code changes} applied. */
    private Path run(String name, Map<String, Object> changes) throws IOException {
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("gpu", "NVIDIA H100 80GB HBM3");
        meta.put("model", "meta-llama/Llama-2-7b-hf");
        meta.put("dtype", null);
        meta.put("tensor_parallel", 1);
        meta.put("pipeline_parallel", null);
        meta.put("data_parallel", null);
        meta.put("expert_parallel", null);
        meta.put("max_num_seqs", 64);
        meta.put("max_num_batched_tokens", 1024);
        meta.put("max_model_len", null);
        meta.put("block_size", 16);
        meta.put("enable_prefix_caching", null);
        meta.put("enable_chunked_prefill", null);
        meta.put("num_gpu_blocks", null);
        meta.put("gpu_memory_utilization", null);
        meta.put("measured_definitions", "Engine-side timestamps.");
        meta.putAll(changes);
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir);
        ObjectNode node = JSON.valueToTree(meta);
        Files.writeString(dir.resolve("meta.json"), JSON.writeValueAsString(node));
        Files.writeString(dir.resolve("workload.jsonl"), """
                {"request_id": "r0", "arrival_s": 0.0, "input_tokens": 100, "output_tokens": 3}
                {"request_id": "r1", "arrival_s": 0.5, "input_tokens": 200, "output_tokens": 1}
                {"request_id": "r2", "arrival_s": 1.0, "input_tokens": 300, "output_tokens": 5}
                """);
        Files.writeString(dir.resolve("measured.jsonl"), """
                {"request_id": "r0", "ttft_ms": 20.0, "tpot_ms": 5.0, "e2e_ms": 30.0, "error": false}
                {"request_id": "r1", "ttft_ms": 25.0, "tpot_ms": null, "e2e_ms": 25.0, "error": false}
                {"request_id": "r2", "ttft_ms": null, "tpot_ms": null, "e2e_ms": null, "error": true}
                """);
        return dir;
    }

    private Path run(Map<String, Object> changes) throws IOException {
        return run("x", changes);
    }

    @Test
    void nullFields_takeTheirDocumentedDefaults() throws IOException {
        RunFolder r = RunFolder.read(run(Map.of()));
        assertThat(r.name()).isEqualTo("x");
        assertThat(r.gpu()).isEqualTo("h100-sxm");
        assertThat(r.model()).isEqualTo("llama-2-7b");
        assertThat(r.dataParallel()).isEqualTo(1);
        assertThat(r.expertParallel()).isEqualTo(1);
        assertThat(r.maxModelLen()).isNull();
        assertThat(r.prefixCaching()).isTrue();
        assertThat(r.chunkedPrefill()).isTrue();
        assertThat(r.statedNumGpuBlocks()).isNull();
        assertThat(r.gpuMemoryUtilization()).isEqualTo(0.9);
        assertThat(r.gpuP2p()).isTrue();
        assertThat(r.linkGbytesPerS()).isNull();
        assertThat(r.asyncScheduling()).isTrue();
        assertThat(r.weightDtype()).isEqualTo(TimingConfig.Dtype.BF16);
        assertThat(r.kvDtype()).isEqualTo(TimingConfig.Dtype.BF16);
        assertThat(r.clientSide()).isFalse();
        assertThat(r.sharedPrefix()).isNull();
        assertThat(r.tokenIds()).isFalse();
        assertThat(r.clientTimeoutS()).isNull(); // an engine-side measurement has no client to give up

        SimConfig c = r.config(null, List.of());
        assertThat(c.workload().trace().format()).isEqualTo(TraceFormat.MEASURED);
        assertThat(Path.of(c.workload().trace().path())).isEqualTo(r.dir().resolve("workload.jsonl"));
        assertThat(c.workload().trace().sharedPrefix()).isNull();
        assertThat(c.cluster().workers()).isEqualTo(1);
        assertThat(c.cluster().attentionDp()).isEqualTo(1);
        assertThat(c.timing().model()).isEqualTo("llama-2-7b");
        assertThat(c.timing().gpu()).isEqualTo("h100-sxm");
        assertThat(c.timing().gpuMemoryUtilization()).isEqualTo(0.9);
        assertThat(c.timing().gpuP2p()).isTrue();
        assertThat(c.timing().linkGbytesPerS()).isNull();
        assertThat(c.engine().scheduler().maxNumSeqs()).isEqualTo(64);
        assertThat(c.engine().scheduler().maxNumBatchedTokens()).isEqualTo(1024);
        assertThat(c.engine().kvCache().numGpuBlocks()).isNull(); // derived as vLLM does
        assertThat(c.engine().maxModelLen()).isNull(); // the model's max_position_embeddings, capped by the pool
        assertThat(io.servesim.timing.Deployment.resolve(c).maxModelLen()).isEqualTo(4096);
    }

    @Test
    void statedFields_reachTheConfig_andTheUsersSetsComeLast() throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tensor_parallel", 2);
        m.put("data_parallel", 2);
        m.put("model", "mistralai/Mixtral-8x7B-v0.1");
        m.put("expert_parallel", 4);
        m.put("max_model_len", 4096);
        m.put("enable_prefix_caching", false);
        m.put("enable_chunked_prefill", true);
        m.put("num_gpu_blocks", 20000);
        m.put("gpu_memory_utilization", 0.85);
        m.put("gpu", "NVIDIA RTX PRO 6000 Blackwell Server Edition");
        m.put("gpu_p2p", false);
        m.put("link_gbytes_per_s", 16);
        m.put("dtype", "auto (not set; model config torch_dtype=bfloat16)");
        m.put("kv_cache_dtype", "fp8_e4m3");
        m.put("measured_definitions", "Client-side, measured by a load generator over HTTP.");
        m.put(
                "workload_profile",
                Map.of("shared_prefix", Map.of("system_prompt_len", 100, "num_unique_system_prompts", 11)));
        RunFolder r = RunFolder.read(run(m));
        assertThat(r.clientSide()).isTrue();
        assertThat(r.sharedPrefix()).isEqualTo(new SharedPrefixConfig(100, 11));
        SimConfig c = r.config(null, List.of("engine.scheduler.max_num_seqs=7"));
        assertThat(c.workload().trace().sharedPrefix()).isEqualTo(new SharedPrefixConfig(100, 11));
        assertThat(c.cluster().attentionDp()).isEqualTo(2);
        assertThat(c.cluster().dpMode().configName()).isEqualTo("lockstep"); // MoE ranks step together
        assertThat(c.timing().tensorParallel()).isEqualTo(2);
        assertThat(c.timing().expertParallel()).isTrue();
        assertThat(c.timing().weightDtype()).isEqualTo(TimingConfig.Dtype.BF16);
        assertThat(c.timing().kvDtype()).isEqualTo(TimingConfig.Dtype.FP8);
        assertThat(c.timing().gpuMemoryUtilization()).isEqualTo(0.85);
        assertThat(c.timing().gpuP2p()).isFalse();
        assertThat(c.timing().linkGbytesPerS()).isEqualTo(16.0);
        assertThat(c.engine().maxModelLen()).isEqualTo(4096);
        assertThat(c.engine().kvCache().prefixCaching()).isFalse();
        assertThat(c.engine().kvCache().numGpuBlocks()).isEqualTo(20000);
        assertThat(c.engine().scheduler().maxNumSeqs()).isEqualTo(7); // the user's --set wins
    }

    @Test
    void expertParallelBeyondTp_withoutAStatedDp_isDataParallel_asVllmFormsTheExpertGroupOverTpTimesDp()
            throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model", "mistralai/Mixtral-8x7B-v0.1");
        m.put("tensor_parallel", 1);
        m.put("expert_parallel", 2); // "TP 1, EP 2": two GPUs, one data-parallel rank each
        RunFolder r = RunFolder.read(run("ep", m));
        assertThat(r.dataParallel()).isEqualTo(2);
        assertThat(r.config(null, List.of()).cluster().attentionDp()).isEqualTo(2);
        assertThat(r.warnings()).isEmpty();
        // a converter's default data_parallel of 1 beside the two GPUs the run used: the GPUs decide
        m.put("data_parallel", 1);
        m.put("gpu_count", 2);
        RunFolder counted = RunFolder.read(run("ep1", m));
        assertThat(counted.dataParallel()).isEqualTo(2);
        assertThat(counted.expertParallel()).isEqualTo(2);
        assertThat(counted.warnings())
                .containsExactly("run ep1: meta.json: data_parallel is 1 but gpu_count 2 over tensor_parallel 1 makes"
                        + " 2 data-parallel ranks: servesim replays 2");
        // an expert-parallel size vLLM cannot form ("TP 4, EP 2" on eight GPUs): the experts go over TP x DP
        Map<String, Object> big = new LinkedHashMap<>();
        big.put("model", "mistralai/Mixtral-8x22B-Instruct-v0.1");
        big.put("tensor_parallel", 4);
        big.put("expert_parallel", 2);
        big.put("gpu_count", 8);
        RunFolder x22 = RunFolder.read(run("x22", big));
        assertThat(x22.dataParallel()).isEqualTo(2);
        assertThat(x22.expertParallel()).isEqualTo(8);
        assertThat(x22.warnings())
                .containsExactly("run x22: meta.json: expert_parallel is 2 but vLLM's expert-parallel group is"
                        + " tensor_parallel x data_parallel = 8 GPUs: servesim splits the experts over 8");
        // without gpu_count a stated data_parallel stands, and a dense model has no experts to split
        m.remove("gpu_count");
        assertThat(RunFolder.read(run("ep2", m)).expertParallel()).isEqualTo(1);
        Map<String, Object> dense = new LinkedHashMap<>(Map.of("expert_parallel", 2, "gpu_count", 2));
        assertThatThrownBy(() -> RunFolder.read(run("dense", dense)))
                .hasMessage("run dense: meta.json: expert_parallel: is 2 but llama-2-7b has no experts");
        // a dense model on two GPUs at TP 1: two data-parallel ranks
        assertThat(RunFolder.read(run("dense2", Map.of("gpu_count", 2))).dataParallel())
                .isEqualTo(2);
    }

    @Test
    void dtypesAndModelIds_areReadByTheirFirstWord_asConvertersAnnotateThem() throws IOException {
        assertThat(RunFolder.read(run("a", Map.of("dtype", "float16 (stated)"))).weightDtype())
                .isEqualTo(TimingConfig.Dtype.BF16);
        assertThat(RunFolder.read(run("b", Map.of("dtype", "torch.bfloat16"))).weightDtype())
                .isEqualTo(TimingConfig.Dtype.BF16);
        assertThat(RunFolder.read(run("c", Map.of("dtype", "FP8 (dynamic, per tensor)")))
                        .weightDtype())
                .isEqualTo(TimingConfig.Dtype.FP8);
        assertThat(RunFolder.read(run("d", Map.of("kv_cache_dtype", "fp8_e4m3,scaled")))
                        .kvDtype())
                .isEqualTo(TimingConfig.Dtype.FP8);
        // a model id with a converter's note after it
        assertThat(RunFolder.read(run("f", Map.of("model", "meta-llama/Llama-2-70b-hf (revision 3aba440)")))
                        .model())
                .isEqualTo("llama-2-70b");
        assertThatThrownBy(() -> RunFolder.read(run("e", Map.of("dtype", "int8 (w8a8)"))))
                .hasMessageStartingWith("run e: meta.json: dtype: unsupported dtype 'int8 (w8a8)'");
    }

    @Test
    void aClosedLoopRun_clientsAndNoRate_isReplayedClosedLoop_otherwiseAtItsRecordedSendTimes() throws IOException {
        Map<String, Object> closed = new LinkedHashMap<>();
        closed.put("concurrency", 8);
        closed.put("request_rate", null);
        RunFolder c = RunFolder.read(run("closed", closed));
        assertThat(c.closedLoopClients()).isEqualTo(8);
        SimConfig config = c.config(null, List.of());
        assertThat(config.workload().trace().arrival().configName()).isEqualTo("concurrency");
        assertThat(config.workload().trace().concurrency()).isEqualTo(8);
        // "inf", as vllm bench serve prints an unlimited rate, is no rate either
        assertThat(RunFolder.read(run("inf", Map.of("concurrency", 4, "request_rate", "inf")))
                        .closedLoopClients())
                .isEqualTo(4);
        // with a rate (the BLIS stages) the recorded send times carry the load; without a client count, too
        Map<String, Object> rated = Map.of("concurrency", 8, "request_rate", 10);
        assertThat(RunFolder.read(run("rated", rated)).closedLoopClients()).isNull();
        assertThat(RunFolder.read(run("open", Map.of())).overrides())
                .noneMatch(o -> o.startsWith("workload.trace.arrival"));
        assertThatThrownBy(() -> RunFolder.read(run("bad", Map.of("concurrency", 2.5))))
                .hasMessageStartingWith("run bad: meta.json: concurrency: expected a number of clients");
    }

    @Test
    void aRunOfInferenceSimsVllmFork_withoutAVersion_isReplayedAsTheForksBaseReleaseOfItsDate() throws IOException {
        List<String> blisNote =
                List.of("vLLM version not recorded: an instrumented inference-sim/vllm fork served it.");
        RunFolder feb = RunFolder.read(run("feb", Map.of("notes", blisNote, "collected", "20260217-155451")));
        assertThat(feb.vllmVersion()).hasToString(VllmVersion.find("0.15.1").toString());
        assertThat(feb.warnings())
                .containsExactly("run feb: meta.json: vllm_version is not stated, but inference-sim's vLLM fork served"
                        + " the run, on vLLM 0.15.1 then: replayed as 0.15.1");
        assertThat(feb.overrides()).contains("timing.vllm_version=\"0.15\"");
        // the fork's base image was v0.14.1 from 2026-01-26 to 2026-02-05; before that unknown
        assertThat(RunFolder.read(run("jan", Map.of("notes", blisNote, "collected", "20260130-101010")))
                        .vllmVersion())
                .isEqualTo(VllmVersion.find("0.14.1"));
        assertThat(RunFolder.read(run("dec", Map.of("notes", blisNote, "collected", "20251220-101010")))
                        .vllmVersion())
                .isNull();
        // named by its source repository instead, with no date: the fork's newest base
        Map<String, Object> bySource = Map.of("source", Map.of("repo", "inference-sim/training"));
        assertThat(RunFolder.read(run("src", bySource)).vllmVersion()).isEqualTo(VllmVersion.find("0.15.1"));
        // a stated version wins, and any other run stays unknown
        Map<String, Object> stated = Map.of("notes", blisNote, "vllm_version", "0.12.0");
        assertThat(RunFolder.read(run("stated", stated)).vllmVersion()).isEqualTo(VllmVersion.find("0.12"));
        assertThat(RunFolder.read(run("stated", stated)).warnings()).isEmpty();
        assertThat(RunFolder.read(run("other", Map.of())).vllmVersion()).isNull();
    }

    @Test
    void kvOffloadingSize_isVllmsNativeCpuOffload_countedInBlocksOfTheWholeEngine() throws IOException {
        // Llama-2-7B, BF16, 16-token blocks: 2 x 32 layers x 32 heads x 128 x 2 B x 16 = 8 MiB a block; 4 GiB = 512
        RunFolder small = RunFolder.read(run("small", Map.of("kv_offloading_size", 4)));
        assertThat(small.hostOffloadBlocks()).isEqualTo(512);
        assertThat(small.overrides()).contains("engine.kv_cache.host_offload.num_host_blocks=512");
        assertThat(small.config(null, List.of())
                        .engine()
                        .kvCache()
                        .hostOffload()
                        .numHostBlocks())
                .isEqualTo(512);
        // Llama-2-70B at TP 4: 2 x 80 x (8 / 4) x 128 x 2 B x 16 = 1.25 MiB on each GPU, 5 MiB over the four;
        // the size spans the ranks, so 10 GiB = 2,048 blocks (and 10.001 GiB still 2,048)
        Map<String, Object> tp4 = Map.of("model", "meta-llama/Llama-2-70b-hf", "tensor_parallel", 4);
        Map<String, Object> big = new LinkedHashMap<>(tp4);
        big.put("kv_offloading_size", 10.001);
        big.put("kv_offloading_backend", "native");
        assertThat(RunFolder.read(run("big", big)).hostOffloadBlocks()).isEqualTo(2048);
        // FP8 KV halves a block: twice the blocks
        Map<String, Object> fp8 = new LinkedHashMap<>(big);
        fp8.put("kv_cache_dtype", "fp8_e4m3");
        assertThat(RunFolder.read(run("fp8", fp8)).hostOffloadBlocks()).isEqualTo(4096);
        // absent, null or 0: off
        assertThat(RunFolder.read(run("none", Map.of())).hostOffloadBlocks()).isNull();
        assertThat(RunFolder.read(run("zero", Map.of("kv_offloading_size", 0))).hostOffloadBlocks())
                .isNull();
        assertThat(RunFolder.read(run("none2", Map.of())).overrides())
                .noneMatch(o -> o.startsWith("engine.kv_cache.host_offload"));
        assertThatThrownBy(() -> RunFolder.read(
                        run("lmcache", Map.of("kv_offloading_size", 4, "kv_offloading_backend", "lmcache"))))
                .hasMessage("run lmcache: meta.json: kv_offloading_backend: is 'lmcache' but servesim models vLLM's"
                        + " native CPU offloading (OffloadingConnector) only");
        assertThatThrownBy(() -> RunFolder.read(run("neg", Map.of("kv_offloading_size", -1))))
                .hasMessageStartingWith("run neg: meta.json: kv_offloading_size: expected GiB");
        assertThatThrownBy(() ->
                        RunFolder.read(run("nocache", Map.of("kv_offloading_size", 4, "enable_prefix_caching", false))))
                .hasMessageContaining("kv_offloading_size: needs prefix caching");
    }

    @Test
    void clientTimeout_isInferencePerfsAndBlisObservesDefault_unlessStated() throws IOException {
        String perf = "Client-side, measured by kubernetes-sigs/inference-perf (streaming /v1/completions over HTTP).";
        RunFolder byTool = RunFolder.read(run("perf", Map.of("measured_definitions", perf)));
        assertThat(byTool.clientTimeoutS()).isEqualTo(300.0); // aiohttp's ClientTimeout(total=300)
        assertThat(byTool.config(null, List.of()).workload().clientTimeoutS()).isEqualTo(300.0);
        // an HTTP client sends the output length as max_tokens, which vLLM's API server checks against
        // max_model_len; an engine-side run's requests meet the engine only
        assertThat(byTool.config(null, List.of()).workload().maxTokensSent()).isTrue();
        assertThat(RunFolder.read(run("engine", Map.of()))
                        .config(null, List.of())
                        .workload()
                        .maxTokensSent())
                .isFalse();
        RunFolder stated = RunFolder.read(run("stated", Map.of("measured_definitions", perf, "client_timeout_s", 120)));
        assertThat(stated.config(null, List.of()).workload().clientTimeoutS()).isEqualTo(120.0);
        RunFolder never = RunFolder.read(run("never", Map.of("measured_definitions", perf, "client_timeout_s", 0)));
        assertThat(never.config(null, List.of()).workload().clientTimeoutS()).isNull();
        RunFolder blis = RunFolder.read(
                run("blis", Map.of("measured_definitions", "Client-side, measured by BLIS observe (TraceV2 CSV).")));
        assertThat(blis.clientTimeoutS()).isEqualTo(300.0); // blis observe's default --timeout
        assertThat(RunFolder.clientToolTimeoutS("Client-side, GuideLLM 0.3 over HTTP"))
                .isEqualTo(300.0);
        assertThat(RunFolder.clientToolTimeoutS("client-side: vllm bench serve --max-concurrency 8"))
                .isEqualTo(21600.0); // aiohttp ClientTimeout(total=6 * 60 * 60)
        RunFolder otherTool = RunFolder.read(
                run("other", Map.of("measured_definitions", "Client-side, measured by a load generator over HTTP.")));
        assertThat(otherTool.clientTimeoutS()).isNull();
        assertThatThrownBy(() -> RunFolder.read(run("bad", Map.of("client_timeout_s", -1))))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("run bad: meta.json: client_timeout_s: expected seconds");
    }

    @Test
    void engineLoop_isVllmsDefaultForTheStatedVersion_asyncFrom0_14_unlessStated() throws IOException {
        // vllm-project/vllm#27614 turned async scheduling on by default in v0.14.0
        for (var c : List.of(
                Map.entry(Map.<String, Object>of(), true), // version unknown: today's default
                Map.entry(Map.<String, Object>of("vllm_version", "0.12.0"), false),
                Map.entry(Map.<String, Object>of("vllm_version", "0.13.2"), false),
                Map.entry(Map.<String, Object>of("vllm_version", "0.14.0"), true),
                Map.entry(Map.<String, Object>of("vllm_version", "v0.19.0rc1"), true),
                Map.entry(Map.<String, Object>of("vllm_version", "1.0"), true),
                Map.entry(Map.<String, Object>of("vllm_version", "0.12.0", "async_scheduling", true), true),
                Map.entry(Map.<String, Object>of("vllm_version", "0.19.0", "async_scheduling", false), false))) {
            RunFolder r = RunFolder.read(run(c.getKey()));
            assertThat(r.asyncScheduling()).as(c.getKey().toString()).isEqualTo(c.getValue());
            assertThat(r.config(null, List.of()).engine().scheduler().asyncScheduling())
                    .as(c.getKey().toString())
                    .isEqualTo(c.getValue());
        }
        // the version also picks the measured kernel tables of that version (timing.vllm_version)
        assertThat(RunFolder.read(run(Map.of("vllm_version", "v0.19.0rc1")))
                        .config(null, List.of())
                        .timing()
                        .version())
                .isEqualTo(new io.servesim.config.VllmVersion(0, 19));
        assertThat(RunFolder.read(run(Map.of()))
                        .config(null, List.of())
                        .timing()
                        .vllmVersion())
                .isNull();
        // the user's --set still wins
        RunFolder old = RunFolder.read(run(Map.of("vllm_version", "0.12.0")));
        assertThat(old.config(null, List.of("engine.scheduler.async_scheduling=true"))
                        .engine()
                        .scheduler()
                        .asyncScheduling())
                .isTrue();
    }

    @Test
    void aBaseConfig_keepsWhatTheRunDoesNotState() throws IOException {
        Path base = tmp.resolve("base.yaml");
        Files.writeString(base, "timing: {roofline: {mfu: 0.5}}\nworkload: {seed: 7}\n");
        SimConfig c = RunFolder.read(run(Map.of())).config(base, List.of());
        assertThat(c.timing().roofline().mfu()).isEqualTo(0.5);
        assertThat(c.workload().seed()).isEqualTo(7);
        assertThat(c.timing().model()).isEqualTo("llama-2-7b");
    }

    @Test
    void aBaseConfigWithPools_isRefused_becauseAPoolsSettingsWouldReplaceTheRunsDeployment() throws IOException {
        Path base = tmp.resolve("pools.yaml");
        // one pool on another GPU: without the check the run would be replayed on an L40S instead of its H100
        Files.writeString(base, "cluster:\n  pools:\n    - {name: only, workers: 1, timing: {gpu: l40s}}\n");
        RunFolder r = RunFolder.read(run(Map.of()));
        assertThatThrownBy(() -> r.config(base, List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("run " + r.name())
                .hasMessageContaining("cluster.pools")
                .hasMessageContaining("meta.json");
    }

    @Test
    void dtypes_mapToTheTimingsElementSize() throws IOException {
        record Case(Object dtype, Object kv, TimingConfig.Dtype weights, TimingConfig.Dtype cache) {}
        List<Case> cases = List.of(
                new Case("bfloat16", "auto", TimingConfig.Dtype.BF16, TimingConfig.Dtype.BF16),
                new Case("float16", null, TimingConfig.Dtype.BF16, TimingConfig.Dtype.BF16),
                new Case(
                        "auto (not set; model config torch_dtype=float16)",
                        null,
                        TimingConfig.Dtype.BF16,
                        TimingConfig.Dtype.BF16),
                new Case("fp8", "auto", TimingConfig.Dtype.FP8, TimingConfig.Dtype.FP8),
                new Case("FP8_E4M3", "bfloat16", TimingConfig.Dtype.FP8, TimingConfig.Dtype.BF16),
                new Case("bfloat16", "fp8_e5m2", TimingConfig.Dtype.BF16, TimingConfig.Dtype.FP8));
        int i = 0;
        for (Case k : cases) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("dtype", k.dtype());
            m.put("kv_cache_dtype", k.kv());
            RunFolder r = RunFolder.read(run("d" + i++, m));
            assertThat(r.weightDtype()).as(k.toString()).isEqualTo(k.weights());
            assertThat(r.kvDtype()).as(k.toString()).isEqualTo(k.cache());
        }
        // an FP8 release named as such serves FP8 weights whatever --dtype (the activations') says; the KV cache
        // stays in the activations' type under "auto"
        for (String dtype : new String[] {"bfloat16", null}) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic");
            m.put("dtype", dtype);
            RunFolder r = RunFolder.read(run("q" + i++, m));
            assertThat(r.model()).isEqualTo("llama-3.1-8b");
            assertThat(r.weightDtype()).isEqualTo(TimingConfig.Dtype.FP8);
            assertThat(r.kvDtype()).isEqualTo(TimingConfig.Dtype.BF16);
        }
        // an NVFP4 release: a dense model's linear layers in NVFP4; a MoE model's routed experts only, attention in
        // BF16 as NVIDIA's and the community's MoE NVFP4 exports keep it
        RunFolder fp4 = RunFolder.read(run("f4", Map.of("model", "nvidia/Llama-3.1-8B-Instruct-FP4")));
        assertThat(fp4.model()).isEqualTo("llama-3.1-8b");
        assertThat(fp4.weightDtype()).isEqualTo(TimingConfig.Dtype.NVFP4);
        assertThat(fp4.overrides())
                .contains("timing.weight_dtype=nvfp4")
                .noneMatch(o -> o.startsWith("timing.expert_dtype"));
        // NVIDIA's NVFP4 releases state an FP8 KV cache, which vLLM's kv_cache_dtype "auto" takes; a stated one wins
        assertThat(fp4.kvDtype()).isEqualTo(TimingConfig.Dtype.FP8);
        assertThat(RunFolder.read(run(
                                "f5",
                                Map.of("model", "nvidia/Llama-3.1-8B-Instruct-FP4", "kv_cache_dtype", "bfloat16")))
                        .kvDtype())
                .isEqualTo(TimingConfig.Dtype.BF16);
        RunFolder moe = RunFolder.read(
                run("m4", Map.of("model", "someone/Mixtral-8x7B-Instruct-v0.1-NVFP4", "tensor_parallel", 2)));
        assertThat(moe.model()).isEqualTo("mixtral-8x7b");
        assertThat(moe.overrides()).contains("timing.weight_dtype=bf16", "timing.expert_dtype=nvfp4");
        assertThat(moe.kvDtype()).isEqualTo(TimingConfig.Dtype.BF16); // not NVIDIA's: its KV cache is not known
        RunFolder qwen = RunFolder.read(run("qw", Map.of("model", "Qwen/Qwen3-32B-FP8", "tensor_parallel", 2)));
        assertThat(qwen.weightDtype()).isEqualTo(TimingConfig.Dtype.FP8_BLOCK); // Qwen's 128 x 128 block scales
        assertThatThrownBy(() -> RunFolder.read(run("awq", Map.of("model", "TheBloke/Llama-2-7B-AWQ"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("model: model 'TheBloke/Llama-2-7B-AWQ' is 'Llama-2-7B' quantized as AWQ");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("dtype", "int4-awq"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("run x: meta.json: dtype: unsupported dtype 'int4-awq'");
    }

    @Test
    void eachMissingRequiredField_isAnErrorNamingTheRunAndTheField() throws IOException {
        for (String field : RunFolder.REQUIRED) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(field, null);
            Path dir = run("run_" + field, m);
            assertThatThrownBy(() -> RunFolder.read(dir))
                    .as(field)
                    .isInstanceOf(ConfigException.class)
                    .hasMessage("run run_" + field + ": meta.json: " + field + ": missing");
        }
    }

    @Test
    void badValues_areOneLineErrorsNamingTheRunAndTheField() throws IOException {
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("gpu", "Foo"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("run x: meta.json: gpu: unknown GPU 'Foo' (known: ")
                .hasMessageContaining("NVIDIA H100 80GB HBM3");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("model", "acme/Giant-1T"))))
                .hasMessageStartingWith(
                        "run x: meta.json: model: unknown model 'acme/Giant-1T' (known Hugging Face" + " ids: ")
                .hasMessageContaining("meta-llama/Llama-2-7b-hf");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("pipeline_parallel", 2))))
                .hasMessageStartingWith("run x: meta.json: pipeline_parallel: is 2 but servesim does not simulate"
                        + " pipeline parallelism");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("tensor_parallel", "two"))))
                .hasMessage("run x: meta.json: tensor_parallel: expected a positive integer, got \"two\"");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("gpu_memory_utilization", 1.5))))
                .hasMessage("run x: meta.json: gpu_memory_utilization: expected a number in (0, 1], got 1.5");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("link_gbytes_per_s", -16))))
                .hasMessage("run x: meta.json: link_gbytes_per_s: expected a positive number, got -16");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("gpu_p2p", "no"))))
                .hasMessage("run x: meta.json: gpu_p2p: expected true, false or null, got \"no\"");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("vllm_version", "nightly-5b8c30d"))))
                .hasMessage("run x: meta.json: vllm_version: expected a vLLM version such as \"0.12.0\", got"
                        + " \"nightly-5b8c30d\"");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("vllm_version", 0.12))))
                .hasMessage("run x: meta.json: vllm_version: expected a string, got 0.12");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("async_scheduling", "yes"))))
                .hasMessage("run x: meta.json: async_scheduling: expected true, false or null, got \"yes\"");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("enable_prefix_caching", "yes"))))
                .hasMessage("run x: meta.json: enable_prefix_caching: expected true, false or null, got \"yes\"");
        assertThatThrownBy(() -> RunFolder.read(run(Map.of("tensor_parallel", 2, "expert_parallel", 8))))
                .hasMessage("run x: meta.json: expert_parallel: is 8 but llama-2-7b has no experts");
        Path noMeasured = run(Map.of());
        Files.delete(noMeasured.resolve("measured.jsonl"));
        assertThatThrownBy(() -> RunFolder.read(noMeasured)).hasMessage("run x: measured.jsonl: missing");
        Path badJson = run("y", Map.of());
        Files.writeString(badJson.resolve("meta.json"), "{\"gpu\": ");
        assertThatThrownBy(() -> RunFolder.read(badJson)).hasMessageStartingWith("run y: meta.json: not valid JSON");
    }

    @Test
    void measured_skipsAndCountsFailedRequests_tpotOnlyWhereStated_andJoinsTheWorkloadForThroughput()
            throws IOException {
        MeasuredRun m = RunFolder.read(run(Map.of())).measured();
        assertThat(m.ttftMs()).containsExactly(20.0, 25.0);
        assertThat(m.tpotMs()).containsExactly(5.0); // r1 has one output token: no TPOT
        assertThat(m.e2eMs()).containsExactly(30.0, 25.0);
        assertThat(m.failedRequests()).isEqualTo(1);
        // successful requests: arrivals 0 and 0.5 s, last token at 0.5 + 0.025 s; 3 + 1 output tokens
        assertThat(m.durationS()).isCloseTo(0.525, Offset.offset(1e-12));
        assertThat(m.outputTokens()).isEqualTo(4);
        // the same file read on its own: the layout is recognised by its ttft_ms rows
        MeasuredRun alone = MeasuredRun.read(tmp.resolve("x/measured.jsonl"));
        assertThat(alone.ttftMs()).containsExactly(20.0, 25.0);
        assertThat(alone.durationS()).isNaN();
    }

    @Test
    void malformedMeasuredRows_nameTheRunFileLineAndField() throws IOException {
        Path dir = run(Map.of());
        RunFolder r = RunFolder.read(dir);
        Files.writeString(dir.resolve("measured.jsonl"), """
                {"request_id": "r0", "ttft_ms": 20.0, "tpot_ms": 5.0, "e2e_ms": 30.0, "error": false}
                {"request_id": "r1", "ttft_ms": "fast", "tpot_ms": null, "e2e_ms": 25.0}
                {"request_id": "r2", "ttft_ms": 1, "tpot_ms": 1, "e2e_ms": 5}
                """);
        assertThatThrownBy(r::measured)
                .isInstanceOf(TraceFormatException.class)
                .hasMessage("run x: measured.jsonl:2: ttft_ms: expected a number, got \"fast\"");
        Files.writeString(dir.resolve("measured.jsonl"), """
                {"request_id": "r0", "ttft_ms": 20.0, "tpot_ms": 5.0, "e2e_ms": 30.0}
                {"request_id": "r2", "ttft_ms": 1, "tpot_ms": 1, "e2e_ms": 5}
                """);
        assertThatThrownBy(r::measured)
                .hasMessage("run x: measured.jsonl:2: request_id: is \"r2\" but workload.jsonl:2 has \"r1\"");
    }

    @Test
    void numGpuBlocks_statedIsUsed_andComparedWithServesimsDerivation() throws IOException {
        RunFolder r = RunFolder.read(run(Map.of("num_gpu_blocks", 7462)));
        SimConfig c = r.config(null, List.of());
        RunFolder.NumGpuBlocksCheck check = r.numGpuBlocksCheck(c);
        assertThat(check.stated()).isEqualTo(7462);
        assertThat(check.used()).isEqualTo(7462);
        assertThat(check.derived()).isBetween(7000, 8000); // Llama-2-7B bf16 on one H100: 0.5 MiB KV per token
        assertThat(check.derivedVsStatedPct()).isEqualTo((check.derived() - 7462.0) / 7462 * 100);
        RunFolder unstated = RunFolder.read(run("u", Map.of()));
        RunFolder.NumGpuBlocksCheck derivedOnly = unstated.numGpuBlocksCheck(unstated.config(null, List.of()));
        assertThat(derivedOnly.stated()).isNull();
        assertThat(derivedOnly.used()).isEqualTo(derivedOnly.derived());
        assertThat(derivedOnly.derivedVsStatedPct()).isNaN();
    }

    @Test
    void inferRepeatPeriod_findsTheSmallestPeriodWithNinetyPercentOfLengthsRepeating_orNone() {
        int[] cycled = new int[400];
        java.util.SplittableRandom rng = new java.util.SplittableRandom(7);
        int[] list = rng.ints(25, 500, 700).toArray(); // a benchmark cycling through 25 prompts
        for (int i = 0; i < cycled.length; i++) {
            cycled[i] = list[i % 25];
        }
        assertThat(RunFolder.inferRepeatPeriod(cycled)).isEqualTo(25);
        for (int i = 1; i <= 15; i++) {
            cycled[i * 23] += 1; // 15 rows changed break 30 of 375 comparisons (8 % < 10 %): still a repetition
        }
        assertThat(RunFolder.inferRepeatPeriod(cycled)).isEqualTo(25);
        int[] random = rng.ints(400, 500, 700).toArray();
        assertThat(RunFolder.inferRepeatPeriod(random)).isNull();
        assertThat(RunFolder.inferRepeatPeriod(new int[] {5, 5, 5})).isNull(); // too few rows to tell
    }

    @Test
    void corpus_readsEveryFolderWithAMetaJson_sortedByName() throws IOException {
        List<RunFolder> runs = RunFolder.corpus(Path.of(CORPUS));
        assertThat(runs)
                .extracting(RunFolder::name)
                .containsExactly("blis_H100_Llama-2-7b_tp1_codegen", "llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1");
        RunFolder blis = runs.get(0);
        assertThat(blis.gpu()).isEqualTo("h100-sxm"); // "NVIDIA H100 80GB HBM3 (SXM)"
        assertThat(blis.model()).isEqualTo("llama-2-7b");
        assertThat(blis.statedNumGpuBlocks()).isEqualTo(7462);
        assertThat(blis.maxModelLen()).isEqualTo(4096);
        assertThat(blis.clientSide()).isTrue();
        assertThat(blis.sharedPrefix()).isEqualTo(new SharedPrefixConfig(100, 11));
        assertThat(blis.tokenIds()).isFalse();
        RunFolder sharegpt = runs.get(1);
        assertThat(sharegpt.gpu()).isEqualTo("rtx-pro-6000"); // "NVIDIA RTX PRO 6000 (96 GB GDDR7, ...)"
        assertThat(sharegpt.model()).isEqualTo("llama-3.1-8b");
        assertThat(sharegpt.statedNumGpuBlocks()).isNull();
        assertThat(sharegpt.clientSide()).isFalse();
        assertThat(sharegpt.tokenIds()).isTrue();

        Files.createDirectories(tmp.resolve("empty/sub"));
        assertThatThrownBy(() -> RunFolder.corpus(tmp.resolve("empty")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("no run folders");
        run("b", Map.of());
        run("a", Map.of("gpu", "Foo"));
        assertThatThrownBy(() -> RunFolder.corpus(tmp)).hasMessageStartingWith("run a: meta.json: gpu: unknown GPU");
    }

    @Test
    void metaFacts_takeThePlaceOfTheirFieldsInTheRunsTheyName_andAFactAboutNoRunIsAnError() {
        List<RunFolder.MetaFact> facts = List.of(RunFolder.MetaFact.parse("blis_*:vllm_version=0.15.1"));
        List<RunFolder> runs = RunFolder.corpus(Path.of(CORPUS), facts);
        // the BLIS run states no version; the fact gives it one, and with it vLLM 0.15's defaults
        assertThat(runs.get(0).vllmVersion()).isEqualTo(new io.servesim.config.VllmVersion(0, 15));
        assertThat(runs.get(0).config(null, List.of()).timing().version())
                .isEqualTo(new io.servesim.config.VllmVersion(0, 15));
        assertThat(runs.get(1).vllmVersion()).isEqualTo(new io.servesim.config.VllmVersion(0, 19)); // not named
        // an exact name; JSON values (a number) and plain strings
        RunFolder one = RunFolder.corpus(
                        Path.of(CORPUS),
                        List.of(RunFolder.MetaFact.parse(
                                "llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1:gpu_memory_utilization=0.8")))
                .get(1);
        assertThat(one.gpuMemoryUtilization()).isEqualTo(0.8);
        assertThat(RunFolder.MetaFact.parse("a:vllm_version=0.12.0").value().asString())
                .isEqualTo("0.12.0");
        assertThat(RunFolder.MetaFact.parse("a:max_num_seqs=64").value().asInt())
                .isEqualTo(64);
        assertThatThrownBy(() -> RunFolder.corpus(
                        Path.of(CORPUS), List.of(RunFolder.MetaFact.parse("bils_*:vllm_version=0.15.1"))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--meta")
                .hasMessageContaining("no run of corpus")
                .hasMessageContaining("bils_*");
        // a field the replay does not read (a misspelling) would be ignored silently: refused, with the known ones
        assertThatThrownBy(() -> RunFolder.MetaFact.parse("blis_*:vllm_verison=0.15.1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("unknown meta.json field 'vllm_verison'")
                .hasMessageContaining("vllm_version");
        for (String bad : List.of("vllm_version=0.15.1", ":vllm_version=1", "a:=1", "a:vllm_version")) {
            assertThatThrownBy(() -> RunFolder.MetaFact.parse(bad))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("expected RUN:FIELD=VALUE");
        }
        // a bad value is the field's own error, naming the run
        assertThatThrownBy(() -> RunFolder.corpus(
                        Path.of(CORPUS), List.of(RunFolder.MetaFact.parse("blis_*:vllm_version=banana"))))
                .hasMessageStartingWith("run blis_H100_Llama-2-7b_tp1_codegen: meta.json: vllm_version:");
    }
}
