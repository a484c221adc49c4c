package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.RunDirectory;
import io.servesim.timing.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
    void windowsOfArrivals_fromVllmsPerRequestTimestamps() throws IOException {
        Path cfg = setUp(); // three requests arriving at 0, 0.1 and 0.2 s
        Path measured = tmp.resolve("m.jsonl");
        Files.writeString(measured, """
                {"queued_ts": 50.0, "first_token_ts": 50.1, "last_token_ts": 50.5, "output_toks": 20}
                {"queued_ts": 50.1, "first_token_ts": 50.3, "last_token_ts": 50.9, "output_toks": 30}
                {"queued_ts": 50.2, "first_token_ts": 50.4, "last_token_ts": 50.6, "output_toks": 10}
                """);
        Path out = tmp.resolve("w");
        CliRun r = CliRun.of(
                "validate",
                "--config",
                cfg.toString(),
                "--measured",
                measured.toString(),
                "--out",
                out.toString(),
                "--window-s",
                "0.15");
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode windows = JsonMapper.builder()
                .build()
                .readTree(out.resolve("validation.json").toFile())
                .get("windows");
        // counted from the first queued request: [0, 0.15) holds the first two, [0.15, 0.3) the third
        assertThat(windows).hasSize(2);
        assertThat(windows.get(0).get("ttft_ms").get("measured_count").asInt()).isEqualTo(2);
        assertThat(windows.get(0).get("ttft_ms").get("measured_mean").asDouble())
                .isCloseTo(150.0, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(windows.get(0).get("ttft_ms").get("simulated_count").asInt()).isEqualTo(2);
        assertThat(windows.get(1).get("e2e_ms").get("measured_count").asInt()).isEqualTo(1);
        assertThat(windows.get(1).get("e2e_ms").get("simulated_count").asInt()).isEqualTo(1);
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

    private static final Path CORPUS = Path.of("../servesim-core/src/test/resources/corpus");

    @Test
    void corpus_writesOneCsvRowAndOneValidationJsonPerRun_andATableWithTheMeanErrors() throws IOException {
        Path out = tmp.resolve("corpus");
        CliRun r = CliRun.of("validate", "--corpus", CORPUS.toString(), "--out", out.toString(), "--threads", "2");
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> csv = Files.readAllLines(out.resolve("corpus.csv"));
        assertThat(csv.get(0))
                .startsWith("run,gpu,model,tensor_parallel,data_parallel,ttft_mean_err_pct,tpot_mean_err_pct,"
                        + "e2e_mean_err_pct,ttft_p99_err_pct,e2e_p99_err_pct")
                .isEqualTo(CorpusOutput.CORPUS_HEADER)
                .endsWith("tpot_p99_err_pct,requests,num_gpu_blocks_stated,num_gpu_blocks_derived,client_side,"
                        + "measured_failed,simulated_timed_out,error");
        assertThat(csv).hasSize(3);
        String[] blis = csv.get(1).split(",", -1);
        String[] sharegpt = csv.get(2).split(",", -1);
        assertThat(blis).startsWith("blis_H100_Llama-2-7b_tp1_codegen", "h100-sxm", "llama-2-7b", "1", "1");
        assertThat(sharegpt).startsWith("llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1", "rtx-pro-6000", "llama-3.1-8b");
        for (String[] row : List.of(blis, sharegpt)) {
            assertThat(row).hasSize(18);
            assertThat(row[15]).isEqualTo("0"); // no measured request failed
            assertThat(row[16]).isEqualTo("0"); // and no simulated client gave up
            assertThat(row[17]).isEmpty(); // validated: no error
            for (int i = 3; i < 14; i++) {
                if (!row[i].isEmpty()) {
                    assertThat(Double.parseDouble(row[i]))
                            .as(row[0] + " column " + i)
                            .isFinite();
                }
            }
            assertThat(row[14]).isIn("true", "false");
            assertThat(Files.isRegularFile(out.resolve(row[0]).resolve("validation.json")))
                    .isTrue();
        }
        assertThat(blis[11]).isEqualTo("120");
        assertThat(blis[12]).isEqualTo("7462"); // stated, and derived beside it
        assertThat(blis[13]).isNotEmpty();
        assertThat(blis[14]).isEqualTo("true"); // client-side timing
        assertThat(sharegpt[11]).isEqualTo("60");
        assertThat(sharegpt[12]).isEmpty(); // not stated
        assertThat(sharegpt[14]).isEqualTo("false");
        List<String> table = r.out().lines().toList();
        assertThat(table.get(0)).startsWith("run").contains("TTFT mean%").contains("blocks derived");
        assertThat(table.get(1)).startsWith("blis_H100_Llama-2-7b_tp1_codegen");
        assertThat(table.get(2)).startsWith("llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1");
        assertThat(table.get(3)).startsWith("mean |error|");
        assertThat(table.get(1).indexOf("h100-sxm")).isEqualTo(table.get(2).indexOf("rtx-pro-6000")); // aligned

        JsonNode run = JsonMapper.builder()
                .build()
                .readTree(out.resolve("blis_H100_Llama-2-7b_tp1_codegen/validation.json")
                        .toFile())
                .get("run");
        assertThat(run.get("model").asString()).isEqualTo("llama-2-7b");
        assertThat(run.get("client_side").asBoolean()).isTrue();
        assertThat(run.get("num_gpu_blocks").get("stated").asInt()).isEqualTo(7462);
        assertThat(run.get("num_gpu_blocks").get("used").asInt()).isEqualTo(7462);
        assertThat(run.get("num_gpu_blocks").get("derived").asInt()).isEqualTo(Integer.parseInt(blis[13]));

        Path single = tmp.resolve("single");
        CliRun one = CliRun.of("validate", "--corpus", CORPUS.toString(), "--out", single.toString());
        assertThat(one.out())
                .isEqualTo(r.out()
                        .replace(
                                out.toAbsolutePath().normalize().toString(),
                                single.toAbsolutePath().normalize().toString()));
        assertThat(Files.readString(single.resolve("corpus.csv")))
                .isEqualTo(Files.readString(out.resolve("corpus.csv")));
    }

    @Test
    void corpus_skipsARunItCannotReadOrBuild_validatesTheOthers_andExitsWithTheErrorsInCorpusCsv() throws IOException {
        Path dir = tmp.resolve("mixed");
        for (String run : List.of("blis_H100_Llama-2-7b_tp1_codegen", "llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1")) {
            copy(CORPUS.resolve(run), dir.resolve(run));
        }
        // a model no preset has: meta.json cannot be read into a deployment
        copy(CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen"), dir.resolve("a_unknown_model"));
        Path meta = dir.resolve("a_unknown_model/meta.json");
        Files.writeString(meta, Files.readString(meta).replace("meta-llama/Llama-2-7b-hf", "acme/Nonexistent-7B, v2"));
        // read, but its deployment does not fit: the 70B model's weights on one GPU
        copy(CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen"), dir.resolve("m_does_not_fit"));
        meta = dir.resolve("m_does_not_fit/meta.json");
        Files.writeString(
                meta,
                Files.readString(meta)
                        .replace("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf")
                        .replaceAll("\"num_gpu_blocks\": *[0-9]+", "\"num_gpu_blocks\": null"));
        Path out = tmp.resolve("mixed-out");
        CliRun r = CliRun.of("validate", "--corpus", dir.toString(), "--out", out.toString(), "--threads", "2");

        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("run a_unknown_model: meta.json: model: unknown model 'acme/Nonexistent-7B, v2'")
                .contains("not validated m_does_not_fit")
                .contains("2 of 4 runs not validated");
        assertThat(r.out()).contains("not validated (2):").contains("  m_does_not_fit: run m_does_not_fit: ");
        List<String> csv = Files.readAllLines(out.resolve("corpus.csv"));
        assertThat(csv).hasSize(5);
        assertThat(csv.get(1)).startsWith("a_unknown_model,,,").contains("\"run a_unknown_model: meta.json: model:");
        assertThat(csv.get(4).split(",", -1)).hasSizeGreaterThanOrEqualTo(18);
        assertThat(csv.get(4).split(",", -1)[17]).startsWith("\"run m_does_not_fit: "); // quoted: it holds commas
        assertThat(csv.get(2))
                .startsWith("blis_H100_Llama-2-7b_tp1_codegen,h100-sxm,llama-2-7b,")
                .endsWith(",true,0,0,");
        assertThat(csv.get(3)).startsWith("llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1,rtx-pro-6000,");
        assertThat(csv.get(4)).startsWith("m_does_not_fit,,,").contains("does not fit on h100-sxm");
        // the validated runs' rows are those of a corpus without the failing runs
        Path clean = tmp.resolve("clean");
        CliRun c = CliRun.of("validate", "--corpus", CORPUS.toString(), "--out", clean.toString());
        assertThat(c.exit()).as(c.err()).isZero();
        List<String> cleanCsv = Files.readAllLines(clean.resolve("corpus.csv"));
        assertThat(List.of(csv.get(2), csv.get(3))).isEqualTo(cleanCsv.subList(1, 3));
        assertThat(out.resolve("a_unknown_model")).doesNotExist();
        assertThat(out.resolve("m_does_not_fit")).doesNotExist();
    }

    private static void copy(Path from, Path to) throws IOException {
        CliRun.copyRunFolder(from, to);
    }

    @Test
    void meta_givesARunAFactItsMetaJsonLacks_inACorpusOrOneRun_andAFactAboutNoRunIsAUsageError() throws IOException {
        // vLLM 0.15 runs the unfused all-reduce: a TP-1 run's replay does not change, but the fact reaches the run
        Path plain = tmp.resolve("plain");
        Path stated = tmp.resolve("stated");
        CliRun a = CliRun.of("validate", "--corpus", CORPUS.toString(), "--out", plain.toString());
        CliRun b = CliRun.of(
                "validate",
                "--corpus",
                CORPUS.toString(),
                "--out",
                stated.toString(),
                "--meta",
                "blis_*:vllm_version=0.15.1");
        assertThat(b.exit()).as(b.err()).isZero();
        assertThat(Files.readString(stated.resolve("corpus.csv")))
                .isEqualTo(Files.readString(plain.resolve("corpus.csv")));
        assertThat(a.exit()).isZero();
        Path blis = CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen");
        CliRun one = CliRun.of(
                "validate",
                "--run",
                blis.toString(),
                "--out",
                tmp.resolve("one").toString(),
                "--meta",
                "blis_H100_Llama-2-7b_tp1_codegen:max_num_seqs=1");
        assertThat(one.exit()).as(one.err()).isZero();
        assertThat(one.out())
                .isNotEqualTo(CliRun.of(
                                "validate",
                                "--run",
                                blis.toString(),
                                "--out",
                                tmp.resolve("two").toString())
                        .out()); // one sequence at a time: another replay
        CliRun other = CliRun.of(
                "validate",
                "--run",
                blis.toString(),
                "--out",
                tmp.resolve("x").toString(),
                "--meta",
                "other:max_num_seqs=1");
        assertThat(other.exit()).isEqualTo(Main.USAGE);
        assertThat(other.err()).contains("--meta").contains("not other");
        CliRun none = CliRun.of(
                "validate",
                "--corpus",
                CORPUS.toString(),
                "--out",
                tmp.resolve("y").toString(),
                "--meta",
                "nope*:dtype=fp8");
        assertThat(none.exit()).isEqualTo(Main.USAGE);
        assertThat(none.err()).contains("no run of corpus").contains("nope*");
        CliRun malformed = CliRun.of(
                "validate",
                "--corpus",
                CORPUS.toString(),
                "--out",
                tmp.resolve("z").toString(),
                "--meta",
                "dtype=fp8");
        assertThat(malformed.exit()).isEqualTo(Main.USAGE);
        assertThat(malformed.err()).contains("expected RUN:FIELD=VALUE").doesNotContain("Exception");
    }

    @Test
    void aCorpusDirectory_isOneValidationExactlyWhenItsManifestMatches_andStaleRunFoldersGo() throws IOException {
        Path out = tmp.resolve("corpus-manifest");
        // an earlier validation of a run folder that is no longer in the corpus, and a write it left unfinished
        Files.createDirectories(out.resolve("gone_run"));
        Files.writeString(out.resolve("gone_run/validation.json"), "{}");
        Files.writeString(out.resolve("gone_run/.validation.json.123.tmp"), "partial");
        CliRun r = CliRun.of("validate", "--corpus", CORPUS.toString(), "--out", out.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("listed in manifest.json");
        assertThat(out.resolve("gone_run/validation.json")).doesNotExist();
        assertThat(out.resolve("gone_run/.validation.json.123.tmp")).doesNotExist();
        assertThat(RunDirectory.CORPUS.verify(out)).isNull();
        assertThat(Files.readString(out.resolve(RunDirectory.MANIFEST)))
                .contains("\"kind\" : \"corpus\"")
                .contains("\"corpus.csv\"")
                .contains("\"blis_H100_Llama-2-7b_tp1_codegen/validation.json\"")
                .contains("\"blis_H100_Llama-2-7b_tp1_codegen/requests.csv\"")
                .contains("\"llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1/validation.json\"");
        // another validation's file beside them is named
        Files.writeString(out.resolve("blis_H100_Llama-2-7b_tp1_codegen/validation.json"), "{\"other\": 1}");
        assertThat(RunDirectory.CORPUS.verify(out))
                .contains("mixes two corpus validations")
                .contains("blis_H100_Llama-2-7b_tp1_codegen/validation.json differs");
    }

    @Test
    void experts_sayWhichFusedMoeKernelPricesThem_orThatTheRooflineDoes() {
        // Mixtral's BF16 experts on an H100: vLLM's measured fused MoE, the newest version's fit (0.24: 31.6 us, 3,005
        // GB/s; measured-kernels.yaml fused_moe), at the default moe_efficiency
        SimConfig h100 = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=mixtral-8x7b", "timing.gpu=h100-sxm", "timing.tensor_parallel=2"));
        assertThat(CorpusOutput.experts(Deployment.resolve(h100)))
                .isEqualTo("experts: bf16, vLLM's measured fused MoE (AIConfigurator: 31.6 us per layer call + the"
                        + " touched experts at 3005 GB/s; prefill FLOPs at 621.3 TFLOP/s, at moe_efficiency "
                        + h100.timing().roofline().moeEfficiency()
                        + ")\n");
        // a stated vLLM version takes that version's fit; FP8 experts the block-scaled FP8 kernel's
        SimConfig fp8 = ConfigLoader.fromYaml(
                "",
                "t",
                List.of(
                        "timing.model=mixtral-8x7b",
                        "timing.gpu=h100-sxm",
                        "timing.expert_dtype=fp8",
                        "timing.vllm_version=\"0.19.0\""));
        assertThat(CorpusOutput.experts(Deployment.resolve(fp8)))
                .contains("42.0 us per layer call")
                .contains("2907 GB/s")
                .contains("prefill FLOPs at 615.9 TFLOP/s"); // the measured block-FP8 fused-MoE rate (vLLM 0.24)
        // no fused-MoE table for the A100: the roofline prices them
        SimConfig a100 = ConfigLoader.fromYaml(
                "", "t", List.of("timing.model=mixtral-8x7b", "timing.gpu=a100-sxm-80gb", "timing.tensor_parallel=2"));
        assertThat(CorpusOutput.experts(Deployment.resolve(a100)))
                .startsWith("experts: bf16, roofline (no measured fused MoE for them on");
        // a dense model has no experts line
        SimConfig dense = ConfigLoader.fromYaml("", "t", List.of("timing.model=llama-3.1-8b", "timing.gpu=h100-sxm"));
        assertThat(CorpusOutput.experts(Deployment.resolve(dense))).isEmpty();
    }

    @Test
    void run_saysHowItsCollectivesArePriced_andHowToStateAMachineWithoutPeerAccess() {
        String pro = CORPUS.resolve("llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1").toString();
        CliRun tp1 =
                CliRun.of("validate", "--run", pro, "--out", tmp.resolve("a").toString());
        assertThat(tp1.exit()).as(tp1.err()).isZero();
        assertThat(tp1.out()).doesNotContain("collectives:");
        CliRun tp2 = CliRun.of(
                "validate", "--run", pro, "--out", tmp.resolve("b").toString(), "--set", "timing.tensor_parallel=2");
        assertThat(tp2.exit()).as(tp2.err()).isZero();
        assertThat(tp2.out())
                .contains("collectives: measured tables (AIConfigurator, taken with GPU peer-to-peer access; TP"
                        + " all-reduce at 0.5842 of its isolated rate; a machine without it: gpu_p2p false and"
                        + " link_gbytes_per_s in meta.json");
        CliRun slower = tp2(pro, "b2", "timing.roofline.collective_efficiency=0.25");
        assertThat(slower.exit()).as(slower.err()).isZero();
        assertThat(slower.out()).contains("TP all-reduce at 0.25 of its isolated rate");
        CliRun staged = tp2(pro, "c", "timing.gpu_p2p=false", "timing.link_gbytes_per_s=16");
        assertThat(staged.exit()).as(staged.err()).isZero();
        assertThat(staged.out())
                .contains("collectives: link model, PCIe at 16 GB/s per direction, no peer-to-peer access");
    }

    /** {@code validate --run RUN} at TP 2 into {@code tmp/out}, with more overrides. */
    private CliRun tp2(String run, String out, String... sets) {
        List<String> args = new ArrayList<>(List.of(
                "validate", "--run", run, "--out", tmp.resolve(out).toString(), "--set", "timing.tensor_parallel=2"));
        for (String set : sets) {
            args.add("--set");
            args.add(set);
        }
        return CliRun.of(args.toArray(String[]::new));
    }

    /**
     * requests.csv lines each workload row up with its replay: the measured cells are measured.jsonl's, and the
     * simulated cells average to validation.json's simulated means (the same frontend applied to the same requests).
     */
    @Test
    void run_writesRequestsCsv_measuredAndSimulatedSideBySide_row_by_row() throws IOException {
        Path out = tmp.resolve("rows");
        Path dir = CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen");
        CliRun r = CliRun.of("validate", "--run", dir.toString(), "--out", out.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("and requests.csv");
        List<String> rows = Files.readAllLines(out.resolve("requests.csv"));
        assertThat(rows.get(0)).isEqualTo(io.servesim.validate.RequestComparison.HEADER);
        assertThat(rows).hasSize(121);
        List<String> measured = Files.readAllLines(dir.resolve("measured.jsonl"));
        JsonMapper json = JsonMapper.builder().build();
        double[] simulatedSum = new double[3];
        for (int i = 1; i < rows.size(); i++) {
            String[] c = rows.get(i).split(",", -1);
            assertThat(c).hasSize(11);
            assertThat(c[10]).isEqualTo("completed");
            assertThat(c[0]).isEqualTo(Integer.toString(i - 1));
            JsonNode m = json.readTree(measured.get(i - 1));
            assertThat(Double.parseDouble(c[2])).isCloseTo(m.get("ttft_ms").asDouble(), within(1e-4));
            assertThat(Double.parseDouble(c[4])).isCloseTo(m.get("e2e_ms").asDouble(), within(1e-4));
            for (int k = 0; k < 3; k++) {
                simulatedSum[k] += Double.parseDouble(c[5 + k]);
            }
            assertThat(Integer.parseInt(c[8]))
                    .as("the request itself is in its first token's step")
                    .isPositive();
        }
        JsonNode metrics =
                json.readTree(out.resolve("validation.json").toFile()).get("metrics");
        String[] names = {"ttft_ms", "tpot_ms", "e2e_ms"};
        for (int k = 0; k < 3; k++) {
            assertThat(simulatedSum[k] / 120)
                    .as(names[k])
                    .isCloseTo(
                            metrics.get(names[k]).get("mean").get("simulated").asDouble(), within(1e-3));
        }
    }

    @Test
    void run_printsTheDeploymentAndWritesValidationJsonWithTheRunObject() throws IOException {
        Path out = tmp.resolve("one");
        CliRun r = CliRun.of(
                "validate",
                "--run",
                CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen").toString(),
                "--out",
                out.toString(),
                "--set",
                "timing.roofline.mfu=0.5");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("run blis_H100_Llama-2-7b_tp1_codegen: h100-sxm, llama-2-7b, TP 1, DP 1, EP 1, client-side")
                .contains("num_gpu_blocks: stated 7462, derived ")
                .contains("engine loop: async (vLLM's default from v0.14.0)")
                .contains("ttft mean");
        CliRun sync = CliRun.of(
                "validate",
                "--run",
                CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen").toString(),
                "--out",
                tmp.resolve("sync").toString(),
                "--set",
                "engine.scheduler.async_scheduling=false");
        assertThat(sync.exit()).as(sync.err()).isZero();
        assertThat(sync.out()).contains("engine loop: synchronous");
        JsonNode v = JsonMapper.builder()
                .build()
                .readTree(out.resolve("validation.json").toFile());
        assertThat(v.get("run").get("name").asString()).isEqualTo("blis_H100_Llama-2-7b_tp1_codegen");
        assertThat(v.get("run").get("shared_prefix").get("tokens").asInt()).isEqualTo(100);
        assertThat(v.get("metrics").get("ttft_ms").get("measured_count").asInt())
                .isEqualTo(120);
        assertThat(v.get("passed").asBoolean()).isTrue();
        assertThat(v.has("windows")).isFalse();

        // --window-s: the same run cut into 10-second windows of arrivals, printed and in validation.json
        CliRun w = CliRun.of(
                "validate",
                "--run",
                CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen").toString(),
                "--out",
                out.toString(),
                "--window-s",
                "10");
        assertThat(w.exit()).as(w.err()).isZero();
        assertThat(w.out())
                .contains("arrivals (s)")
                .contains("0-10 ")
                .contains("10-20 ")
                .contains("20-30 ");
        JsonNode windows = JsonMapper.builder()
                .build()
                .readTree(out.resolve("validation.json").toFile())
                .get("windows");
        assertThat(windows).hasSize(3);
        int requests = 0;
        for (JsonNode x : windows) {
            requests += x.get("ttft_ms").get("measured_count").asInt();
            assertThat(x.get("e2e_ms").get("simulated_count").asInt())
                    .isEqualTo(x.get("e2e_ms").get("measured_count").asInt());
        }
        assertThat(requests).isEqualTo(120);
        assertThat(windows.get(1).get("from_s").asDouble()).isEqualTo(10.0);
    }

    @Test
    void modesThatDoNotMix_andRunErrors_areOneLineUsageErrors() throws IOException {
        String dir = CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen").toString();
        CliRun both = CliRun.of("validate", "--run", dir, "--corpus", CORPUS.toString(), "--out", "x");
        assertThat(both.exit()).isEqualTo(Main.USAGE);
        assertThat(both.err()).contains("--run and --corpus are mutually exclusive");
        CliRun noOut = CliRun.of("validate", "--corpus", CORPUS.toString());
        assertThat(noOut.exit()).isEqualTo(Main.USAGE);
        assertThat(noOut.err()).contains("--corpus needs --out");
        CliRun mixed = CliRun.of("validate", "--run", dir, "--measured", "m.csv");
        assertThat(mixed.exit()).isEqualTo(Main.USAGE);
        assertThat(mixed.err()).contains("leave out --measured");
        CliRun nothing = CliRun.of("validate");
        assertThat(nothing.exit()).isEqualTo(Main.USAGE);
        assertThat(nothing.err()).contains("missing --config");
        CliRun window = CliRun.of("validate", "--config", "c.yaml", "--measured", "m.csv", "--window-s", "60");
        assertThat(window.exit()).isEqualTo(Main.USAGE);
        assertThat(window.err()).contains("--window-s needs arrival times: a CSV measurement has none");
        CliRun zero = CliRun.of("validate", "--run", dir, "--window-s", "0");
        assertThat(zero.exit()).isEqualTo(Main.USAGE);
        assertThat(zero.err()).contains("--window-s must be a positive number of seconds");
        CliRun threads = CliRun.of("validate", "--corpus", CORPUS.toString(), "--out", "x", "--threads", "0");
        assertThat(threads.exit()).isEqualTo(Main.USAGE);
        assertThat(threads.err()).contains("--threads must be >= 1");

        Path bad = tmp.resolve("corpus/bad_run");
        Files.createDirectories(bad);
        for (String f : List.of("workload.jsonl", "measured.jsonl")) {
            Files.copy(Path.of(dir).resolve(f), bad.resolve(f));
        }
        Files.writeString(
                bad.resolve("meta.json"),
                Files.readString(Path.of(dir).resolve("meta.json")).replace("\"tensor_parallel\": 1,", ""));
        CliRun broken = CliRun.of("validate", "--corpus", tmp.resolve("corpus").toString(), "--out", "x");
        assertThat(broken.exit()).isEqualTo(Main.USAGE);
        assertThat(broken.err().lines().toList())
                .containsExactly(
                        "not validated bad_run: run bad_run: meta.json: tensor_parallel: missing",
                        "1 of 1 runs not validated (their errors above and in corpus.csv's error column)");
    }
}
