package io.servesim.cli;

import io.servesim.html.HtmlReport;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code servesim report RUN_DIR}: (re)writes report.html from a run directory's files. */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        description = "Write report.html (self-contained: inline SVG charts, no JavaScript) for a run directory.")
public final class ReportCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "RUN_DIR", description = "A directory written by 'servesim replay'.")
    Path dir;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        try {
            Path out = HtmlReport.write(dir);
            spec.commandLine().getOut().println("wrote " + out.toAbsolutePath().normalize());
            spec.commandLine().getOut().flush();
            return Main.OK;
        } catch (UncheckedIOException e) {
            spec.commandLine().getErr().println("error: " + Main.describe(e));
            spec.commandLine().getErr().flush();
            return Main.USAGE;
        }
    }
}
