package io.servesim.workload.trace;

import java.nio.file.Path;
import tools.jackson.databind.JsonNode;

/**
 * vLLM-bench / LLMServingSim JSONL with real token ids: {@code input_toks}, {@code output_toks},
 * {@code arrival_time_ns}, {@code input_tok_ids}, {@code output_tok_ids}, optional {@code session_id}. Prefix
 * hashing is exact because the prompt is the real token sequence.
 */
final class VllmBenchReader extends JsonLinesReader {

    VllmBenchReader(Path path) {
        super(path);
    }

    @Override
    TraceRecord parse(JsonNode row, String loc, String source, long line) {
        int input = JsonRows.positiveInt(row, loc, "input_toks");
        int output = JsonRows.positiveInt(row, loc, "output_toks");
        long ts = JsonRows.optLong(row, loc, "arrival_time_ns");
        int[] in = JsonRows.optTokenArray(row, loc, "input_tok_ids");
        if (in == null) {
            throw TraceFormatException.field(loc, "input_tok_ids", "is required");
        }
        if (in.length != input) {
            throw TraceFormatException.field(
                    loc, "input_tok_ids", "has " + in.length + " ids but input_toks is " + input);
        }
        int[] out = JsonRows.optTokenArray(row, loc, "output_tok_ids");
        if (out != null && out.length != output) {
            throw TraceFormatException.field(
                    loc, "output_tok_ids", "has " + out.length + " ids but output_toks is " + output);
        }
        String session = JsonRows.optSession(row, loc, "session_id");
        return new TraceRecord(source, line, ts, session, -1, input, output, null, 0, in, out, (int)
                JsonRows.optLong(row, loc, "dp_rank"));
    }
}
