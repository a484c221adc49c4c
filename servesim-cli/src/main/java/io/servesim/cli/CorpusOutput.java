package io.servesim.cli;

import io.servesim.config.SimConfig;
import io.servesim.config.TimingConfig;
import io.servesim.metrics.Numbers;
import io.servesim.timing.Deployment;
import io.servesim.timing.GpuSpec;
import io.servesim.validate.Corpus;
import io.servesim.validate.RunFolder;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What {@code validate --run} and {@code --corpus} print and write per run: the deployment line, corpus.csv and the table. */
final class CorpusOutput {
    private CorpusOutput() {}

    /** corpus.csv's header. */
    static final String CORPUS_HEADER = "run,gpu,model,tensor_parallel,data_parallel,ttft_mean_err_pct,"
            + "tpot_mean_err_pct,e2e_mean_err_pct,ttft_p99_err_pct,e2e_p99_err_pct,tpot_p99_err_pct,requests,"
            + "num_gpu_blocks_stated,num_gpu_blocks_derived,client_side,measured_failed,simulated_timed_out,error";

    /** The error columns of corpus.csv and its table: metric and statistic, in column order. */
    static final List<String[]> CORPUS_ERRORS = List.of(
            new String[] {"ttft_ms", "mean"},
            new String[] {"tpot_ms", "mean"},
            new String[] {"e2e_ms", "mean"},
            new String[] {"ttft_ms", "p99"},
            new String[] {"e2e_ms", "p99"},
            new String[] {"tpot_ms", "p99"});

