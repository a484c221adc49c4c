package io.servesim.cli;

import io.servesim.config.Named;
import io.servesim.config.TraceFormat;
import io.servesim.report.AtomicFiles;
import io.servesim.workload.trace.NativeFormat;
import io.servesim.workload.trace.TraceFiles;
import io.servesim.workload.trace.TraceFormatException;
import io.servesim.workload.trace.TraceFormats;
import io.servesim.workload.trace.TraceReader;
import io.servesim.workload.trace.TraceRecord;
import io.servesim.workload.trace.TraceStats;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code servesim trace stats|convert}: inspect and convert trace files. */
@Command(
        name = "trace",
        mixinStandardHelpOptions = true,
        description = "Inspect or convert trace files.",
        subcommands = {TraceCommand.Stats.class, TraceCommand.Convert.class})
public final class TraceCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: stats or convert");
    }

    static TraceFormat checkFormat(CommandLine cl, String format) {
        TraceFormat f = Named.find(TraceFormat.class, format);
        if (f == null) {
            throw new CommandLine.ParameterException(
                    cl,
                    "unknown trace format '" + format + "' (known: " + String.join(", ", Named.names(TraceFormat.class))
                            + ")");
        }
        return f;
    }

    /** {@code servesim trace stats FILE [--format F]}. */
    @Command(name = "stats", mixinStandardHelpOptions = true, description = "Print statistics of a trace file.")
    static final class Stats implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "FILE", description = "Trace file (.gz and .zst are decompressed).")
        Path file;

        @Option(
                names = "--format",
                defaultValue = "mooncake",
                description = "mooncake | azure | vllm_bench | measured | servesim")
        String format;

        @Option(names = "--trace-block-size", defaultValue = "512", description = "Tokens per Mooncake hash id.")
        int traceBlockSize;

        @Option(
                names = "--block-size",
                defaultValue = "16",
                description = "Block size for reuse of token-id traces (and block counts of prefix-less ones).")
        int blockSize;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            TraceFormat f = checkFormat(spec.commandLine(), format);
            if (traceBlockSize < 1 || blockSize < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "block sizes must be >= 1");
            }
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            TraceStats s;
            try {
                s = TraceStats.of(f, file, traceBlockSize, blockSize);
            } catch (TraceFormatException e) {
                err.println("input error: " + e.getMessage());
                return Main.USAGE;
            }
            out.printf(Locale.ROOT, "file        %s (%s)%n", file, format);
            out.printf(Locale.ROOT, "rows        %d%n", s.rows());
            out.printf(
                    Locale.ROOT,
                    "time span   %.3f s (%.1f min), %.3f req/s%n",
                    s.spanSeconds(),
                    s.spanSeconds() / 60,
                    s.arrivalRatePerSecond());
            row(out, "input", s.input());
            row(out, "output", s.output());
            out.printf(Locale.ROOT, "sessions    %d (%d rows in sessions)%n", s.sessions(), s.sessionRows());
            out.printf(
                    Locale.ROOT,
                    "prefix reuse %.2f %% of %d blocks (%d-token blocks, infinite cache, leading run of seen blocks)%n",
                    100 * s.prefixReuseRatio(),
                    s.blocks(),
                    s.blockSize());
            out.flush();
            return Main.OK;
        }

        private static void row(PrintWriter out, String name, io.servesim.metrics.Stats st) {
            out.printf(
                    Locale.ROOT,
                    "%-11s mean %.1f  p50 %.0f  p99 %.0f  max %.0f  min %.0f tokens%n",
                    name,
                    st.mean(),
                    st.p50(),
                    st.p99(),
                    st.max(),
                    st.min());
        }
    }

    /** {@code servesim trace convert IN --format F --out OUT.jsonl[.gz|.zst]}. */
    @Command(
            name = "convert",
            mixinStandardHelpOptions = true,
            description = "Convert a trace to servesim native JSONL (docs/traces.md).")
    static final class Convert implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "IN", description = "Input trace file.")
        Path in;

        @Option(
                names = "--format",
                required = true,
                description = "Input format: mooncake | azure | vllm_bench | measured | servesim")
        String format;

        @Option(
                names = "--out",
                required = true,
                paramLabel = "OUT",
                description = "Output .jsonl, .jsonl.gz or .jsonl.zst")
        Path out;

        @Option(names = "--trace-block-size", defaultValue = "512", description = "Tokens per Mooncake hash id.")
        int traceBlockSize;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            TraceFormat f = checkFormat(spec.commandLine(), format);
            if (traceBlockSize < 1) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--trace-block-size must be >= 1, got " + traceBlockSize);
            }
            PrintWriter err = spec.commandLine().getErr();
            long[] rows = {0};
            try (TraceReader reader = TraceFormats.open(f, in, traceBlockSize)) {
                io.servesim.workload.trace.TraceOrder order = new io.servesim.workload.trace.TraceOrder();
                AtomicFiles.writeStream(out, raw -> {
                    OutputStream o = TraceFiles.compressFor(out, raw);
                    for (TraceRecord r = reader.next(); r != null; r = reader.next()) {
                        order.check(r); // what a replay refuses is not converted either
                        o.write(NativeFormat.line(r).getBytes(StandardCharsets.UTF_8));
                        o.write('\n');
                        rows[0]++;
                    }
                    o.flush();
                    if (o instanceof java.util.zip.GZIPOutputStream
                            || o instanceof com.github.luben.zstd.ZstdOutputStream) {
                        o.close(); // finish the compressed stream; the raw one is closed by AtomicFiles
                    }
                });
            } catch (TraceFormatException e) {
                err.println("input error: " + e.getMessage());
                return Main.USAGE;
            } catch (UncheckedIOException e) {
                err.println("error: " + Main.describe(e));
                return Main.FAILURE;
            }
            spec.commandLine().getOut().printf(Locale.ROOT, "wrote %d rows to %s%n", rows[0], out);
            return Main.OK;
        }
    }
}
