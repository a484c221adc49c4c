package io.servesim.cli.bench;

import picocli.CommandLine.Command;

/** {@code servesim bench ...}: reproducible performance measurements (docs/performance.md). */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = "Measure servesim itself: the KVCR fixture table, or a long streamed replay.",
        subcommands = {
            FixtureCommand.class,
            FixtureCellCommand.class,
            StreamCommand.class,
            FuzzCommand.class,
            SoakCommand.class,
            ReplayBenchCommand.class,
            AotTrainingCommand.class
        })
public final class BenchCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(
                spec.commandLine(), "missing subcommand (fixture, stream, fuzz, soak)");
    }
}
