package io.servesim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** The {@code *_gbps} keys renamed to {@code *_gbytes_per_s}: old names still load, with a warning. */
class DeprecatedKeysTest {
    private static final String KVCR_WARNING =
            "engine.kvcr.bandwidth_gbps is deprecated: use engine.kvcr.bandwidth_gbytes_per_s (GB/s)";

    private static ConfigLoader.Loaded load(String yaml, String... overrides) {
        return ConfigLoader.fromYamlWithWarnings(yaml, "test.yaml", List.of(overrides));
    }

    /** YAML text setting {@code value} at the dotted {@code path}. */
    private static String yamlAt(String path, String value) {
        String[] keys = path.split("\\.", -1);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < keys.length; i++) {
            sb.append("  ".repeat(i)).append(keys[i]).append(':');
            sb.append(i == keys.length - 1 ? " " + value + "\n" : "\n");
        }
        return sb.toString();
    }

    private static JsonNode at(SimConfig c, String path) {
        JsonNode n = ConfigLoader.toTree(c);
        for (String k : path.split("\\.", -1)) {
            n = n.path(k);
        }
        return n;
    }

    @Test
    void everyRename_oldNameInTheFile_loadsTheSameValueUnderTheNewName_withOneWarning() {
        for (ConfigLoader.Rename r : ConfigLoader.RENAMED) {
            ConfigLoader.Loaded old = load(yamlAt(r.oldPath(), "12.5"));
            ConfigLoader.Loaded current = load(yamlAt(r.newPath(), "12.5"));

            assertThat(old.config()).as(r.oldPath()).isEqualTo(current.config());
            assertThat(at(old.config(), r.newPath()).asDouble()).as(r.newPath()).isEqualTo(12.5);
            assertThat(old.warnings())
                    .as(r.oldPath())
                    .containsExactly(r.oldPath() + " is deprecated: use " + r.newPath() + " (" + r.unit() + ")");
            assertThat(current.warnings()).as(r.newPath()).isEmpty();
        }
    }

    @Test
    void everyRename_oldNameInASetOverride_loadsTheSameValue_withOneWarning() {
        for (ConfigLoader.Rename r : ConfigLoader.RENAMED) {
            ConfigLoader.Loaded old = load("", r.oldPath() + "=7");
            ConfigLoader.Loaded current = load("", r.newPath() + "=7");

            assertThat(old.config()).as(r.oldPath()).isEqualTo(current.config());
            assertThat(at(old.config(), r.newPath()).asDouble()).isEqualTo(7.0);
            assertThat(old.warnings()).hasSize(1).first().asString().startsWith(r.oldPath() + " is deprecated");
            assertThat(current.warnings()).isEmpty();
        }
    }

    @Test
    void kvcrBandwidth_warningReadsAsDocumented() {
        ConfigLoader.Loaded l = load("engine:\n  kvcr:\n    bandwidth_gbps: 400\n");

        assertThat(l.warnings()).containsExactly(KVCR_WARNING);
        assertThat(l.config().engine().kvcr().bandwidthGbytesPerS()).isEqualTo(400.0);
    }

    @Test
    void oldNameInsideAFlowObjectOverride_isRenamedToo() {
        ConfigLoader.Loaded l = load("", "engine.kvcr={bandwidth_gbps: 10, fabric_gbps: 20}");
        ConfigLoader.Loaded outer = load("", "engine={kvcr: {bandwidth_gbps: 10}}");

        assertThat(l.config().engine().kvcr().bandwidthGbytesPerS()).isEqualTo(10.0);
        assertThat(l.config().engine().kvcr().fabricGbytesPerS()).isEqualTo(20.0);
        assertThat(l.warnings()).hasSize(2);
        assertThat(outer.config().engine().kvcr().bandwidthGbytesPerS()).isEqualTo(10.0);
        assertThat(outer.warnings()).containsExactly(KVCR_WARNING);
    }

    @Test
    void bothNamesInTheFile_isAnErrorNamingBoth() {
        assertThatThrownBy(() -> load("engine:\n  kvcr:\n    bandwidth_gbps: 50\n    bandwidth_gbytes_per_s: 50\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("engine.kvcr.bandwidth_gbps: deprecated name of engine.kvcr.bandwidth_gbytes_per_s,"
                        + " which is also set: keep only engine.kvcr.bandwidth_gbytes_per_s");
    }

    @Test
    void bothNamesAmongTheSetOverrides_isAnErrorNamingBoth() {
        assertThatThrownBy(() -> load(
                        "",
                        "engine.kv_cache.host_offload.d2h_gbytes_per_s=8",
                        "engine.kv_cache.host_offload.d2h_gbps=8"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("engine.kv_cache.host_offload.d2h_gbps")
                .hasMessageContaining("engine.kv_cache.host_offload.d2h_gbytes_per_s");
        assertThatThrownBy(() -> load("", "timing.custom_gpu={link_gbps: 1, link_gbytes_per_s: 1}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(
                        "timing.custom_gpu.link_gbps: deprecated name of" + " timing.custom_gpu.link_gbytes_per_s");
    }

    @Test
    void aSetOverrideOfTheNewName_overridesTheFilesOldName_asAnyOverrideDoes() {
        ConfigLoader.Loaded l =
                load("engine:\n  kvcr:\n    bandwidth_gbps: 50\n", "engine.kvcr.bandwidth_gbytes_per_s=100");

        assertThat(l.config().engine().kvcr().bandwidthGbytesPerS()).isEqualTo(100.0);
        assertThat(l.warnings()).containsExactly(KVCR_WARNING);
    }

    @Test
    void theSameDeprecatedKeyTwice_warnsOnce() {
        ConfigLoader.Loaded l = load("engine:\n  kvcr:\n    bandwidth_gbps: 50\n", "engine.kvcr.bandwidth_gbps=60");

        assertThat(l.config().engine().kvcr().bandwidthGbytesPerS()).isEqualTo(60.0);
        assertThat(l.warnings()).containsExactly(KVCR_WARNING);
    }

    @Test
    void unknownKey_listsTheNewNamesOnly() {
        assertThatThrownBy(() -> load("", "engine.kvcr.bandwidth=1"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.kvcr.bandwidth: unknown key")
                .hasMessageContaining("bandwidth_gbytes_per_s")
                .hasMessageContaining("fabric_gbytes_per_s")
                .hasMessageNotContaining("_gbps");
        assertThatThrownBy(() -> load("engine:\n  kv_cache:\n    host_offload: {d2h: 1}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("engine.kv_cache.host_offload.d2h: unknown key")
                .hasMessageContaining("d2h_gbytes_per_s, first_byte_ms, h2d_gbytes_per_s")
                .hasMessageNotContaining("_gbps");
    }

    @Test
    void theRenameTable_matchesTheDefaults() {
        JsonNode defaults = ConfigLoader.defaults();
        for (ConfigLoader.Rename r : ConfigLoader.RENAMED) {
            JsonNode section = defaults;
            for (String k : r.section().split("\\.", -1)) {
                section = section.path(k);
            }
            assertThat(section.has(r.newKey())).as(r.newPath()).isTrue();
            assertThat(section.has(r.oldKey())).as(r.oldPath()).isFalse();
        }
    }

    @Test
    void loadFromAFile_reportsTheWarning_andPlainLoadDropsIt(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("c.yaml");
        Files.writeString(f, "engine:\n  kvcr:\n    bandwidth_gbps: 25\n");

        ConfigLoader.Loaded l = ConfigLoader.loadWithWarnings(f, List.of("engine.kvcr.fabric_gbps=200"));

        assertThat(l.config().engine().kvcr().bandwidthGbytesPerS()).isEqualTo(25.0);
        assertThat(l.config().engine().kvcr().fabricGbytesPerS()).isEqualTo(200.0);
        assertThat(l.warnings())
                .containsExactly(
                        KVCR_WARNING,
                        "engine.kvcr.fabric_gbps is deprecated: use engine.kvcr.fabric_gbytes_per_s (GB/s)");
        assertThat(ConfigLoader.load(f, List.of("engine.kvcr.fabric_gbps=200"))).isEqualTo(l.config());
    }
}
