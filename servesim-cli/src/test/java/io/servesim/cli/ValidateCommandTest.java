package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** servesim validate: the table, validation.json's keys, and the tolerance exit code. */
class ValidateCommandTest {
    @TempDir
    Path tmp;

    private Path setUp() throws IOException {
        Files.writeString(tmp.resolve("w.jsonl"), """
                {"arrival_ms":0,"input_length":500,"output_length":20}
                {"arrival_ms":100,"input_length":800,"output_length":30}
                {"arrival_ms":200,"input_length":300,"output_length":10}
                """);
        Path cfg = tmp.resolve("c.yaml");
        Files.writeString(cfg, """
                workload: {type: trace, trace: {format: servesim, path: %s}}
                timing: {model: llama-3.1-8b, gpu: h100-sxm}
                """.formatted(tmp.resolve("w.jsonl")));
        return cfg;
    }

    @Test
    void validate_writesEveryMetricStatistic_andExitsOneWhenAToleranceIsExceeded() throws IOException {
        Path cfg = setUp();
        // a "measured" run 10x slower than anything the H100 roofline predicts
        Path measured = tmp.resolve("m.csv");
        Files.writeString(
                measured, "request_id,ttft_ms,tpot_ms,e2e_ms\n0,500,100,2400\n1,600,110,3800\n2,400,90,1300\n");
        Path out = tmp.resolve("out");
        CliRun loose = CliRun.of(
                "validate", "--config", cfg.toString(), "--measured", measured.toString(), "--out", out.toString());
        assertThat(loose.exit()).as(loose.err()).isZero();
        assertThat(loose.out()).contains("ttft mean").contains("tpot p99").contains("e2e KS");
        JsonNode v = JsonMapper.builder()
                .build()
                .readTree(out.resolve("validation.json").toFile());
        for (String metric : new String[] {"ttft_ms", "tpot_ms", "e2e_ms"}) {
            for (String stat : new String[] {"mean", "p50", "p90", "p95", "p99"}) {
                JsonNode s = v.get("metrics").get(metric).get(stat);
                assertThat(s.has("measured") && s.has("simulated") && s.has("error_pct"))
                        .as(metric + "." + stat)
                        .isTrue();
            }
        }
        assertThat(v.get("metrics").get("ttft_ms").get("mean").get("measured").asDouble())
                .isEqualTo(500.0);
        assertThat(v.get("passed").asBoolean()).isTrue();

        CliRun strict = CliRun.of(
                "validate",
                "--config",
                cfg.toString(),
                "--measured",
                measured.toString(),
                "--tolerance",
                "ttft=25,tpot=15",
                "--out",
                out.toString());
        assertThat(strict.exit()).isEqualTo(Main.FAILURE);
        assertThat(strict.err()).contains("tolerance exceeded").contains("ttft mean error");
        assertThat(Files.readString(out.resolve("validation.json"))).contains("\"passed\" : false");
    }

    @Test
    void badToleranceAndMalformedMeasuredFiles_areUsageErrors() throws IOException {
        Path cfg = setUp();
        Path measured = tmp.resolve("m.csv");
        Files.writeString(measured, "request_id,ttft_ms,tpot_ms,e2e_ms\n0,abc,1,2\n");
        CliRun bad = CliRun.of("validate", "--config", cfg.toString(), "--measured", measured.toString());
        assertThat(bad.exit()).isEqualTo(Main.USAGE);
        assertThat(bad.err()).contains("m.csv:2: ttft_ms");
        CliRun tol = CliRun.of(
                "validate", "--config", cfg.toString(), "--measured", measured.toString(), "--tolerance", "speed=3");
        assertThat(tol.exit()).isEqualTo(Main.USAGE);
        assertThat(tol.err()).contains("unknown metric 'speed'");
    }
}
