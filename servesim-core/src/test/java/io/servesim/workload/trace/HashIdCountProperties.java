package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
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
