package io.servesim.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.TraceConfig;
import io.servesim.sim.EventQueue;
import io.servesim.sim.RandomStreams;
import io.servesim.workload.Request;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hash-id trace is read once before the replay to count in how many rows each id appears, and each request that
 * ends is taken off the count: a request knows from which of its prompt's hash blocks on no other unfinished or
 * future request shares it, so the engines may cache those blocks unindexed.
 */
class UniqueHashBlocksTest {
    @TempDir
    Path tmp;

    private List<Request> release(String rows) throws IOException {
        return release("mooncake", rows);
    }

    private TraceWorkload workload;

    private List<Request> release(String format, String rows) throws IOException {
        Path trace = tmp.resolve("t.jsonl");
        Files.writeString(trace, rows);
        List<String> all = new ArrayList<>(List.of(
                "workload.type=trace",
                "workload.trace.format=" + format,
                "workload.trace.trace_block_size=32",
                "workload.trace.path=" + trace.toString().replace('\\', '/')));
        TraceConfig config = ConfigLoader.fromYaml("", "t", all).workload().trace();
        TraceWorkload w = new TraceWorkload(config, trace, new RandomStreams(7));
        workload = w;
        List<Request> released = new ArrayList<>();
        EventQueue queue = new EventQueue();
        w.start(queue, released::add);
        while (queue.runNext()) {
            // releases every row at its timestamp
        }
        return released;
    }

    @Test
    void theFirstHashBlockNoOtherRowHas_marksWhereAPromptStopsBeingShareable() throws IOException {
        List<Request> r = release("""
                {"timestamp": 0, "input_length": 96, "output_length": 4, "hash_ids": [1, 2, 3]}
                {"timestamp": 10, "input_length": 96, "output_length": 4, "hash_ids": [1, 2, 4]}
                {"timestamp": 20, "input_length": 70, "output_length": 4, "hash_ids": [1, 5, 6]}
                {"timestamp": 30, "input_length": 64, "output_length": 4, "hash_ids": [1, 2]}
                {"timestamp": 40, "input_length": 64, "output_length": 4, "hash_ids": [7, 7]}
                """);
        // 32-token hash blocks over 16-token engine blocks: hash block h starts engine block 2h
        assertThat(r.get(0).privateFromBlock(16)).isEqualTo(4); // id 3 is its alone
        assertThat(r.get(1).privateFromBlock(16)).isEqualTo(4); // id 4
        assertThat(r.get(2).privateFromBlock(16)).isEqualTo(2); // id 5: the rest chains from it
        assertThat(r.get(3).privateFromBlock(16)).isEqualTo(-1); // ids 1 and 2 are shared: nothing private
        assertThat(r.get(4).privateFromBlock(16)).isEqualTo(-1); // an id twice in one row counts as shared
        assertThat(r.get(0).privateFromBlock(32)).isEqualTo(2);
        assertThat(r.get(0).privateFromBlock(64)).isEqualTo(-1); // an engine block that spans hash blocks: none
    }

    @Test
    void sessionTurns_andTracesWithoutHashIds_getNoPrivateBlocks() throws IOException {
        List<Request> sessions = release("""
                {"timestamp": 0, "input_length": 64, "output_length": 4, "hash_ids": [1, 2], "session_id": "a"}
                {"timestamp": 10, "input_length": 96, "output_length": 4, "hash_ids": [1, 2, 3], "session_id": "a"}
                """);
        assertThat(sessions).allSatisfy(q -> assertThat(q.privateFromBlock(16)).isEqualTo(-1));
        List<Request> lengths = release("measured", """
                {"arrival_s": 0, "input_tokens": 64, "output_tokens": 4}
                {"arrival_s": 1, "input_tokens": 96, "output_tokens": 4}
                """);
        assertThat(lengths).allSatisfy(q -> assertThat(q.privateFromBlock(16)).isEqualTo(-1));
    }

