package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/**
 * Caching the blocks of requests that share nothing (lengths-only trace rows), or the blocks of a hash-id row from
 * its first id that no other unfinished or future request carries, without indexing them changes nothing: with tight
 * KV pools that preempt and evict, every output is identical to indexing every block, including requests that are
 * preempted and hit their own cached
 * blocks when admitted again, and whichever router (a KV-event router included) places the requests.
 */
class PrivateBlocksProperties {
    /** A KV-event router sees no private block (nothing is re-routed without failures): checked too. */
    private static final String[] POLICIES = {"round_robin", "least_loaded", "kv_aware"};

    private static final List<String> MOONCAKE =
            List.of("workload.trace.format=mooncake", "workload.trace.trace_block_size=16");

    /** A try's seed (the trace, the router, the engine loop) and its tight cluster. */
    record Run(long seed, int workers, int blocks, int maxSeqs) {}

    @Provide
    Arbitrary<Run> runs() {
        return Combinators.combine(
                        Arbitraries.longs().between(0, 10_000),
                        Arbitraries.integers().between(1, 3),
                        Arbitraries.integers().between(24, 120),
                        Arbitraries.integers().between(2, 16))
                .as(Run::new);
    }

    @Property(tries = 40)
    void unindexedPrivateBlocks_giveTheSameRun(@ForAll("runs") Run run) throws IOException {
        Random rnd = new Random(run.seed());
        StringBuilder csv = new StringBuilder("TIMESTAMP,ContextTokens,GeneratedTokens\n");
        long tenthsOfMicros = 0;
        for (int i = 0; i < 80; i++) {
            // bursts of arrivals so that pools fill and requests are preempted
            tenthsOfMicros += i % 20 == 0 ? 10_000_000 : rnd.nextInt(100_000);
            csv.append(String.format(
                    java.util.Locale.ROOT,
                    "2023-11-16 18:%02d:%02d.%07d,%d,%d%n",
                    tenthsOfMicros / 600_000_000L,
                    tenthsOfMicros / 10_000_000L % 60,
                    tenthsOfMicros % 10_000_000L,
                    1 + rnd.nextInt(150),
                    1 + rnd.nextInt(120)));
        }
        sameRunIndexedOrNot("lengths.csv", csv.toString(), List.of("workload.trace.format=azure"), run, 30);
    }

    @Property(tries = 40)
    void hashIdRows_withPrivateTails_giveTheSameRun(@ForAll("runs") Run run) throws IOException {
        // Mooncake-style rows: a prefix drawn from a few shared ids, then ids of which some recur in other rows
        // and some appear once. A row's blocks are cached unindexed from its first id that no other unfinished or
        // future request carries (Request.privateFromBlock): an id appearing once, or a recurring one whose other
        // carriers all ended, which the bursts 1 s apart make common; its prefix lookups must still find the
        // blocks that ended requests left.
        Random rnd = new Random(run.seed());
        StringBuilder rows = new StringBuilder();
        long ms = 0;
        int fresh = 1000;
        for (int i = 0; i < 80; i++) {
            ms += i % 20 == 0 ? 1000 : rnd.nextInt(10);
            int ids = 1 + rnd.nextInt(6);
            int length = (ids - 1) * 16 + 1 + rnd.nextInt(16);
            StringBuilder list = new StringBuilder();
            for (int k = 0; k < ids; k++) {
                long id = k < 2 && rnd.nextBoolean() ? k : rnd.nextInt(3) == 0 ? 100 + rnd.nextInt(20) : fresh++;
                list.append(k == 0 ? "" : ", ").append(id);
            }
            rows.append(String.format(
                    java.util.Locale.ROOT,
                    "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%s]}%n",
                    ms,
                    length,
                    1 + rnd.nextInt(60),
                    list));
        }
        sameRunIndexedOrNot("hash-ids.jsonl", rows.toString(), MOONCAKE, run, 30);
    }

