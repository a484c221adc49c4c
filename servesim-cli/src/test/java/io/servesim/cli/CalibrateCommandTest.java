package io.servesim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** servesim calibrate --corpus: one profile for a corpus, scored in sample and leave-one-out, loadable back. */
class CalibrateCommandTest {
    private static final Path CORPUS = Path.of("../servesim-core/src/test/resources/corpus");

    @TempDir
    Path tmp;

    @Test
    void corpus_writesALoadableProfile_andOneFoldRowPerHeldOutRun() throws IOException {
        Path profile = tmp.resolve("profile.yaml");
        CliRun r = CliRun.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--out",
                profile.toString(),
                "--max-iterations",
                "1",
                "--leave-out",
                "gpu",
                "--threads",
                "2");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("fitting [mfu, mbu, kv_mbu")
                .contains("in sample")
                .contains("leave one gpu out");
        // below each leave-out table, every fitted coefficient's range over its folds (here the two GPU folds)
        assertThat(r.out()).containsPattern("fitted in these folds \\(full fit\\):  mfu [0-9.]+-[0-9.]+ \\([0-9.]+\\)");
        String yaml = Files.readString(profile);
        assertThat(yaml)
                .contains(
                        "roofline:",
                        "frontend:",
                        "client_overhead_ms:",
                        "client_per_request_us:",
                        "leave_one_gpu_out_mean_abs_error_pct");
        List<String> folds = Files.readAllLines(tmp.resolve("profile.yaml.folds.csv"));
        assertThat(folds.get(0))
                .isEqualTo("fold,held_out,run,ttft_mean_err_pct,tpot_mean_err_pct,e2e_mean_err_pct,"
                        + "ttft_p99_err_pct,tpot_p99_err_pct,e2e_p99_err_pct,mfu,mbu,kv_mbu,layer_overhead_us,"
                        + "collective_efficiency,moe_efficiency,client_overhead_ms,client_per_request_us");
        // two runs in sample, then each GPU held out once (one run per GPU here)
        assertThat(folds).hasSize(5);
        assertThat(folds.get(3)).startsWith("leave_one_gpu_out,h100-sxm,blis_H100_Llama-2-7b_tp1_codegen,");
        assertThat(folds.get(4))
                .startsWith("leave_one_gpu_out,rtx-pro-6000,llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1,");
        // each row ends with the coefficients its fold fitted: the in-sample rows the profile's, the folds their own
        String[] inSample = folds.get(1).split(",", -1);
        String[] heldH100 = folds.get(3).split(",", -1);
        assertThat(inSample).hasSize(17);
        assertThat(yaml).contains("  mbu: " + inSample[10] + "\n");
        assertThat(heldH100[10])
                .as("the fold without the H100 run fits its own mbu")
                .isNotEqualTo(inSample[10]);
        // the printed range is the folds' lowest and highest value, beside the full fit's
        double a = Double.parseDouble(heldH100[10]);
        double b = Double.parseDouble(folds.get(4).split(",", -1)[10]);
        assertThat(r.out())
                .contains(String.format(
                        java.util.Locale.ROOT,
                        "  mbu %.4g-%.4g (%.4g)",
                        Math.min(a, b),
                        Math.max(a, b),
                        Double.parseDouble(inSample[10])));
        // the profile is what timing.calibration loads
        CliRun v = CliRun.of(
                "validate",
                "--run",
                CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen").toString(),
                "--set",
                "timing.calibration=" + profile,
                "--out",
                tmp.resolve("v").toString());
        assertThat(v.exit()).as(v.err()).isZero();
    }

    /** One Levenberg-Marquardt iteration on the committed corpus, no leave-out folds, then {@code extra}. */
    private static CliRun quickCorpusFit(Path profile, String... extra) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--out",
                profile.toString(),
                "--max-iterations",
                "1",
                "--leave-out",
                "none"));
        args.addAll(List.of(extra));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void corpus_leavesOutARunItCannotReadOrBuild_fitsTheOthers_andExitsWithAUsageError() throws IOException {
        Path dir = tmp.resolve("mixed");
        for (String run : List.of("blis_H100_Llama-2-7b_tp1_codegen", "llmservingsim_RTXPRO6000_Llama-3.1-8B_tp1")) {
            CliRun.copyRunFolder(CORPUS.resolve(run), dir.resolve(run));
        }
        Path bad = dir.resolve("z_unknown_gpu");
        CliRun.copyRunFolder(CORPUS.resolve("blis_H100_Llama-2-7b_tp1_codegen"), bad);
        Files.writeString(
                bad.resolve("meta.json"),
                Files.readString(bad.resolve("meta.json"))
                        .replaceFirst("\"gpu\": *\"[^\"]*\"", "\"gpu\": \"TPU v5e\""));
        Path profile = tmp.resolve("partial.yaml");
        CliRun r = CliRun.of(
                "calibrate",
                "--corpus",
                dir.toString(),
                "--out",
                profile.toString(),
                "--max-iterations",
                "1",
                "--leave-out",
                "none");
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .contains("not fitted z_unknown_gpu: run z_unknown_gpu: meta.json: gpu: unknown GPU 'TPU v5e'")
                .contains("1 of 3 runs not fitted");
        assertThat(r.out()).contains("on 2 runs");
        assertThat(profile).exists(); // fitted on the two others
    }

    @Test
    void corpus_startsFromTheSetOverrides_andKeepsTheUnfittedOnesInTheProfile() throws IOException {
        // without --config the base is servesim's defaults under the --set overrides (they were once dropped)
        Path profile = tmp.resolve("p.yaml");
        CliRun r = quickCorpusFit(
                profile,
                "--set",
                "timing.roofline.knee_exponent=7",
                "--set",
                "timing.roofline.attention_overhead_us=0.25");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(Files.readString(profile))
                .contains("  knee_exponent: 7.00000\n", "  attention_overhead_us: 0.250000\n");
    }

    @Test
    void corpus_holdsACoefficientAtItsSetValue_andNamesItInTheProfile() throws IOException {
        Path profile = tmp.resolve("held.yaml");
        CliRun r = quickCorpusFit(profile, "--hold", "mfu", "--set", "timing.roofline.mfu=0.83");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("fitting [mbu, kv_mbu,").contains("held:  mfu 0.8300");
        assertThat(Files.readString(profile)).contains("  mfu: 0.830000\n", "  held:", "    mfu: 0.830000\n");
        CliRun unknown = CliRun.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--hold",
                "mfuu",
                "--out",
                tmp.resolve("p").toString());
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("--hold: cannot hold 'mfuu': not a fitted coefficient [mfu, mbu,");
        CliRun oneRun =
                CliRun.of("calibrate", "--config", "c.yaml", "--measured", "m.csv", "--hold", "mfu", "--out", "p.yaml");
        assertThat(oneRun.exit()).isEqualTo(2);
        assertThat(oneRun.err()).contains("--hold applies to --corpus fits only");
    }

    @Test
    void corpus_refusesAMeasuredFile_andAnUnknownLeaveOutKind() {
        CliRun both = CliRun.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--measured",
                "m.csv",
                "--out",
                tmp.resolve("p").toString());
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.err()).contains("--corpus takes its measurements from the run folders");
        CliRun kind = CliRun.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--leave-out",
                "node",
                "--out",
                tmp.resolve("p").toString());
        assertThat(kind.exit()).isEqualTo(2);
        assertThat(kind.err()).contains("--leave-out: unknown kind 'node'");
        CliRun meta = CliRun.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--meta",
                "nope*:vllm_version=0.15.1",
                "--out",
                tmp.resolve("p").toString());
        assertThat(meta.exit()).isEqualTo(2);
        assertThat(meta.err()).contains("--meta").contains("no run of corpus");
        CliRun prior = CliRun.of(
                "calibrate",
                "--corpus",
                CORPUS.toString(),
                "--prior-weight",
                "-0.5",
                "--out",
                tmp.resolve("p").toString());
        assertThat(prior.exit()).isEqualTo(2);
        assertThat(prior.err()).contains("--prior-weight must be a finite number >= 0, got -0.5");
        CliRun neither = CliRun.of("calibrate", "--out", tmp.resolve("p").toString());
        assertThat(neither.exit()).isEqualTo(2);
        assertThat(neither.err()).contains("give --config and --measured");
    }
}
