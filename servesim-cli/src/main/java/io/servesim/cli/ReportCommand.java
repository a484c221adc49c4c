package io.servesim.cli;

import io.servesim.html.HtmlReport;
import io.servesim.report.RunDirectory;
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
            String problem = RunDirectory.RUN.verify(dir);
            if (problem != null) {
                spec.commandLine().getErr().println("error: " + problem);
                spec.commandLine().getErr().flush();
                return Main.USAGE;
            }
            RunDirectory.RUN.begin(dir);
            Path out = HtmlReport.write(dir);
            RunDirectory.RUN.finish(dir, RunDirectory.RUN.present(dir));
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
