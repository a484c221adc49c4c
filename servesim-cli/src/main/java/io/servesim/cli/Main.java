package io.servesim.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code servesim} command: subcommands for replaying workloads (more arrive with later features). */
@Command(
        name = "servesim",
        mixinStandardHelpOptions = true,
        version = "servesim 0.1.0",
        description = "Deterministic discrete-event simulator of LLM inference-serving clusters.",
        subcommands = {
            ReplayCommand.class,
            TraceCommand.class,
            ReportCommand.class,
            CompareCommand.class,
            SweepCommand.class,
            ValidateCommand.class,
            CalibrateCommand.class,
            StepCommand.class,
            PresetsCommand.class,
            io.servesim.cli.bench.BenchCommand.class
        })
public final class Main implements Runnable {
    /** Exit code of a successful run. */
    public static final int OK = 0;
    /** Exit code of a run that failed while simulating or writing. */
    public static final int FAILURE = 1;
    /** Exit code of a usage or configuration error. */
    public static final int USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getErr());
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
    }

    static {
        System.setProperty("java.awt.headless", "true"); // charts render without a display
    }

    /** Entry point. */
    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit code (for tests). */
    public static int execute(String... args) {
        return configure(new CommandLine(new Main())).execute(args);
    }

    /** Runs the command line writing to {@code out} and {@code err} and returns the exit code (for tests). */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = configure(new CommandLine(new Main()));
        cl.setOut(out);
        cl.setErr(err);
        try {
            return cl.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /**
     * Why {@code dir} cannot take a run's output files (it is a file, or cannot be created or written, with the
     * operating system's reason), or null when it can: checked before a long simulation, not after it.
     */
    static String unusableOutputDirectory(Path dir) {
        if (java.nio.file.Files.exists(dir) && !java.nio.file.Files.isDirectory(dir)) {
            return dir + ": exists and is not a directory";
        }
        try {
            java.nio.file.Files.createDirectories(dir);
            Path probe = java.nio.file.Files.createTempFile(dir, ".servesim-probe-", ".tmp");
            java.nio.file.Files.delete(probe);
            return null;
        } catch (java.io.IOException e) {
            return dir + ": cannot write there: " + describe(e);
        }
    }

    /** An I/O failure with the operating system's reason (permission denied, no space left, not a directory ...). */
    public static String describe(Throwable e) {
        Throwable t = e instanceof java.io.UncheckedIOException && e.getCause() != null ? e.getCause() : e;
        if (t instanceof java.nio.file.AccessDeniedException a) {
            return "permission denied: " + a.getFile();
        }
        if (t instanceof java.nio.file.NoSuchFileException n) {
            return "no such file or directory: " + n.getFile();
        }
        if (t instanceof java.nio.file.FileAlreadyExistsException f) {
            return "already exists: " + f.getFile();
        }
        if (t instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
            return f.getReason() + ": " + f.getFile();
        }
        return e.getMessage();
    }

    private static CommandLine configure(CommandLine cl) {
        cl.setExitCodeExceptionMapper(e -> FAILURE);
        cl.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("error: " + ex.getMessage());
            ex.getCommandLine()
                    .getErr()
                    .println("(run 'servesim " + commandName(ex.getCommandLine()) + " --help' for usage)");
            return USAGE;
        });
        cl.getCommandSpec().exitCodeOnInvalidInput(USAGE);
        // an empty path (--out=, '') would silently mean the current directory: every path option refuses it
        cl.registerConverter(Path.class, s -> {
            if (s.isBlank()) {
                throw new CommandLine.TypeConversionException("an empty path (give a file or directory name)");
            }
            return Path.of(s);
        });
        return cl;
    }

    /**
     * Prints each warning as one line on {@code err}, prefixed {@code servesim: warning: } (e.g. a deprecated config
     * key the loader accepted), and flushes.
     */
    static void warn(PrintWriter err, java.util.List<String> warnings) {
        for (String w : warnings) {
            err.println("servesim: warning: " + w);
        }
        err.flush();
    }

    private static String commandName(CommandLine cl) {
        return cl.getCommandSpec().qualifiedName().replaceFirst("^servesim ?", "");
    }
}
