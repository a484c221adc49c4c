package io.servesim.workload.trace;

import java.nio.file.Path;
import tools.jackson.databind.JsonNode;

/**
 * The {@code workload.jsonl} of a measured-run folder: {@code arrival_s} (seconds, required),
 * {@code input_tokens}, {@code output_tokens} and optional {@code prompt_token_ids} (exactly {@code input_tokens}
 * ids). {@code request_id} and every other field (such as {@code output_tokens_client_count}) are ignored.
 */
final class MeasuredReader extends JsonLinesReader {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    MeasuredReader(Path path) {
        super(path);
    }

    @Override
    TraceRecord parse(JsonNode row, String loc, String source, long line) {
        long arrival = JsonRows.optTime(row, loc, NANOS_PER_SECOND, "arrival_s");
        if (arrival < 0) {
            throw TraceFormatException.field(loc, "arrival_s", "is required");
        }
        int input = JsonRows.positiveInt(row, loc, "input_tokens");
        int output = JsonRows.positiveInt(row, loc, "output_tokens");
        int[] ids = JsonRows.optTokenArray(row, loc, "prompt_token_ids");
        if (ids != null && ids.length != input) {
            throw TraceFormatException.field(
                    loc, "prompt_token_ids", "has " + ids.length + " ids but input_tokens is " + input);
        }
        return new TraceRecord(source, line, arrival, null, -1, input, output, null, 0, ids, null, -1);
    }
}
