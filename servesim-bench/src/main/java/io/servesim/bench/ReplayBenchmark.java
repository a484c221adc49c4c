package io.servesim.bench;

import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.run.RunResult;
import io.servesim.run.Simulation;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Host time of a whole replay of 100 synthetic requests per worker (1,024-token prompts with a 256-token shared
 * prefix, 128 output tokens, fixed timing, Poisson arrivals at 20 requests/s per worker), for several fleet sizes;
 * divide the score by 100 × workers for time per simulated request. Flat across {@code workers} means cost per
 * request does not grow with the fleet.
 *
 * {@snippet lang="shell" :
 * bash scripts/bench.sh ReplayBenchmark
 * }
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(1)
public class ReplayBenchmark {
    /** Requests per worker in one replay. */
    public static final int REQUESTS_PER_WORKER = 100;

    @Param({"8", "128", "2048"})
    int workers;

    SimConfig config;

    /** Builds the config (per-worker arrival rate 20 req/s). */
    @Setup
    public void setUp() {
        config = ConfigLoader.fromYaml(
                "",
                "bench",
                List.of(
                        "workload.type=synthetic",
                        "workload.synthetic.requests=" + REQUESTS_PER_WORKER * workers,
                        "workload.synthetic.input_tokens={type: fixed, value: 1024}",
                        "workload.synthetic.output_tokens={type: fixed, value: 128}",
                        "workload.synthetic.shared_prefix_tokens=256",
                        "workload.arrival.type=poisson",
                        "workload.arrival.rate=" + (20.0 * workers),
                        "cluster.workers=" + workers,
                        "cluster.router.policy=least_loaded",
                        "engine.scheduler.max_num_seqs=256",
                        "engine.kv_cache.num_gpu_blocks=4096",
                        "timing.type=fixed",
                        "timing.fixed.prefill_ms=10",
                        "timing.fixed.decode_ms=8",
                        "output.requests_csv=false"));
    }

    /** One replay. */
    @Benchmark
    public RunResult replay() {
        return Simulation.run(config);
    }
}
