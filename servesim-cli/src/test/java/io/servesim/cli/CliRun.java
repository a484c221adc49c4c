package io.servesim.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** The outcome of one in-process CLI invocation: exit code, standard output and standard error. */
public record CliRun(int exit, String out, String err) {
    /** Runs {@code servesim ARGS...} in process. */
    public static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** Copies the files of run folder {@code from} into a new folder {@code to} (a corpus to alter in a test). */
    public static void copyRunFolder(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (var files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
    }
}
