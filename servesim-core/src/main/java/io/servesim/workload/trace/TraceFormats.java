package io.servesim.workload.trace;

import java.nio.file.Path;
import java.util.List;

/** The trace-format registry: {@code workload.trace.format} names to readers. */
public final class TraceFormats {
    /** Known formats. */
    public static final List<String> NAMES = io.servesim.config.TraceConfig.FORMATS;

    private TraceFormats() {}

    /**
     * Opens a reader.
     *
     * @param format one of {@link #NAMES}
     * @param path the file ({@code .gz} / {@code .zst} decompressed transparently)
     * @param traceBlockSize tokens per hash id for Mooncake traces
     */
    public static TraceReader open(String format, Path path, int traceBlockSize) {
        return switch (format) {
            case "mooncake" -> new MooncakeReader(path, traceBlockSize);
            case "azure" -> new AzureReader(path);
            case "vllm_bench" -> new VllmBenchReader(path);
            case "servesim" -> new NativeReader(path);
            default ->
                throw new IllegalArgumentException(
                        "unknown trace format '" + format + "' (known: " + String.join(", ", NAMES) + ")");
        };
    }
}
