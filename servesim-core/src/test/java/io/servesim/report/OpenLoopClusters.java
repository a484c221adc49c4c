package io.servesim.report;

import io.servesim.metrics.TimeSeries;
import io.servesim.run.RunResult;
import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * Random open-loop clusters for the properties that compare two ways of running one config (run-ahead, decode runs):
 * their common overrides, and the text they compare.
 */
final class OpenLoopClusters {
    private OpenLoopClusters() {}

    /** What one generated cluster is made of. */
    record Shape(
            int workers,
            int attentionDp,
            String dpMode,
            int blocks,
            int blockSize,
            int maxSeqs,
            String router,
            String kvMode,
            long seed,
            double tickSeconds,
            double ratePerSecond) {}

    /**
     * Overrides for a synthetic open-loop workload of 60 requests with shared prefixes on {@code shape}; by the seed,
     * a drain or a failure of worker 0, a time limit that stops the run mid-way, and roofline timing.
     */
    static List<String> overrides(Shape c) {
        long s = c.seed();
        List<String> all = new ArrayList<>(List.of(
                "cluster.workers=" + c.workers(),
                "cluster.attention_dp=" + c.attentionDp(),
                "cluster.dp_mode=" + c.dpMode(),
                "engine.kv_cache.block_size=" + c.blockSize(),
                "engine.kv_cache.num_gpu_blocks=" + c.blocks(),
                "engine.scheduler.max_num_seqs=" + c.maxSeqs(),
                "engine.scheduler.max_num_batched_tokens=" + Math.max(64, c.maxSeqs()),
                "engine.max_model_len=" + Math.min((c.blocks() - 1) * 8, 400),
                "cluster.router.policy=" + c.router(),
                "cluster.router.kv.mode=" + c.kvMode(),
                "workload.seed=" + s,
                "workload.synthetic.requests=60",
                "workload.synthetic.input_tokens={type: uniform, min: 1, max: 200}",
                "workload.synthetic.output_tokens={type: uniform, min: 1, max: 120}",
                "workload.synthetic.shared_prefix_tokens=24",
                "workload.synthetic.prefix_groups=3",
                "workload.arrival.rate=" + c.ratePerSecond(),
                "output.timeseries_tick_s=" + c.tickSeconds()));
        if (s % 3 == 0) {
            all.add("cluster.events=[{at_ms: 300, worker: 0, action: drain}]");
        } else if (s % 3 == 1) {
            all.add("cluster.events=[{at_ms: " + (s % 400) + ", worker: 0, action: fail}]");
        }
        if (s % 4 == 0) {
            all.add("limits.time_limit_s=" + (0.5 + s % 7 * 0.3)); // stops mid-run: incomplete rows
        }
        if (s % 5 == 0) {
            all.add("timing.type=roofline");
            all.add("timing.model=llama-3.1-8b");
            all.add("timing.gpu=a100-sxm-80gb");
        }
        return all;
    }

    /**
     * A decode-heavy open-loop run on 4 workers (200 requests of 100–300 output tokens at 5 per second): few requests
     * per worker at a time, so most steps are decodes between arrivals and finishes.
     */
    static List<String> decodeHeavy() {
        return new ArrayList<>(List.of(
                "cluster.workers=4",
                "workload.seed=3",
                "workload.synthetic.requests=200",
                "workload.synthetic.input_tokens={type: uniform, min: 16, max: 200}",
                "workload.synthetic.output_tokens={type: uniform, min: 100, max: 300}",
                "workload.arrival.rate=5"));
    }

    /** The canonical output followed by every time-series row: what two equivalent runs must share byte for byte. */
    static String canonicalWithTimeSeries(RunResult r) throws IOException {
        StringWriter w = new StringWriter();
        ReportWriter.writeCanonical(r, Summaries.of(r), w);
        TimeSeries ts = r.timeSeries();
        w.write("\ntimeseries rows " + ts.size() + "\n");
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < ts.size(); i++) {
            ts.appendRow(i, rows);
            rows.append('\n');
        }
        w.write(rows.toString());
        return w.toString();
    }

    /** Open-loop clusters ({@link OpenLoopClusters#overrides}) in the given DP modes and engine loops, every router. */
    static Arbitrary<List<String>> clusters(Arbitrary<String> dpMode, Arbitrary<Boolean> async) {
        Arbitrary<Integer> workers = Arbitraries.integers().between(1, 4);
        Arbitrary<Integer> dp = Arbitraries.integers().between(1, 2);
        Arbitrary<Integer> blocks = Arbitraries.integers().between(8, 200);
        Arbitrary<Integer> maxSeqs = Arbitraries.integers().between(1, 12);
        Arbitrary<String> router = Arbitraries.of("round_robin", "least_loaded", "session_affinity", "kv_aware");
        Arbitrary<Long> seed = Arbitraries.longs().between(0, 1000);
        return Combinators.combine(workers, dp, blocks, maxSeqs, router, dpMode, seed, async)
                .as((w, d, nb, ms, r, mode, s, a) -> {
                    List<String> all = OpenLoopClusters.overrides(new OpenLoopClusters.Shape(
                            w,
                            d,
                            mode,
                            nb,
                            s % 2 == 0 ? 8 : 16,
                            ms,
                            r,
                            s % 2 == 0 ? "approximate" : "exact",
                            s,
                            s % 4 == 0 ? 0.05 : 1.0,
                            s % 3 == 0 ? 200 : 10));
                    all.add("engine.scheduler.async_scheduling=" + a);
                    all.add("engine.kv_cache.prefix_caching=" + (s % 7 != 0 || s % 11 == 0));
                    if (s % 11 == 0) {
                        all.add("engine.kv_cache.host_offload.num_host_blocks=64"); // a G2 tier: a KV connector
                    }
                    return all;
                });
    }
}
