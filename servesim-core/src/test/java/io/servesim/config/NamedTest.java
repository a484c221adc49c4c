package io.servesim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Every closed set of config names is a {@link Named} enum: bound, written back and documented by its YAML name. */
class NamedTest {
    /**
     * A config key holding a named choice, with the overrides a non-default choice needs to validate, and the
     * choices of a shared type this key refuses (with an error naming it).
     */
    private record Key(String path, Class<? extends Enum<?>> type, List<String> extra, List<String> refused) {
        Key(String path, Class<? extends Enum<?>> type, List<String> extra) {
            this(path, type, extra, List.of());
        }
    }

    private static final List<Key> KEYS = List.of(
            new Key("workload.type", WorkloadType.class, List.of("workload.trace.path=t.jsonl")),
            new Key("workload.arrival.type", ArrivalConfig.Type.class, List.of("workload.arrival.concurrency=2")),
            new Key(
                    "workload.synthetic.input_tokens.type",
                    DistributionConfig.Type.class,
                    List.of("workload.synthetic.input_tokens={value: 5, min: 1, max: 9, mean: 5, stddev: 1}")),
            new Key("workload.trace.format", TraceFormat.class, List.of()),
            new Key("workload.trace.arrival", TraceConfig.Arrival.class, List.of("workload.trace.concurrency=2")),
            new Key("cluster.dp_mode", ClusterConfig.DpMode.class, List.of()),
            new Key("cluster.router.policy", RouterPolicy.class, List.of()),
            new Key("cluster.router.kv.mode", KvRouterConfig.Mode.class, List.of()),
            new Key("engine.scheduler.policy", SchedulerConfig.Policy.class, List.of()),
            new Key("engine.kv_cache.host_offload.scope", HostOffloadConfig.Scope.class, List.of()),
            new Key("engine.kvcr.decision", KvcrConfig.Decision.class, List.of()),
            new Key("timing.type", TimingType.class, List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm")),
            new Key("timing.weight_dtype", TimingConfig.Dtype.class, List.of(), List.of("mxfp4", "int4")),
            new Key("timing.expert_dtype", TimingConfig.Dtype.class, List.of()),
            new Key(
                    "timing.kv_dtype",
                    TimingConfig.Dtype.class,
                    List.of(),
                    List.of("mxfp4", "fp8_block", "nvfp4", "int4")),
            new Key("timing.profile.method", ProfileTimingConfig.Method.class, List.of()),
            new Key("engine.sglang.schedule_policy", SglangConfig.Policy.class, List.of("engine.kind=sglang")),
            new Key(
                    "engine.trtllm.context_chunking_policy",
                    TrtllmConfig.ChunkingPolicy.class,
                    List.of("engine.kind=trtllm")),
            new Key(
                    "engine.trtllm.capacity_scheduler_policy",
                    TrtllmConfig.Policy.class,
                    List.of("engine.kind=trtllm")),
            new Key(
                    "cluster.disagg.transfer.mode",
                    DisaggConfig.Mode.class,
                    List.of(
                            "cluster.mode=disaggregated",
                            "cluster.prefill={workers: 1}",
                            "cluster.decode={workers: 1}")));

    private static List<Named> constants(Class<? extends Enum<?>> type) {
        List<Named> out = new ArrayList<>();
        for (Enum<?> e : type.getEnumConstants()) {
            out.add((Named) e);
        }
        return out;
    }

    private static JsonNode at(JsonNode tree, String path) {
        JsonNode n = tree;
        for (String k : path.split("\\.", -1)) {
            n = n.path(k);
        }
        return n;
    }

    @Test
    void everyChoice_bindsFromItsYamlName_andIsWrittenBackAsExactlyThatName() {
        for (Key key : KEYS) {
            for (Named choice : constants(key.type())) {
                List<String> sets = new ArrayList<>(key.extra());
                sets.add(key.path() + "=" + choice.configName());
                if (key.refused().contains(choice.configName())) {
                    assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", sets))
                            .as(key.path() + "=" + choice.configName())
                            .isInstanceOf(ConfigException.class)
                            .hasMessageStartingWith(key.path() + ": expected");
                    continue;
                }
                SimConfig c = ConfigLoader.fromYaml("", "t", sets);
                JsonNode written = at(ConfigLoader.toTree(c), key.path());
                assertThat(written.isString()).as(key.path()).isTrue();
                assertThat(written.stringValue()).as(key.path()).isEqualTo(choice.configName());
                assertThat(ConfigLoader.bind(ConfigLoader.toTree(c))).isEqualTo(c);
            }
        }
    }

    @Test
    void clusterEventActions_bindAndAreWrittenBackByName() {
        SimConfig c = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "cluster.workers=2",
                        "cluster.events=[{at_ms: 1, worker: 0, action: drain}, "
                                + "{at_ms: 2, worker: 1, action: fail}]"));
        assertThat(c.cluster().events().get(1).action()).isEqualTo(ClusterEventConfig.Action.FAIL);
        JsonNode events = ConfigLoader.toTree(c).path("cluster").path("events");
        assertThat(events.get(0).path("action").stringValue()).isEqualTo("drain");
        assertThat(events.get(1).path("action").stringValue()).isEqualTo("fail");
    }

    @Test
    void namesAreUniqueSnakeCase_describedAndFoundAgain() {
        List<Class<? extends Enum<?>>> types = new ArrayList<>();
        KEYS.forEach(k -> types.add(k.type()));
        types.add(ClusterEventConfig.Action.class);
        types.add(EngineKind.class);
        types.add(ClusterConfig.Mode.class);
        types.add(PoolConfig.Role.class);
        for (Class<? extends Enum<?>> type : types) {
            List<String> seen = new ArrayList<>();
            for (Named n : constants(type)) {
                assertThat(n.configName()).matches("[a-z][a-z0-9_]*");
                assertThat(n.description()).as(n.configName()).isNotBlank();
                assertThat(seen).doesNotContain(n.configName());
                seen.add(n.configName());
            }
        }
        assertThat(Named.names(TraceFormat.class))
                .containsExactly("mooncake", "azure", "vllm_bench", "measured", "servesim");
        assertThat(Named.find(TraceFormat.class, "csv")).isNull();
        assertThat(Named.find(TimingType.class, "profile")).isEqualTo(TimingType.PROFILE);
    }

    @Test
    void engineKind_defaultsToVllm_andIsLeftOutOfWrittenConfigs() {
        SimConfig c = ConfigLoader.fromYaml("engine: {kind: vllm}\n", "t", List.of());
        assertThat(c.engine().kind()).isEqualTo(EngineKind.VLLM);
        assertThat(ConfigLoader.toTree(c).path("engine").has("kind")).isFalse();
        assertThat(ConfigLoader.bind(ConfigLoader.toTree(c))).isEqualTo(c);
        assertThat(ConfigLoader.fromYaml("", "t", List.of()).engine().kind()).isEqualTo(EngineKind.VLLM);
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("engine.kind=tgi")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("engine.kind: unknown engine 'tgi' (known: vllm, trtllm, sglang)");
    }

    @Test
    void strategyFamilies_failWithTheirNounAndTheKnownNames() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.type=lookup")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("timing.type: unknown timing model 'lookup' (known: auto, fixed, polynomial, roofline,"
                        + " profile)");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("workload.type=replay")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("workload.type: unknown value 'replay' (expected one of: synthetic, sessions, trace)");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("cluster.dp_mode={a: 1}")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("cluster.dp_mode: expected one of lockstep, independent");
    }

    @Test
    void declaredCapabilities() {
        assertThat(TimingType.ROOFLINE.needsModelAndGpu()).isTrue();
        assertThat(TimingType.FIXED.needsModelAndGpu()).isFalse();
        assertThatThrownBy(() -> ConfigLoader.fromYaml("", "t", List.of("timing.type=roofline")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("timing.type: roofline needs timing.model and timing.gpu");
        assertThat(TraceFormat.AZURE.sessions() || TraceFormat.AZURE.tokenIds() || TraceFormat.AZURE.hashIds())
                .isFalse();
        assertThat(TraceFormat.MOONCAKE.usesTraceBlockSize()).isTrue();
        assertThat(TraceFormat.SERVESIM.usesTraceBlockSize()).isFalse();
        SimConfig kv = ConfigLoader.fromYaml("", "t", List.of("cluster.router.policy=kv_aware"));
        assertThat(kv.cluster().router().needsKvEvents()).isTrue();
        SimConfig approx = ConfigLoader.fromYaml(
                "", "t", List.of("cluster.router.policy=kv_aware", "cluster.router.kv.mode=approximate"));
        assertThat(approx.cluster().router().needsKvEvents()).isFalse();
        assertThat(ConfigLoader.fromYaml("", "t", List.of()).cluster().router().needsKvEvents())
                .isFalse();
    }

    @Test
    void docsConfigMd_namesEveryChoice() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(dir.resolve("docs/config.md"))) {
            dir = dir.getParent();
            assertThat(dir).as("docs/config.md above the working directory").isNotNull();
        }
        String doc = Files.readString(dir.resolve("docs/config.md"));
        List<Class<? extends Enum<?>>> types = new ArrayList<>();
        KEYS.forEach(k -> types.add(k.type()));
        types.add(ClusterEventConfig.Action.class);
        types.add(EngineKind.class);
        types.add(ClusterConfig.Mode.class);
        types.add(PoolConfig.Role.class);
        for (Class<? extends Enum<?>> type : types) {
            for (Named n : constants(type)) {
                assertThat(doc).as(type.getSimpleName()).contains("`" + n.configName() + "`");
            }
        }
        assertThat(doc).contains("`engine.kind`");
    }
}