    /** The run's deployment and KV pool check, one line each. */
    static String describe(Corpus.Result r) {
        RunFolder f = r.run();
        RunFolder.NumGpuBlocksCheck b = r.numGpuBlocks();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "run %s: %s, %s, TP %d, DP %d, EP %d, %s timing%s%s%s%n",
                f.name(),
                f.gpu(),
                f.model(),
                f.tensorParallel(),
                f.dataParallel(),
                f.expertParallel(),
                f.clientSide() ? "client-side" : "engine-side",
                f.clientSide()
                        ? String.format(
                                Locale.ROOT,
                                " (+%.2f ms frontend on TTFT and E2E, +%.1f us per request in the token's step)",
                                r.client().overheadMs(),
                                r.client().perRequestUs())
                        : "",
                r.measuredFailed() > 0 ? ", " + r.measuredFailed() + " failed requests skipped" : "",
                r.config().workload().clientTimeoutS() == null
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                "; clients give up after %.0f s (%d simulated requests timed out)",
                                r.config().workload().clientTimeoutS(),
                                r.simulatedTimedOut())));
        sb.append(String.format(
                Locale.ROOT,
                "num_gpu_blocks: stated %s, derived %s%s, used %d%n",
                b.stated() == null ? "-" : b.stated().toString(),
                b.derived() == null
                        ? "- (" + b.derivedProblem() + ")"
                        : b.derived().toString(),
                Double.isNaN(b.derivedVsStatedPct())
                        ? ""
                        : String.format(Locale.ROOT, " (%+.1f%% vs stated)", b.derivedVsStatedPct()),
                b.used()));
        if (f.closedLoopClients() != null) {
            sb.append(String.format(
                    Locale.ROOT,
                    "closed loop: %d clients, each sending the next request when its last one returns (the recorded"
                            + " send times are not replayed)%n",
                    f.closedLoopClients()));
        }
        if (f.hostOffloadBlocks() != null) {
            sb.append(String.format(
                    Locale.ROOT,
                    "CPU KV offloading (vLLM's native connector): %d blocks per engine%n",
                    f.hostOffloadBlocks()));
        }
        sb.append(
                r.config().engine().scheduler().asyncScheduling()
                        ? "engine loop: async (vLLM's default from v0.14.0)\n"
                        : "engine loop: synchronous (vLLM's default before v0.14.0, or stated: the step's CPU part adds to its"
                                + " GPU part)\n");
        Deployment d = Deployment.resolve(r.config());
        if (r.config().timing().tensorParallel() > 1 || r.config().cluster().attentionDp() > 1) {
            sb.append(collectives(r.config(), d));
        }
        sb.append(experts(d));
        if (f.sharedPrefix() != null && !f.tokenIds()) {
            sb.append(String.format(
                    Locale.ROOT,
                    "prompts (approximated, lengths only): %d-token shared prefix in %d groups, %s%n",
                    f.sharedPrefix().tokens(),
                    f.sharedPrefix().groups(),
                    f.sharedPrefix().repeatPeriod() == null
                            ? "every prompt unique"
                            : "repeating every " + f.sharedPrefix().repeatPeriod()
                                    + " rows (inferred from the lengths)"));
        }
        return sb.toString();
    }

    /**
     * How the run's collectives are priced: a PCIe machine's GPUs may lack peer-to-peer access, which AIConfigurator's
     * measured tables assume, so the line says how to state it.
     */
    static String collectives(SimConfig config, Deployment d) {
        GpuSpec gpu = d.gpu();
        if (gpu == null) {
            return "";
        }
        if (gpu.allReduce() != null || gpu.allGather() != null) {
            String efficiency = d.roofline() != null
                            && config.timing().tensorParallel() > 1
                            && gpu.allReduce() != null
                            && gpu.allReduce().covers(config.timing().tensorParallel())
                    ? "; TP all-reduce at "
                            + BigDecimal.valueOf(d.roofline().collectiveEfficiency())
                                    .stripTrailingZeros()
                                    .toPlainString()
                            + " of its isolated rate"
                    : "";
            return "collectives: measured tables (AIConfigurator, taken with GPU peer-to-peer access" + efficiency
                    + (gpu.hasNvlink()
                            ? ")\n"
                            : "; a machine without it: gpu_p2p false and link_gbytes_per_s in meta.json, or"
                                    + " --set timing.gpu_p2p=false --set timing.link_gbytes_per_s=N)\n");
        }
        return String.format(
                Locale.ROOT,
                "collectives: link model, %s at %s GB/s per direction%s%n",
                gpu.hasNvlink() ? "NVLink" : "PCIe",
                java.math.BigDecimal.valueOf(gpu.linkGbytesPerS())
                        .stripTrailingZeros()
                        .toPlainString(),
                config.timing().gpuP2p() ? "" : ", no peer-to-peer access");
    }

    /**
     * How a MoE model's experts are priced under the roofline: vLLM's fused MoE as measured on the GPU for the
     * experts' element type (its call time and rate, at moe_efficiency), else the roofline's streaming rate; empty for
     * a dense model or another timing model.
     */
    static String experts(Deployment d) {
        if (d.roofline() == null || d.expertDtype() == null || d.gpu() == null) {
            return "";
        }
        GpuSpec gpu = d.gpu();
        TimingConfig.Dtype dtype = d.expertDtype();
        GpuSpec.MoeKernel kernel = gpu.moeKernel(dtype);
        String efficiency = BigDecimal.valueOf(d.roofline().moeEfficiency())
                .stripTrailingZeros()
                .toPlainString();
        // their prefill FLOPs: the fused MoE's rate measured for this expert type, else derived (GpuSpec.Achieved)
        String flops = String.format(
                Locale.ROOT, "; prefill FLOPs at %.1f TFLOP/s", gpu.achievedMoeFlopsPerSecond(dtype) / 1e12);
        if (kernel == null) {
            return "experts: " + dtype.configName() + ", roofline (no measured fused MoE for them on " + gpu.name()
                    + "; mbu of the streaming rate" + flops + ", at moe_efficiency " + efficiency + ")\n";
        }
        return String.format(
                Locale.ROOT,
                "experts: %s, vLLM's measured fused MoE (AIConfigurator: %.1f us per layer call + the touched experts at"
                        + " %.0f GB/s%s, at moe_efficiency %s)%n",
                dtype.configName(),
                kernel.callUs(),
                kernel.gbytesPerS(),
                flops,
                efficiency);
    }

    /**
     * corpus.csv: one row per run in name order, the error columns in %, empty where unknown; a run that was not
     * validated has only its name and, in the last column, why.
     */
    static String corpusCsv(List<Corpus.Result> results, Map<String, String> notValidated) {
        java.util.TreeMap<String, String> rows = new java.util.TreeMap<>();
        notValidated.forEach((run, why) -> rows.put(run, run + ",".repeat(16) + "," + csvCell(why)));
        for (Corpus.Result r : results) {
            RunFolder f = r.run();
            List<String> cells = new ArrayList<>(List.of(
                    f.name(),
                    f.gpu(),
                    f.model(),
                    Integer.toString(f.tensorParallel()),
                    Integer.toString(f.dataParallel())));
            for (String[] c : CORPUS_ERRORS) {
                double e = r.validation().metrics().get(c[0]).errorPct(c[1]);
                cells.add(Double.isFinite(e) ? Numbers.fixedString(e, 3) : "");
            }
            cells.add(Long.toString(
                    r.validation().metrics().get("e2e_ms").measured().count()));
            cells.add(
                    r.numGpuBlocks().stated() == null
                            ? ""
                            : r.numGpuBlocks().stated().toString());
            cells.add(
                    r.numGpuBlocks().derived() == null
                            ? ""
                            : r.numGpuBlocks().derived().toString());
            cells.add(Boolean.toString(f.clientSide()));
            cells.add(Integer.toString(r.measuredFailed()));
            cells.add(Long.toString(r.simulatedTimedOut()));
            cells.add("");
            rows.put(f.name(), String.join(",", cells));
        }
        StringBuilder sb = new StringBuilder(CORPUS_HEADER).append('\n');
        rows.values().forEach(row -> sb.append(row).append('\n'));
        return sb.toString();
    }

    /** A CSV cell: quoted, inner quotes doubled, when it holds a comma, a quote or a line break. */
    private static String csvCell(String text) {
        if (text.indexOf(',') < 0 && text.indexOf('"') < 0 && text.indexOf('\n') < 0 && text.indexOf('\r') < 0) {
            return text;
        }
        return '"' + text.replace("\"", "\"\"") + '"';
    }

    /** The corpus as an aligned table, one row per run, then the mean |error| of each error column. */
    static String corpusTable(List<Corpus.Result> results) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {
            "run",
            "gpu",
            "model",
            "TP",
            "DP",
            "TTFT mean%",
            "TPOT mean%",
            "E2E mean%",
            "TTFT p99%",
            "E2E p99%",
            "TPOT p99%",
            "requests",
            "blocks stated",
            "blocks derived",
            "timing"
        });
        double[] sum = new double[CORPUS_ERRORS.size()];
        int[] n = new int[CORPUS_ERRORS.size()];
        for (Corpus.Result r : results) {
            RunFolder f = r.run();
            String[] row = new String[15];
            row[0] = f.name();
            row[1] = f.gpu();
            row[2] = f.model();
            row[3] = Integer.toString(f.tensorParallel());
            row[4] = Integer.toString(f.dataParallel());
            for (int i = 0; i < CORPUS_ERRORS.size(); i++) {
                String[] c = CORPUS_ERRORS.get(i);
                double e = r.validation().metrics().get(c[0]).errorPct(c[1]);
                row[5 + i] = Double.isFinite(e) ? String.format(Locale.ROOT, "%+.1f", e) : "-";
                if (Double.isFinite(e)) {
                    sum[i] += Math.abs(e);
                    n[i]++;
                }
            }
            row[11] = Long.toString(
                    r.validation().metrics().get("e2e_ms").measured().count());
            RunFolder.NumGpuBlocksCheck b = r.numGpuBlocks();
            row[12] = b.stated() == null ? "-" : b.stated().toString();
            row[13] = b.derived() == null ? "-" : b.derived().toString();
            row[14] = f.clientSide() ? "client" : "engine";
            rows.add(row);
        }
        String[] mean = new String[15];
        java.util.Arrays.fill(mean, "");
        mean[0] = "mean |error|";
        for (int i = 0; i < sum.length; i++) {
            mean[5 + i] = n[i] == 0 ? "-" : String.format(Locale.ROOT, "%.1f", sum[i] / n[i]);
        }
        rows.add(mean);
        int[] width = new int[15];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                boolean text = i < 3 || i == 14;
                String cell = text
                        ? String.format(Locale.ROOT, "%-" + width[i] + "s", row[i])
                        : String.format(Locale.ROOT, "%" + width[i] + "s", row[i]);
                line.append(i == 0 ? "" : "  ").append(cell);
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }
}
