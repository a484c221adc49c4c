package io.servesim.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.ConfigLoader;
import io.servesim.run.Simulation;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.statistics.Statistics;

/**
 * Session turns that keep only their prompt's tail (the session workload drops the tokens before the previous
 * turn's last full block once the run hashes every prompt at dispatch) change nothing: the canonical output and the
 * time series equal those of keeping every token, for random session clusters with either engine loop, vLLM,
 * SGLang and TensorRT-LLM ranks (whose token radix reads any position, so tails stay off), prefix caching on and
 * off, session-affinity, KV-aware and least-loaded routing, G2 tiers, KVCR pulls and failing workers (a re-dispatched
 * turn is looked up again); and the runs really dropped tokens.
 */
class TokenTailProperties {

    @Property(tries = 40)
    void sessionTails_changeNoOutput(
            @ForAll @LongRange(min = 0, max = 1000) long seed,
            @ForAll @IntRange(min = 1, max = 4) int workers,
            @ForAll @IntRange(min = 0, max = 5) int shape,
            @ForAll boolean async)
            throws IOException {
        String router = switch (shape % 3) {
            case 0 -> "session_affinity";
            case 1 -> "kv_aware";
            default -> "least_loaded";
        };
        String engine = shape == 5 ? "trtllm" : shape == 4 ? "sglang" : "vllm";
        boolean prefixCaching = seed % 7 != 3;
        List<String> overrides = new ArrayList<>(List.of(
                "workload.type=sessions",
                "workload.seed=" + seed,
                "workload.sessions.sessions=" + (4 + seed % 8),
                "workload.sessions.turns=" + (2 + seed % 5),
                "workload.sessions.first_input_tokens={type: uniform, min: 1, max: 300}",
                "workload.sessions.new_input_tokens={type: uniform, min: 0, max: 64}",
                "workload.sessions.output_tokens={type: uniform, min: 1, max: 80}",
                "workload.sessions.think_time_ms={type: fixed, value: " + (seed % 3 * 20) + "}",
                "workload.sessions.shared_prefix_tokens=" + (seed % 4 == 0 ? 0 : 32),
                "cluster.workers=" + workers,
                "cluster.router.policy=" + router,
                "engine.kind=" + engine,
                "engine.scheduler.async_scheduling=" + async,
                "engine.kv_cache.block_size=" + (seed % 2 == 0 ? 8 : 16),
                "engine.kv_cache.num_gpu_blocks=" + (40 + seed % 100),
                "engine.kv_cache.prefix_caching=" + prefixCaching,
                "engine.max_model_len=" + Math.min(600, (39 + seed % 100) * (seed % 2 == 0 ? 8 : 16))));
        if (engine.equals("vllm") && router.equals("session_affinity") && prefixCaching) {
            overrides.add("workload.sessions.migrate_fraction=0.3");
            overrides.add("engine.kv_cache.host_offload.num_host_blocks=128");
            overrides.add("engine.kvcr.enabled=" + (seed % 3 != 0));
        }
        if (seed % 5 == 0 && workers > 1) {
            overrides.add("cluster.events=[{at_ms: " + (seed % 300) + ", worker: 0, action: fail}]");
        }
        var config = ConfigLoader.fromYaml("", "property", overrides);
        String expected = OpenLoopClusters.canonicalWithTimeSeries(
                new Simulation(config).withoutTokenTails().run());
        Simulation tails = new Simulation(config);
        assertThat(OpenLoopClusters.canonicalWithTimeSeries(tails.run())).isEqualTo(expected);
        if (engine.equals("trtllm")) {
            assertThat(tails.tokenTailBlockSize()).isZero();
        }
        Statistics.label("tails").collect(tails.tokenTailBlockSize() > 0);
        Statistics.label("tails").coverage(c -> c.check(true).percentage(p -> p >= 50));
    }
}
