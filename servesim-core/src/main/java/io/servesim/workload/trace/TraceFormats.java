package io.servesim.workload.trace;

import io.servesim.config.TraceFormat;
import java.nio.file.Path;

/**
 * The trace-format registry: opens the reader a {@link TraceFormat} names. The names, descriptions and declared
 * capabilities live in the enum; the switch is exhaustive, so a new format does not compile without its reader.
 */
public final class TraceFormats {
    private TraceFormats() {}

    /**
     * Opens a reader.
     *
     * @param format the format
     * @param path the file ({@code .gz} / {@code .zst} decompressed transparently)
     * @param traceBlockSize tokens per hash id, for the formats that {@linkplain TraceFormat#usesTraceBlockSize() use
     *     it}
     */
    public static TraceReader open(TraceFormat format, Path path, int traceBlockSize) {
        return switch (format) {
            case MOONCAKE -> new MooncakeReader(path, traceBlockSize);
            case AZURE -> new AzureReader(path);
            case VLLM_BENCH -> new VllmBenchReader(path);
            case MEASURED -> new MeasuredReader(path);
            case SERVESIM -> new NativeReader(path);
        };
    }
}
