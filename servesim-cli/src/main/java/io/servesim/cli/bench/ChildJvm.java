package io.servesim.cli.bench;

import io.servesim.cli.Main;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/** The command line that runs {@code servesim ARGS} in a fresh JVM with this JVM's class path and flags. */
final class ChildJvm {
    private ChildJvm() {}

    /**
     * This JVM's launcher, {@code extraFlags}, its own {@code -XX:}, {@code -Xss}, native-access (and, unless
     * {@code keepHeap} is false, {@code -Xm*}) flags, the class path, the main class and {@code args}.
     */
    static List<String> command(List<String> extraFlags, boolean keepHeap, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(extraFlags);
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if ((keepHeap && a.startsWith("-Xm"))
                    || a.startsWith("-Xss")
                    || a.startsWith("-XX:")
                    || a.startsWith("--enable-native-access")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Main.class.getName());
        cmd.addAll(args);
        return cmd;
    }
}
