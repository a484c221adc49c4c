package io.servesim.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestRecord;
import java.util.List;

/** Runs a config with the engine invariants watching every step, and looks rows up: the rule tests' shared harness. */
public final class CheckedRuns {
    private CheckedRuns() {}

    /**
     * The host-tier scenario the engines' G2 tests share: 5 usable GPU blocks of 16 tokens, 70-token prompts with one
     * output token each, one request at a time; requests 0 and 2 share their first 48 tokens (3 blocks), request 1
     * shares nothing; 1 MB per token (16 MB a block).
     */
    public static List<String> hostTierScenario() {
        return new java.util.ArrayList<>(List.of(
                "engine.kv_cache.num_gpu_blocks=6",
                "workload.synthetic.requests=3",
                "workload.synthetic.input_tokens={type: fixed, value: 70}",
                "workload.synthetic.output_tokens={type: fixed, value: 1}",
                "workload.synthetic.shared_prefix_tokens=48",
                "workload.synthetic.prefix_groups=2",
                "workload.arrival={type: concurrency, concurrency: 1}",
                "engine.kv_cache.bytes_per_token=1000000"));
    }

    /** The G2 tier of {@link #hostTierScenario}'s tests: 100 host blocks, 64 GB/s out, 1 GB/s back, 2 ms first byte. */
    public static final String HOST_TIER =
            "engine.kv_cache.host_offload={num_host_blocks: 100, d2h_gbytes_per_s: 64, h2d_gbytes_per_s: 1.0,"
                    + " first_byte_ms: 2}";

    /** Runs {@code c}, failing the test on any invariant violation. */
    public static RunResult run(SimConfig c) {
        Simulation sim = new Simulation(c);
        Invariants checks = new Invariants(c).watch(sim);
        RunResult r = sim.run();
        checks.atEnd(sim, r, c);
        assertThat(checks.violations()).isEmpty();
        return r;
    }

    /** The row of request {@code id}. */
    public static RequestRecord row(RunResult r, int id) {
        RequestLog log = r.log();
        return log.get(log.indicesByRequestId()[id]);
    }
}
