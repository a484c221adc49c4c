package io.servesim.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** The outcome of one in-process CLI invocation: exit code, standard output and standard error. */
public record CliRun(int exit, String out, String err) {
    /** Runs {@code servesim ARGS...} in process. */
    public static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }
}
