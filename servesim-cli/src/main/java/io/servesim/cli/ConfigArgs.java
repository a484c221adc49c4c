package io.servesim.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The arguments of a command that runs one config: the YAML file and its {@code --set} overrides (a picocli mixin). */
final class ConfigArgs {
    @Parameters(index = "0", paramLabel = "CONFIG", description = "YAML configuration (see docs/config.md).")
    Path config;

    @Option(
            names = "--set",
            paramLabel = "PATH=VALUE",
            description = "Override a config key (YAML value), e.g. --set cluster.workers=8; applied in order.")
    List<String> overrides = new ArrayList<>();
}