    @Test
    void theCount_readsEachRowsTopLevelHashIds_skippingLinesThatAreNotRows() throws IOException {
        Path trace = tmp.resolve("c.jsonl");
        Files.writeString(trace, """
                {"timestamp": 0, "input_length": 96, "output_length": 4, "hash_ids": [1, 2, 3]}
                not json
                {"timestamp": 5, "input_length": 64, "output_length": 4, "hash_ids": [1, "x"]}
                {"timestamp": 6, "nested": {"hash_ids": [100]}, "hash_ids": [2, 9], "input_length": 1000}

                {"timestamp": 7, "input_length": 64, "output_length": 4, "hash_ids": null}
                """);
        var counts = JsonLinesReader.countHashIds(trace, 10);
        assertThat(counts).isNotNull();
        // the row with a string id is skipped (the replay rejects it); the row whose length does not match its ids
        // is counted (the replay rejects it too, but counting it can only make id 2 look shared); nested ids are not
        // the row's
        assertThat(counts.get(1L)).isEqualTo(1);
        assertThat(counts.get(2L)).isEqualTo(2);
        assertThat(counts.get(3L)).isEqualTo(1);
        assertThat(counts.get(9L)).isEqualTo(1);
        assertThat(counts.containsKey(100L)).isFalse();
        assertThat(counts).hasSize(4);
    }

    @Test
    void theCount_isNone_whenTheFirstRowHasNoHashIds_orTooManyRowsHaveThem() throws IOException {
        Path lengths = tmp.resolve("l.jsonl");
        Files.writeString(lengths, """
                {"timestamp": 0, "input_length": 96, "output_length": 4}
                {"timestamp": 1, "input_length": 64, "output_length": 4, "hash_ids": [1, 2]}
                """);
        assertThat(JsonLinesReader.countHashIds(lengths, 10)).isNull();
        Path three = tmp.resolve("3.jsonl");
        Files.writeString(three, """
                {"timestamp": 0, "input_length": 32, "output_length": 4, "hash_ids": [1]}
                {"timestamp": 1, "input_length": 32, "output_length": 4, "hash_ids": [2]}
                {"timestamp": 2, "input_length": 32, "output_length": 4, "hash_ids": [3]}
                """);
        assertThat(JsonLinesReader.countHashIds(three, 3)).hasSize(3);
        assertThat(JsonLinesReader.countHashIds(three, 2)).isNull();
    }

    @Test
    void anIdBecomesARequestsOwn_onceEveryOtherRequestCarryingItHasEnded() throws IOException {
        List<Request> r = release("""
                {"timestamp": 0, "input_length": 96, "output_length": 4, "hash_ids": [1, 2, 3]}
                {"timestamp": 10, "input_length": 96, "output_length": 4, "hash_ids": [1, 2, 4]}
                {"timestamp": 20, "input_length": 64, "output_length": 4, "hash_ids": [1, 5]}
                """);
        Request second = r.get(1);
        assertThat(second.privateFromBlock(16)).isEqualTo(4); // id 4 is its alone; ids 1 and 2 are shared
        workload.onRequestDone(r.get(0), 4, false);
        assertThat(second.privateFromBlock(16)).isEqualTo(2); // the other carrier of id 2 ended
        workload.onRequestDone(r.get(0), 4, false); // a request ends once: a second report changes nothing
        assertThat(second.privateFromBlock(16)).isEqualTo(2); // id 1 is still the third row's too
        workload.onRequestLost(r.get(2)); // a request that reached no worker ended as well
        assertThat(second.privateFromBlock(16)).isZero();
        workload.onRequestDone(second, 4, true);
        assertThat(second.privateFromBlock(16)).isEqualTo(-1); // an ended request asks no more
    }

    @Test
    void liveCounts_fallOnlyForTheIdsARowCarried_andNeverBelowNone() {
        it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap rows = new it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap();
        rows.put(1L, 3);
        rows.put(2L, 1);
        io.servesim.workload.LiveHashIds live = new io.servesim.workload.LiveHashIds(rows);
        assertThat(live.firstSole(new long[] {1, 2}, 2)).isEqualTo(1);
        assertThat(live.firstSole(new long[] {1, 2}, 1)).isEqualTo(-1); // only the covering ids are asked about
        live.ended(new long[] {1, 1, 9}); // an id twice in a row was counted twice; 9 was never counted
        assertThat(live.carriers(1)).isEqualTo(1);
        assertThat(live.carriers(9)).isZero();
        assertThat(live.firstSole(new long[] {9, 1}, 2)).isEqualTo(1); // an id nobody carries is not one's own
        live.ended(new long[] {1, 2});
        assertThat(live.carriers(1)).isZero();
        assertThat(live.carriers(2)).isZero();
    }
}
