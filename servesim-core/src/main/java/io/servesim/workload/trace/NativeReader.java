package io.servesim.workload.trace;

import java.nio.file.Path;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * servesim's native JSONL (docs/traces.md), the superset every other format converts to: {@code arrival_ms},
 * {@code session_id}, {@code delay_ms}, {@code input_length}, {@code output_length}, {@code hash_ids} with
 * {@code hash_block_size}, {@code input_token_ids}, {@code output_token_ids}. Unknown fields are errors.
 */
final class NativeReader extends JsonLinesReader {
    static final Set<String> FIELDS = Set.of(
            "arrival_ms",
            "session_id",
            "delay_ms",
            "input_length",
            "output_length",
            "hash_ids",
            "hash_block_size",
            "input_token_ids",
            "output_token_ids",
            "dp_rank");

    NativeReader(Path path) {
        super(path);
    }

    @Override
    TraceRecord parse(JsonNode row, String loc, String source, long line) {
        for (String f : row.propertyNames()) {
            if (!FIELDS.contains(f)) {
                throw TraceFormatException.field(
                        loc, f, "unknown field (allowed: " + String.join(", ", new java.util.TreeSet<>(FIELDS)) + ")");
            }
        }
        long ts = JsonRows.optTime(row, loc, 1_000_000L, "arrival_ms");
        long delay = JsonRows.optTime(row, loc, 1_000_000L, "delay_ms");
        String session = JsonRows.optSession(row, loc, "session_id");
        int output = JsonRows.positiveInt(row, loc, "output_length");
        int[] inIds = JsonRows.optTokenArray(row, loc, "input_token_ids");
        int[] outIds = JsonRows.optTokenArray(row, loc, "output_token_ids");
        long[] hashIds = JsonRows.optLongArray(row, loc, "hash_ids");
        int input = JsonRows.optPositiveInt(row, loc, "input_length");
        int hashBlock = 0;
        if (inIds != null) {
            if (hashIds != null) {
                throw TraceFormatException.field(loc, "hash_ids", "give either input_token_ids or hash_ids, not both");
            }
            if (input >= 0 && input != inIds.length) {
                throw TraceFormatException.field(
                        loc, "input_token_ids", "has " + inIds.length + " ids but input_length is " + input);
            }
            if (inIds.length == 0) {
                throw TraceFormatException.field(loc, "input_token_ids", "must not be empty");
            }
            input = inIds.length;
        } else {
            if (input < 0) {
                throw TraceFormatException.field(loc, "input_length", "is required without input_token_ids");
            }
            if (hashIds != null) {
                hashBlock = JsonRows.positiveInt(row, loc, "hash_block_size");
                long expected = ((long) input + hashBlock - 1) / hashBlock;
                if (hashIds.length != expected) {
                    throw TraceFormatException.field(
                            loc,
                            "hash_ids",
                            "has " + hashIds.length
                                    + " ids but input_length " + input + " needs ceil(" + input + " / " + hashBlock
                                    + ") = "
                                    + expected);
                }
            }
        }
        if (outIds != null && outIds.length != output) {
            throw TraceFormatException.field(
                    loc, "output_token_ids", "has " + outIds.length + " ids but output_length is " + output);
        }
        return new TraceRecord(source, line, ts, session, delay, input, output, hashIds, hashBlock, inIds, outIds, (int)
                JsonRows.optLong(row, loc, "dp_rank"));
    }
}
