package io.servesim.cli;

import io.servesim.html.CompareReport;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code servesim compare RUN_A RUN_B [...]}: key metrics side by side, and compare.html with overlaid CDFs. */
@Command(
        name = "compare",
        mixinStandardHelpOptions = true,
        description = "Compare runs: a table of key metrics with %% deltas against the first run, and compare.html.")
public final class CompareCommand implements Callable<Integer> {
    @Parameters(arity = "2..*", paramLabel = "RUN_DIR", description = "Run directories written by 'servesim replay'.")
    List<Path> runs;

    @Option(names = "--out", description = "Directory to write compare.html into (default: the first run's directory).")
    Path out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        try {
            for (Path run : runs) {
                String problem = io.servesim.report.RunDirectory.RUN.verify(run);
                if (problem != null) {
                    spec.commandLine().getErr().println("error: " + problem);
                    spec.commandLine().getErr().flush();
                    return Main.USAGE;
                }
            }
            spec.commandLine().getOut().print(CompareReport.table(runs));
            Path file = CompareReport.write(runs, out != null ? out : runs.get(0));
            spec.commandLine().getOut().println("wrote " + file.toAbsolutePath().normalize());
            spec.commandLine().getOut().flush();
            return Main.OK;
        } catch (UncheckedIOException e) {
            spec.commandLine().getErr().println("error: " + Main.describe(e));
            spec.commandLine().getErr().flush();
            return Main.USAGE;
        }
    }
}
