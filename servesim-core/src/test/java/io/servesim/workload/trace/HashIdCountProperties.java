package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.statistics.Statistics;

/**
 * The streamed hash-id count ({@link JsonLinesReader#countHashIds}) never counts an id fewer times than the rows the
 * replay accepts carry it: otherwise a shared block could be taken for a private one. Checked on Mooncake rows of
 * which some are mutated the way real files go wrong (cut, retyped, duplicated keys, nested ids, trailing text).
 */
class HashIdCountProperties {
    @Property(tries = 60)
    void theStreamedCount_coversEveryIdOfEveryRowTheReplayAccepts(@ForAll @LongRange(min = 0, max = 100_000) long seed)
            throws IOException {
        Random rnd = new Random(seed);
        List<String> lines = new ArrayList<>();
        int rows = 20 + rnd.nextInt(60);
        for (int i = 0; i < rows; i++) {
            int blocks = 1 + rnd.nextInt(4);
            StringBuilder ids = new StringBuilder();
            for (int b = 0; b < blocks; b++) {
                ids.append(b == 0 ? "" : ", ").append(rnd.nextInt(12));
            }
            String line = "{\"timestamp\": " + i + ", \"input_length\": " + (blocks * 32 - rnd.nextInt(32))
                    + ", \"output_length\": 4, \"hash_ids\": [" + ids + "]}";
            lines.add(rnd.nextInt(3) == 0 ? mutate(line, rnd) : line);
        }
        Path trace = Files.createTempFile("ids", ".jsonl");
        try {
            Files.writeString(trace, String.join("\n", lines) + "\n");
            Long2IntOpenHashMap accepted = new Long2IntOpenHashMap();
            int acceptedRows = 0;
            try (TraceReader reader = TraceFormats.open(io.servesim.config.TraceFormat.MOONCAKE, trace, 32)) {
                while (true) {
                    TraceRecord r;
                    try {
                        r = reader.next();
                    } catch (TraceFormatException e) {
                        continue;
                    }
                    if (r == null) {
                        break;
                    }
                    acceptedRows++;
                    for (long id : r.hashIds()) {
                        accepted.addTo(id, 1);
                    }
                }
            }
            Long2IntOpenHashMap streamed = JsonLinesReader.countHashIds(trace, 1_000);
            Statistics.collect(acceptedRows == rows ? "no row rejected" : "some rows rejected");
            // every line that is a JSON object has top-level hash ids here (a cut line is not an object), so the
            // count exists
            assertThat(streamed).isNotNull();
            for (var e : accepted.long2IntEntrySet()) {
                assertThat(streamed.get(e.getLongKey()))
                        .as("id %d in %s", e.getLongKey(), lines)
                        .isGreaterThanOrEqualTo(e.getIntValue());
            }
        } finally {
            Files.delete(trace);
        }
    }

    /**
     * Where the scanner answers a line ({@link JsonLinesReader#scanHashIds} not unsure) that Jackson's streaming
     * parser reads as a row with ids, both give the same ids; on a line the parser cannot read the scanner may answer
     * anything (the replay rejects that row). Lines are random JSON objects with the key nested, repeated, escaped or
     * in strings, values of every kind and random whitespace, a third of them then mutated.
     */
    @Property(tries = 1000)
    void theScanner_readsWhatTheParserReads(@ForAll @LongRange(min = 0, max = 1_000_000) long seed) {
        Random rnd = new Random(seed);
        StringBuilder b = new StringBuilder();
        object(b, rnd, 0);
        String line = rnd.nextInt(3) == 0 ? mutate(b.toString(), rnd) : b.toString();
        LongArrayList scanned = new LongArrayList();
        int s = JsonLinesReader.scanHashIds(line, scanned);
        LongArrayList parsed = new LongArrayList();
        int p = JsonLinesReader.parseHashIds(line, parsed);
        Statistics.collect(s == JsonLinesReader.UNSURE ? "left to the parser" : "scanned", p);
        if (s != JsonLinesReader.UNSURE && p != -1) {
            assertThat(s).as(line).isEqualTo(p);
            assertThat(scanned.toLongArray()).as(line).containsExactly(parsed.toLongArray());
        }
    }

