package io.servesim.cli;

import io.servesim.config.SimConfig;
import io.servesim.report.AtomicFiles;
import io.servesim.validate.Calibrator;
import io.servesim.validate.MeasuredRun;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code servesim calibrate}: fit the roofline's efficiencies and overheads to a measured run. */
@Command(
        name = "calibrate",
        mixinStandardHelpOptions = true,
        description = "Fit the roofline timing to a measured run (--config/--measured: mfu, mbu and the step overhead,"
                + " or kv_mbu in the async loop) or to"
                + " a corpus of run folders (--corpus: one global parameter set, with leave-one-run/GPU/model-out"
                + " errors); writes a calibration profile for timing.calibration.")
public final class CalibrateCommand implements Callable<Integer> {
    @Option(
            names = "--config",
            paramLabel = "CONFIG",
            description = "Deployment config (roofline); with --corpus, the base config under every run.")
    Path config;

    @Option(
            names = "--corpus",
            paramLabel = "DIR",
            description = "A folder of measured run folders (meta.json, workload.jsonl, measured.jsonl).")
    Path corpus;

    @Option(
            names = "--leave-out",
            split = ",",
            paramLabel = "KIND",
            description = "With --corpus: leave-one-out refits to score, of run, gpu, model (default: all three;"
                    + " none: skip).")
    List<String> leaveOut = new ArrayList<>(List.of("run", "gpu", "model"));

    @Option(
            names = "--hold",
            split = ",",
            paramLabel = "COEFFICIENT",
            description = "With --corpus: coefficients not fitted but held at the base config's value (set it with"
                    + " --set timing.roofline.NAME=V), in the fit and every fold.")
    List<String> hold = new ArrayList<>();

    @Option(
            names = "--max-iterations",
            defaultValue = "25",
            description = "With --corpus: Levenberg-Marquardt iterations per fit (default: ${DEFAULT-VALUE}).")
    int maxIterations;

    @Option(
            names = "--prior-weight",
            defaultValue = "0",
            description = "With --corpus: how strongly each fitted coefficient is held to its literature prior"
                    + " (a maximum a posteriori fit; 0, the default: none; docs/accuracy.md tried 0.05).")
    double priorWeight;

    @Option(
            names = "--threads",
            defaultValue = "1",
            description = "With --corpus: runs replayed at once (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--workload", paramLabel = "FILE", description = "The measured run's workload (vllm_bench JSONL).")
    Path workload;

    @Option(names = "--measured", paramLabel = "FILE", description = "Measured per-request file.")
    Path measured;

    @Option(names = "--out", required = true, paramLabel = "FILE", description = "Calibration profile to write (YAML).")
    Path out;

    @Option(
            names = "--max-evaluations",
            defaultValue = "150",
            description = "Simulations at most (default: ${DEFAULT-VALUE}).")
    int maxEvaluations;

    @Option(names = "--set", paramLabel = "PATH=VALUE", description = "Override a config key.")
    List<String> overrides = new ArrayList<>();

    @Option(
            names = "--meta",
            paramLabel = "RUN:FIELD=VALUE",
            description = "With --corpus: " + ValidateCommand.META_FACT)
    List<String> meta = new ArrayList<>();

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private static List<String> keys(SimConfig cfg) {
        return cfg.engine().scheduler().asyncScheduling()
                ? io.servesim.validate.Calibrator.ASYNC_PARAMETERS
                : io.servesim.validate.Calibrator.PARAMETERS;
    }

    @Override
    public Integer call() {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (corpus != null) {
            if (measured != null || workload != null) {
                err.println("error: --corpus takes its measurements from the run folders: drop --measured/--workload");
                return Main.USAGE;
            }
            return CorpusCalibration.run(this, o, err);
        }
        if (!hold.isEmpty()) {
            err.println("error: --hold applies to --corpus fits only");
            return Main.USAGE;
        }
        if (!meta.isEmpty()) {
            err.println("error: --meta applies to --corpus fits only");
            return Main.USAGE;
        }
        if (config == null || measured == null) {
            err.println("error: give --config and --measured (one run), or --corpus DIR (a corpus of run folders)");
            return Main.USAGE;
        }
        SimConfig cfg =
                ValidateCommand.reportingUserErrors(err, () -> ValidateCommand.load(config, workload, overrides, err));
        if (cfg == null) {
            return Main.USAGE;
        }
        io.servesim.timing.Deployment deployment =
                ValidateCommand.reportingUserErrors(err, () -> io.servesim.timing.Deployment.resolve(cfg));
        if (deployment == null) {
            return Main.USAGE;
        }
        if (deployment.timingType() != io.servesim.config.TimingType.ROOFLINE) {
            err.println("config error: timing: calibrate fits the roofline model; set timing.model and timing.gpu");
            return Main.USAGE;
        }
        Calibrator.Result r = ValidateCommand.reportingUserErrors(
                err, () -> new Calibrator(cfg, MeasuredRun.read(measured), maxEvaluations).fit());
        if (r == null) {
            return Main.USAGE;
        }
        StringBuilder fitted = new StringBuilder();
        for (String k : keys(cfg)) {
            fitted.append(
                    String.format(Locale.ROOT, "  %s %.4g", k, r.roofline().get(k)));
        }
        o.printf(
                Locale.ROOT,
                "fitted after %d simulations:%s  (per-sequence overhead %.1f us, not fitted)%n",
                r.evaluations(),
                fitted,
                r.roofline().perSequenceOverheadUs());
        o.print(ValidateCommand.table(r.validation()));
        AtomicFiles.writeString(out, Calibrator.profileYaml(r, measured.toString(), cfg));
        o.println("wrote " + out.toAbsolutePath().normalize() + " (use it with --set timing.calibration=" + out + ")");
        o.flush();
        if (!r.atBound().isEmpty()) {
            err.println("warning: at a bound: " + String.join(", ", r.atBound())
                    + " (the model may be missing an effect; check the workload and engine settings)");
            err.flush();
        }
        return Main.OK;
    }
}