    @Property(tries = 60)
    void conversationRows_whoseEarlierTurnsEnded_giveTheSameRun(@ForAll("runs") Run run) throws IOException {
        // Mooncake's conversation shape: a turn's ids are its previous turn's plus one or two new ones, all after a
        // shared first id, with no session id. A turn arrives after a gap that its previous turn usually, not always,
        // outlives, so a last turn's tail is often private from its second id on, and its lookups must still hit the
        // blocks its ended turns left on the worker.
        Random rnd = new Random(run.seed());
        int conversations = 12;
        java.util.List<long[]> rows = new java.util.ArrayList<>(); // {arrival ms, conversation, turn}
        for (int c = 0; c < conversations; c++) {
            long at = rnd.nextInt(200);
            int turns = 1 + rnd.nextInt(5);
            for (int t = 0; t < turns; t++) {
                rows.add(new long[] {at, c, t});
                at += 20 + rnd.nextInt(rnd.nextBoolean() ? 60 : 600);
            }
        }
        rows.sort(java.util.Comparator.<long[]>comparingLong(r -> r[0]).thenComparingLong(r -> r[1]));
        long[][] newIds = new long[conversations][];
        int fresh = 1000;
        for (int c = 0; c < conversations; c++) {
            newIds[c] = new long[6];
            for (int t = 0; t < 6; t++) {
                newIds[c][t] = fresh++;
            }
        }
        StringBuilder trace = new StringBuilder();
        for (long[] r : rows) {
            int c = (int) r[1];
            int turn = (int) r[2];
            StringBuilder list = new StringBuilder("0");
            for (int t = 0; t <= turn; t++) {
                list.append(", ").append(newIds[c][t]);
            }
            int ids = turn + 2;
            trace.append(String.format(
                    java.util.Locale.ROOT,
                    "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%s]}%n",
                    r[0],
                    (ids - 1) * 16 + 1 + rnd.nextInt(16),
                    1 + rnd.nextInt(40),
                    list));
        }
        // conversations preempt in 20-38 % of tries (four runs of 40): requiring some preemption (more than 0 % of 60
        // tries) keeps the check from failing by chance (0.8^60, under 1 run in 600,000 at a 20 % rate)
        sameRunIndexedOrNot("conversations.jsonl", trace.toString(), MOONCAKE, run, 1);
    }

    /**
     * Replays a trace on tight KV pools (block 8, 128-token steps) twice, indexing every block and with private
     * blocks, and requires identical canonical output; labels whether anything was preempted (checked to happen in
     * at least {@code minPreemptedPct} % of tries).
     */
    private static void sameRunIndexedOrNot(
            String file, String trace, List<String> format, Run run, int minPreemptedPct) throws IOException {
        long seed = run.seed();
        int blocks = run.blocks();
        int maxSeqs = run.maxSeqs();
        Path dir = Files.createTempDirectory("private-blocks");
        Path path = dir.resolve(file);
        Files.writeString(path, trace);
        List<String> overrides = new java.util.ArrayList<>(format);
        overrides.addAll(List.of(
                "workload.type=trace",
                "workload.trace.path=" + path.toString().replace('\\', '/'),
                "cluster.workers=" + run.workers(),
                "cluster.router.policy=" + POLICIES[(int) (seed / 3 % POLICIES.length)],
                "engine.kv_cache.block_size=8",
                "engine.kv_cache.num_gpu_blocks=" + blocks,
                "engine.max_model_len=" + Math.min((blocks - 1) * 8, 400),
                "engine.scheduler.max_num_seqs=" + maxSeqs,
                "engine.scheduler.max_num_batched_tokens=128",
                "engine.scheduler.async_scheduling=" + (seed % 3 != 0)));
        SimConfig config = ConfigLoader.fromYaml("", "property", overrides);
        RunResult indexed = new Simulation(config).indexingEveryBlock().run();
        RunResult unindexed = new Simulation(config).run();
        assertThat(canonical(unindexed)).isEqualTo(canonical(indexed));
        Statistics.label("preempted").collect(unindexed.counters().preemptions() > 0);
        Statistics.label("preempted").coverage(c -> c.check(true).percentage(p -> p >= minPreemptedPct));
        Files.delete(path);
        Files.delete(dir);
    }

    private static String canonical(RunResult r) throws IOException {
        StringWriter w = new StringWriter();
        ReportWriter.writeCanonical(r, Summaries.of(r), w);
        return w.toString();
    }
}
