package io.servesim.cli.bench;

import io.servesim.api.Result;
import io.servesim.api.RunOptions;
import io.servesim.api.Servesim;
import io.servesim.cli.Main;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.report.Summary;
import io.servesim.run.RunResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code servesim bench stream}: a long synthetic replay whose per-request rows are streamed to
 * {@code requests.csv.zst} (never kept in memory), run in a child JVM capped at {@code --heap} (default 2g) to show
 * that memory does not grow with the request count.
 */
@Command(
        name = "stream",
        mixinStandardHelpOptions = true,
        description = "Replay N synthetic requests on W workers with rows streamed to requests.csv.zst, in a JVM"
                + " capped at --heap; print wall time and peak heap.")
public final class StreamCommand implements Callable<Integer> {
    @Option(names = "--requests", defaultValue = "10000000", description = "Requests (default: ${DEFAULT-VALUE}).")
    long requests;

    @Option(names = "--workers", defaultValue = "64", description = "Workers (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--heap", defaultValue = "2g", description = "Child JVM -Xmx (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(
            names = "--out",
            defaultValue = "out/bench-stream",
            description = "Output directory (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--no-fork", description = "Run in this JVM (its own heap limit applies).")
    boolean noFork;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** The synthetic workload of the stream bench (documented in docs/performance.md). */
    static SimConfig config(long requests, int workers) {
        return ConfigLoader.fromYaml(
                "",
                "bench-stream",
                List.of(
                        "workload.synthetic.requests=" + requests,
                        "workload.synthetic.input_tokens={type: uniform, min: 64, max: 512}",
                        "workload.synthetic.output_tokens={type: uniform, min: 8, max: 64}",
                        "workload.synthetic.shared_prefix_tokens=32",
                        "workload.synthetic.prefix_groups=16",
                        "workload.arrival.rate=" + workers * 100,
                        "cluster.workers=" + workers,
                        "cluster.router.policy=least_loaded",
                        "engine.kv_cache.num_gpu_blocks=4096",
                        "output.stream_requests=true"));
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter con = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (requests < 1 || workers < 1) {
            err.println("error: --requests and --workers must be >= 1");
            return Main.USAGE;
        }
        if (!noFork) {
            List<String> cmd = ChildJvm.command(
                    List.of("-Xmx" + heap),
                    false,
                    List.of(
                            "bench",
                            "stream",
                            "--no-fork",
                            "--requests=" + requests,
                            "--workers=" + workers,
                            "--out=" + out));
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(cmd).inheritIO().start();
            int rc = p.waitFor();
            con.printf(
                    Locale.ROOT, "whole process (-Xmx%s): %.1f s, exit %d%n", heap, (System.nanoTime() - t0) / 1e9, rc);
            con.flush();
            return rc == 0 ? Main.OK : Main.FAILURE;
        }
        SimConfig cfg = config(requests, workers);
        long t0 = System.nanoTime();
        Result run = Servesim.run(cfg, RunOptions.defaults().streamRequestsTo(out.resolve("requests.csv.zst")));
        RunResult result = run.raw();
        long t1 = System.nanoTime();
        Summary s = run.summary();
        run.writeTo(out);
        long t2 = System.nanoTime();
        con.printf(
                Locale.ROOT,
                "bench stream: %d requests on %d workers, virtual %.1f s, completed %d%n"
                        + "replay %.1f s (%.2f us/request), reports %.2f s, peak heap %.0f MiB (max %d MiB)%n"
                        + "requests.csv.zst %.1f MB, percentiles: %s, ttft p50 %.3f ms p99 %.3f ms%n",
                result.requestsCreated(),
                workers,
                s.durationMs() / 1000,
                s.completed(),
                (t1 - t0) / 1e9,
                (t1 - t0) / 1e3 / Math.max(1, result.requestsCreated()),
                (t2 - t1) / 1e9,
                FixtureCell.jvmPeakHeapMb(),
                Runtime.getRuntime().maxMemory() >> 20,
                Files.size(out.resolve("requests.csv.zst")) / 1e6,
                s.percentileMethod(),
                s.ttftMs().p50(),
                s.ttftMs().p99());
        con.flush();
        return Main.OK;
    }
}
