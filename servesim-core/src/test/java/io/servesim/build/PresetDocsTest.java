package io.servesim.build;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.timing.Specs;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/config.md's `timing.model` row lists exactly the model presets `models.yaml` ships. */
class PresetDocsTest {
    @Test
    void theTimingModelRow_namesEveryPreset_andNothingElse() throws IOException {
        String row = Files.readAllLines(TestClassesRunTest.root().resolve("docs/config.md")).stream()
                .filter(l -> l.startsWith("| `timing.model` |"))
                .findFirst()
                .orElseThrow();
        String presets = row.substring(row.indexOf("Preset ("), row.indexOf(") or a path"));
        List<String> named = new ArrayList<>();
        Matcher m = Pattern.compile("`([a-z0-9.\\-]+)`").matcher(presets);
        while (m.find()) {
            named.add(m.group(1));
        }
        assertThat(named).containsExactlyInAnyOrderElementsOf(Specs.modelPresets());
    }
}
