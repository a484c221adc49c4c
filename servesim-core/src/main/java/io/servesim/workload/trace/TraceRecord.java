package io.servesim.workload.trace;

/**
 * One row of a trace, normalised across formats. Lengths are tokens; times are nanoseconds as written in the trace
 * (not yet shifted so the first arrival is 0). Prompt content comes from exactly one of: {@code inputTokenIds}
 * (real token ids), {@code hashIds} (one id per {@code hashBlockSize} tokens, expanded deterministically), or
 * neither (unique random tokens).
 *
 * @param source file name, for error messages
 * @param line 1-based line number in the file
 * @param timestampNanos arrival time in the trace's clock, or -1 when the row has none
 * @param sessionId session key, or null for a standalone request
 * @param delayNanos think time before this turn (after the previous turn completed), or -1 when absent
 * @param inputLength prompt tokens, at least 1
 * @param outputLength output tokens, at least 1
 * @param hashIds prefix-block ids, or null
 * @param hashBlockSize tokens per hash id (when {@code hashIds} is set)
 * @param inputTokenIds prompt token ids, or null
 * @param outputTokenIds generated token ids, or null
 * @param dpRank attention-DP rank authored for this row, or -1
 */
@SuppressWarnings("ArrayRecordComponent") // primitive columns, never compared with equals
public record TraceRecord(
        String source,
        long line,
        long timestampNanos,
        String sessionId,
        long delayNanos,
        int inputLength,
        int outputLength,
        long[] hashIds,
        int hashBlockSize,
        int[] inputTokenIds,
        int[] outputTokenIds,
        int dpRank) {
    /** Where this row is, as {@code file:line}. */
    public String location() {
        return source + ":" + line;
    }
}
