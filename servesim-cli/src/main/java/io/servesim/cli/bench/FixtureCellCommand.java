package io.servesim.cli.bench;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.json.JsonMapper;

/** Internal: measures one fixture cell in this JVM and prints it as one JSON line (the fork target). */
@Command(name = "fixture-cell", hidden = true, description = "Measure one fixture cell (internal).")
public final class FixtureCellCommand implements Callable<Integer> {
    /** Prefix of the result line on stdout. */
    static final String PREFIX = "FIXTURE-CELL ";

    @Option(names = "--workers", required = true)
    int workers;

    @Option(names = "--dp", required = true)
    int dp;

    @Option(names = "--arm", required = true)
    String arm;

    @Option(names = "--repeat", defaultValue = "5")
    int repeat;

    @Option(names = "--warmup", defaultValue = "1")
    int warmup;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        FixtureCell cell = FixtureCell.measure(workers, dp, arm, warmup, repeat);
        PrintWriter out = spec.commandLine().getOut();
        out.println(PREFIX + JsonMapper.builder().build().writeValueAsString(cell));
        out.flush();
        return 0;
    }
}
