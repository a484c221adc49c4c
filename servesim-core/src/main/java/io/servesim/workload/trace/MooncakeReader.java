package io.servesim.workload.trace;

import java.nio.file.Path;
import tools.jackson.databind.JsonNode;

/**
 * Mooncake FAST'25 / Dynamo JSONL: {@code timestamp|created_time} (ms), {@code input_length|input_tokens},
 * {@code output_length|output_tokens}, {@code hash_ids} (one id per {@code trace_block_size} tokens; the last block
 * may be partial, so {@code len(hash_ids) == ceil(input_length / trace_block_size)}), optional {@code session_id},
 * {@code delay|delay_ms} (ms) and {@code output_token_ids}. Other fields are ignored.
 */
final class MooncakeReader extends JsonLinesReader {
    private final int blockSize;

    MooncakeReader(Path path, int traceBlockSize) {
        super(path);
        this.blockSize = traceBlockSize;
    }

    @Override
    TraceRecord parse(JsonNode row, String loc, String source, long line) {
        long ts = JsonRows.optTime(row, loc, 1_000_000L, "timestamp", "created_time");
        long[] hashIds = JsonRows.optLongArray(row, loc, "hash_ids");
        if (hashIds == null) {
            throw TraceFormatException.field(loc, "hash_ids", "is required (one id per " + blockSize + " tokens)");
        }
        int input = JsonRows.optPositiveInt(row, loc, "input_length", "input_tokens");
        if (input < 0) {
            if (hashIds.length == 0) {
                throw TraceFormatException.field(loc, "input_length", "is required when hash_ids is empty");
            }
            input = Math.multiplyExact(hashIds.length, blockSize);
        }
        long expected = ((long) input + blockSize - 1) / blockSize;
        if (hashIds.length != expected) {
            throw TraceFormatException.field(
                    loc,
                    "hash_ids",
                    "has " + hashIds.length + " ids but input_length " + input + " needs ceil(" + input + " / "
                            + blockSize + ") = " + expected);
        }
        int output = JsonRows.positiveInt(row, loc, "output_length", "output_tokens");
        String session = JsonRows.optSession(row, loc, "session_id");
        long delay = JsonRows.optTime(row, loc, 1_000_000L, "delay", "delay_ms");
        int[] outIds = JsonRows.optTokenArray(row, loc, "output_token_ids");
        return new TraceRecord(source, line, ts, session, delay, input, output, hashIds, blockSize, null, outIds, (int)
                JsonRows.optLong(row, loc, "dp_rank"));
    }
}
