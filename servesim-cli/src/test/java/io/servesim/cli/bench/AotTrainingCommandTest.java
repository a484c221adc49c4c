package io.servesim.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.cli.CliRun;
import io.servesim.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** servesim bench aot-training: the launcher's cache training replays generated traces through the replay command. */
class AotTrainingCommandTest {
    @TempDir
    Path dir;

    @Test
    void aSmallTraining_replaysEveryStep_andEachWritesItsReports() {
        CliRun r = CliRun.of("bench", "aot-training", dir.toString(), "--scale", "0.01");
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.OK);
        for (String step : AotTrainingCommand.STEP_NAMES) {
            assertThat(r.out()).contains("aot-training: " + step + " replayed");
            assertThat(dir.resolve(step).resolve("canonical.json")).isNotEmptyFile();
        }
        assertThat(dir.resolve("sessions").resolve("report.html")).isNotEmptyFile();
    }

    @Test
    void theGeneratedAzureTrace_isTheAzureFormat_inTimeOrder() throws IOException {
        Path file = dir.resolve("azure.csv");
        AotTrainingCommand.writeAzureTrace(file, 50, 1L);
        List<String> lines = Files.readAllLines(file);
        assertThat(lines).hasSize(51);
        assertThat(lines.get(0)).isEqualTo("TIMESTAMP,ContextTokens,GeneratedTokens");
        String previous = "";
        for (String line : lines.subList(1, lines.size())) {
            assertThat(line).matches("2023-11-16 \\d\\d:\\d\\d:\\d\\d\\.\\d{7},\\d+,\\d+");
            assertThat(line.substring(0, 27)).isGreaterThanOrEqualTo(previous);
            previous = line.substring(0, 27);
            String[] f = line.split(",", -1);
            assertThat(Integer.parseInt(f[1])).isBetween(2, 4000);
            assertThat(Integer.parseInt(f[2])).isBetween(1, 2000);
        }
    }

    @Test
    void theGeneratedMooncakeTrace_sharesTheSystemBlock_andRepeatsEachSessionsPreviousTurn() throws IOException {
        Path file = dir.resolve("mooncake.jsonl");
        AotTrainingCommand.writeMooncakeTrace(file, 30, 2L);
        List<String> lines = Files.readAllLines(file);
        assertThat(lines).isNotEmpty();
        long previous = -1;
        int extending = 0;
        java.util.Set<String> prompts = new java.util.HashSet<>();
        for (String line : lines) {
            var m = java.util.regex.Pattern.compile(
                            "\\{\"timestamp\": (\\d+), \"input_length\": (\\d+), \"output_length\": (\\d+),"
                                    + " \"hash_ids\": \\[([0-9, ]+)]}")
                    .matcher(line);
            assertThat(m.matches()).as(line).isTrue();
            long millis = Long.parseLong(m.group(1));
            assertThat(millis).isGreaterThanOrEqualTo(previous);
            previous = millis;
            String ids = m.group(4);
            assertThat(ids).startsWith("0");
            assertThat(ids.split(", ", -1)).hasSize((Integer.parseInt(m.group(2)) + 511) / 512);
            for (String other : prompts) {
                if (other.chars().filter(c -> c == ',').count() >= 2
                        && ids.startsWith(other.substring(0, other.lastIndexOf(',') + 1))) {
                    extending++; // a later turn starts with an earlier turn's full blocks
                    break;
                }
            }
            prompts.add(ids);
        }
        assertThat(extending).isPositive();
    }

    @Test
    void aDirectoryThatIsAFile_isAClearError() throws IOException {
        Path file = Files.writeString(dir.resolve("taken"), "x");
        CliRun r = CliRun.of("bench", "aot-training", file.toString(), "--scale", "0.01");
        assertThat(r.exit()).isEqualTo(Main.FAILURE);
        assertThat(r.err())
                .contains("cannot write the training inputs in " + file)
                .doesNotContain("Exception");
    }

    @Test
    void badArguments_areUsageErrors() {
        assertThat(CliRun.of("bench", "aot-training", dir.toString(), "--scale", "0")
                        .exit())
                .isEqualTo(Main.USAGE);
        CliRun r = CliRun.of("bench", "aot-training", dir.toString(), "--steps", "nope");
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err()).contains("unknown replay 'nope'");
    }
}
