package io.servesim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import io.servesim.sweep.LocalEngine;
import io.servesim.sweep.SweepEngine;
import io.servesim.sweep.SweepOutput;
import io.servesim.sweep.SweepSpec;
import io.servesim.sweep.Sweeps;
import io.servesim.timing.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Paths relative to the config file: {@code workload.trace.path}, {@code timing.model} as a path,
 * {@code timing.profile.path} and {@code timing.calibration} resolve against the directory of the config file that
 * names them (whatever the working directory), absolute paths as given, and the echoed config keeps them as written.
 */
class ConfigPathsTest {
    @TempDir
    Path tmp;

    private static final String TRACE = """
            TIMESTAMP,ContextTokens,GeneratedTokens
            2023-11-16 18:15:46.6805900,374,44
            2023-11-16 18:15:50.9951690,396,109
            2023-11-16 18:15:51.0000000,120,12
            """;

    private Path write(String name, String text) throws IOException {
        Path p = tmp.resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
        return p;
    }

    @Test
    void aTracePath_resolvesBesideTheConfigFile_andIsEchoedAsWritten() throws IOException {
        write("runs/data/t.csv", TRACE);
        Path config = write("runs/replay.yaml", """
                workload: {type: trace, trace: {format: azure, path: data/t.csv}}
                timing: {type: fixed}
                """);
        SimConfig c = ConfigLoader.load(config, List.of());
        RunResult r = Simulation.run(c);
        assertThat(r.log().size()).isEqualTo(3);
        assertThat(ConfigLoader.toTree(c)
                        .get("workload")
                        .get("trace")
                        .get("path")
                        .asString())
                .isEqualTo("data/t.csv");
        assertThat(ConfigLoader.toTree(c).has("base_dir")).isFalse();
        assertThatThrownBy(() -> ConfigLoader.fromYaml("base_dir: /tmp\n", "t.yaml", List.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("base_dir")
                .hasMessageContaining("unknown key")
                .hasMessageNotContaining("allowed: base_dir");
        // the same text without a file to be relative to looks in the working directory, where there is no such file
        assertThatThrownBy(() -> Simulation.run(ConfigLoader.fromYaml(Files.readString(config), "text", List.of())))
                .hasMessageContaining("data/t.csv");
    }

    @Test
    void aPathThatExistsOnlyRelativeToTheWorkingDirectory_isStillFound() throws IOException {
        // servesim-core is the tests' working directory; configs written before paths followed their file keep working
        Path config = write("elsewhere/replay.yaml", """
                workload: {type: trace, trace: {format: azure, path: target/config-paths-test/t.csv}}
                timing: {type: fixed}
                """);
        Path sample = Path.of("target/config-paths-test/t.csv"); // relative to the working directory (the module)
        Files.createDirectories(sample.getParent());
        Files.writeString(sample, TRACE);
        try {
            assertThat(Simulation.run(ConfigLoader.load(config, List.of()))
                            .log()
                            .size())
                    .isEqualTo(3);
        } finally {
            Files.delete(sample);
        }
    }

    @Test
    void aCalibrationProfile_aModelConfigJson_andAProfileCsv_resolveBesideTheConfigFile() throws IOException {
        write("cfg/calib.yaml", "roofline:\n  mbu: 0.5\n  mfu: 0.25\n");
        write("cfg/models/tiny/config.json", """
                {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8,
                 "intermediate_size": 4096, "vocab_size": 32000, "max_position_embeddings": 4096,
                 "torch_dtype": "bfloat16", "model_type": "llama", "architectures": ["LlamaForCausalLM"]}
                """);
        write("cfg/steps.csv", "prefill_tokens,decode_seqs,context_tokens,latency_ms\n0,1,100,5\n512,0,0,20\n");
        Path roofline = write("cfg/roofline.yaml", """
                timing: {type: roofline, model: models/tiny/config.json, gpu: h100-sxm, calibration: calib.yaml}
                """);
        SimConfig c = ConfigLoader.load(roofline, List.of());
        Deployment d = Deployment.resolve(c);
        assertThat(d.roofline().mbu()).isEqualTo(0.5);
        assertThat(d.roofline().mfu()).isEqualTo(0.25);
        assertThat(d.model().numLayers()).isEqualTo(4);
        Path profile = write("cfg/profile.yaml", """
                workload: {type: synthetic, synthetic: {requests: 5}}
                timing: {type: profile, profile: {path: steps.csv}}
                """);
        assertThat(Simulation.run(ConfigLoader.load(profile, List.of())).log().size())
                .isEqualTo(5);
    }

    @Test
    void aSweepsBaseConfig_resolvesItsPathsBesideItself_andBestYamlReplaysFromAnywhere() throws IOException {
        write("base/data/t.csv", TRACE);
        write("base/replay.yaml", """
                workload: {type: trace, trace: {format: azure, path: data/t.csv}}
                timing: {type: fixed}
                """);
        Path sweep = write("sweeps/s.yaml", """
                base: ../base/replay.yaml
                space:
                  cluster.workers: [1, 2]
                """);
        SweepSpec s = SweepSpec.load(sweep);
        Sweeps.Outcome o;
        try (SweepEngine e = new LocalEngine(1, (d, t) -> {})) {
            o = Sweeps.run(s, e, false);
        }
        assertThat(o.results()).allSatisfy(r -> assertThat(r.error()).isNull());
        Path out = Files.createDirectories(tmp.resolve("out"));
        SweepOutput.writeAll(s, o, out);
        SimConfig best = ConfigLoader.load(out.resolve("best.yaml"), List.of());
        assertThat(Path.of(best.workload().trace().path())).isAbsolute();
        assertThat(Simulation.run(best).log().size()).isEqualTo(3);
    }

    @Test
    void aPoolsFiles_areMadeAbsoluteInAWrittenConfig_likeTheTopLevelOnes() throws IOException {
        Path config = write("runs/pools.yaml", """
                timing: {type: fixed, calibration: top.yaml}
                cluster:
                  pools:
                    - {name: a, workers: 1}
                    - {name: b, workers: 1, timing: {calibration: cal/b.yaml}}
                """);
        SimConfig c = ConfigLoader.load(config, List.of());
        String yaml = ConfigLoader.toYamlWithAbsolutePaths(c);
        String dir = tmp.resolve("runs").toAbsolutePath().normalize().toString();
        assertThat(yaml)
                .contains(Path.of(dir, "top.yaml").toString())
                .contains(Path.of(dir, "cal", "b.yaml").toString());
        assertThat(yaml).doesNotContain("calibration: \"cal/b.yaml\"").doesNotContain("calibration: cal/b.yaml");
    }
}
