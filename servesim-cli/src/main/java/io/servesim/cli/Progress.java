package io.servesim.cli;

import io.servesim.config.SimConfig;
import io.servesim.run.Simulation;
import java.io.PrintWriter;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The replay's progress bar on stderr (progressbar library): requests ended out of the expected total when the
 * workload knows it, else requests ended so far; shown only after about 2 s of wall time, and only when stderr is
 * a terminal ({@code auto}) or always ({@code always}). It reads the simulation, never drives it.
 */
final class Progress implements Simulation.ProgressListener, AutoCloseable {
    private final long showAfterNanos;
    private final boolean enabled;
    private final long total;
    private final PrintWriter err;
    private final long startNanos = System.nanoTime();
    private ProgressBar bar;

    private Progress(boolean enabled, long total, PrintWriter err, long showAfterNanos) {
        this.showAfterNanos = showAfterNanos;
        this.enabled = enabled;
        this.total = total;
        this.err = err;
    }

    static Progress of(String when, SimConfig cfg, PrintWriter err, long showAfterMs) {
        boolean on = switch (when) {
            case "always" -> true;
            case "never" -> false;
            default -> Terminal.interactive();
        };
        return new Progress(on, expectedRequests(cfg), err, showAfterMs * 1_000_000L);
    }

    /** The workload's request count when it is known up front, else -1. */
    static long expectedRequests(SimConfig c) {
        return switch (c.workload().type()) {
            case SYNTHETIC ->
                c.workload().synthetic().requests() == null
                        ? -1
                        : c.workload().synthetic().requests();
            case SESSIONS ->
                c.workload().sessions().sessions() == null
                        ? -1
                        : (long) c.workload().sessions().sessions()
                                * c.workload().sessions().turns();
            case TRACE ->
                c.workload().trace().limit() == null ? -1 : c.workload().trace().limit();
        };
    }

    @Override
    public void onProgress(long virtualNanos, long requestsEnded, long requestsCreated) {
        if (!enabled) {
            return;
        }
        if (bar == null) {
            if (System.nanoTime() - startNanos < showAfterNanos) {
                return;
            }
            bar = new ProgressBarBuilder()
                    .setTaskName("replay")
                    .setInitialMax(total)
                    .setUnit(" req", 1)
                    .setStyle(ProgressBarStyle.ASCII)
                    .setConsumer(new me.tongfei.progressbar.ConsoleProgressBarConsumer(new java.io.PrintStream(
                            new WriterStream(err), true, java.nio.charset.StandardCharsets.UTF_8)))
                    .showSpeed()
                    .build();
        }
        bar.stepTo(requestsEnded);
        bar.setExtraMessage(String.format(java.util.Locale.ROOT, " t=%.1fs", virtualNanos / 1e9));
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
        }
    }

    /** Bytes to the command's stderr writer (so tests capture the bar). */
    private static final class WriterStream extends java.io.OutputStream {
        private final PrintWriter w;

        WriterStream(PrintWriter w) {
            this.w = w;
        }

        @Override
        public void write(int b) {
            w.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            w.write(new String(b, off, len, java.nio.charset.StandardCharsets.UTF_8));
        }

        @Override
        public void flush() {
            w.flush();
        }
    }
}
