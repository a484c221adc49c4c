package io.servesim.workload.trace;

import java.math.BigDecimal;

/** Writes {@link TraceRecord}s as servesim native JSONL lines (the format {@link NativeReader} reads). */
public final class NativeFormat {
    private NativeFormat() {}

    /** One record as one JSON line (without the newline); times in exact decimal milliseconds. */
    public static String line(TraceRecord r) {
        StringBuilder sb = new StringBuilder(64 + (r.inputTokenIds() == null ? 0 : r.inputTokenIds().length * 7));
        sb.append('{');
        boolean first = true;
        if (r.timestampNanos() >= 0) {
            sb.append("\"arrival_ms\":").append(millis(r.timestampNanos()));
            first = false;
        }
        if (r.sessionId() != null) {
            sb.append(first ? "" : ",").append("\"session_id\":");
            quote(sb, r.sessionId());
            first = false;
        }
        if (r.delayNanos() >= 0) {
            sb.append(first ? "" : ",").append("\"delay_ms\":").append(millis(r.delayNanos()));
            first = false;
        }
        sb.append(first ? "" : ",").append("\"input_length\":").append(r.inputLength());
        sb.append(",\"output_length\":").append(r.outputLength());
        if (r.hashIds() != null) {
            sb.append(",\"hash_block_size\":").append(r.hashBlockSize()).append(",\"hash_ids\":[");
            long[] ids = r.hashIds();
            for (int i = 0; i < ids.length; i++) {
                sb.append(i == 0 ? "" : ",").append(ids[i]);
            }
            sb.append(']');
        }
        if (r.dpRank() >= 0) {
            sb.append(",\"dp_rank\":").append(r.dpRank());
        }
        appendTokens(sb, "input_token_ids", r.inputTokenIds());
        appendTokens(sb, "output_token_ids", r.outputTokenIds());
        return sb.append('}').toString();
    }

    private static void appendTokens(StringBuilder sb, String name, int[] ids) {
        if (ids == null) {
            return;
        }
        sb.append(",\"").append(name).append("\":[");
        for (int i = 0; i < ids.length; i++) {
            sb.append(i == 0 ? "" : ",").append(ids[i]);
        }
        sb.append(']');
    }

    private static String millis(long nanos) {
        return BigDecimal.valueOf(nanos, 6).stripTrailingZeros().toPlainString();
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