    private static final String[] KEYS = {"hash_ids", "hash_ids", "timestamp", "hash_id", "hash_idsx", "meta", "x"};

    private static void object(StringBuilder b, Random rnd, int depth) {
        space(b, rnd);
        b.append('{');
        int fields = rnd.nextInt(depth == 0 ? 5 : 3);
        // most rows have the key at the top, somewhere among the others
        int idsAt = depth == 0 && rnd.nextInt(4) > 0 ? rnd.nextInt(fields + 1) : -1;
        if (idsAt >= 0) {
            fields++;
        }
        for (int f = 0; f < fields; f++) {
            if (f > 0) {
                b.append(',');
            }
            space(b, rnd);
            String key = f == idsAt ? "hash_ids" : KEYS[rnd.nextInt(KEYS.length)];
            b.append('"')
                    .append(rnd.nextInt(12) == 0 ? key.replace("_", "\\u005f") : key)
                    .append('"');
            space(b, rnd);
            b.append(':');
            space(b, rnd);
            value(b, rnd, depth, key.equals("hash_ids"));
            space(b, rnd);
        }
        b.append('}');
    }

    private static void value(StringBuilder b, Random rnd, int depth, boolean ids) {
        int kind = ids && rnd.nextInt(4) > 0 ? 0 : rnd.nextInt(depth < 2 ? 7 : 5);
        switch (kind) {
            case 0 -> {
                b.append('[');
                int n = rnd.nextInt(5);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    space(b, rnd);
                    b.append(number(rnd));
                    space(b, rnd);
                }
                b.append(']');
            }
            case 1 -> b.append(number(rnd));
            case 2 -> b.append(rnd.nextBoolean() ? "null" : "true");
            case 3 ->
                b.append('"')
                        .append(new String[] {"hash_ids", "]}[{", "a: [1]", "\\\"hash_ids\\\": [5]", ""}
                                [rnd.nextInt(5)])
                        .append('"');
            case 4 -> b.append("[\"hash_ids\", [1, 2], {}]");
            default -> object(b, rnd, depth + 1);
        }
    }

    private static String number(Random rnd) {
        return switch (rnd.nextInt(24)) {
            case 0 -> "-" + rnd.nextInt(100);
            case 1 -> Long.toString(Long.MAX_VALUE);
            case 2 -> "123456789012345678901";
            case 3 -> rnd.nextInt(10) + ".5";
            case 4 -> "1e" + rnd.nextInt(3);
            default -> Integer.toString(rnd.nextInt(1_000));
        };
    }

    private static void space(StringBuilder b, Random rnd) {
        int k = rnd.nextInt(6);
        if (k == 1) {
            b.append(' ');
        } else if (k == 2) {
            b.append(" \t ");
        } else if (k == 3) {
            b.append('\n');
        }
    }

    private static String mutate(String line, Random rnd) {
        return switch (rnd.nextInt(8)) {
            case 0 -> line.substring(0, rnd.nextInt(line.length())); // cut
            case 1 -> line.replace("\"hash_ids\": [", "\"hash_ids\": [\"x\", "); // a string id
            case 2 -> line.replace("}", ", \"hash_ids\": [99]}"); // a duplicated key
            case 3 -> line.replace("{", "{\"meta\": {\"hash_ids\": [98]}, "); // nested ids, not the row's
            case 4 -> line + " trailing";
            case 5 -> line.replace("\"hash_ids\": [", "\"hash_ids\": [1.5, "); // a fractional id
            case 6 -> line.replace("\"hash_ids\": [", "\"hash_ids\": [-3, "); // a negative id
            default -> line.replace("\"hash_ids\": [", "\"hash_ids\": [123456789012345678901234567890, "); // too big
        };
    }
}
