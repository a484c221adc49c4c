package io.servesim.spark;

import io.servesim.sweep.PointResult;
import io.servesim.sweep.RunSpec;
import io.servesim.sweep.SweepEngine;
import io.servesim.sweep.SweepSpec;
import io.servesim.sweep.Sweeps;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * Runs sweep points as Spark tasks: one task per point ({@code parallelize(points, points.size())}), each calling
 * the same pure {@link Sweeps#evaluate} as the local engine, so results are identical whatever the engine. Only the
 * small {@link RunSpec} and {@link SweepSpec} records travel; traces are read by each task from their path.
 * {@code local[*]} runs Spark embedded (no install, loopback only); {@code spark://…} or {@code k8s://…} scales out.
 */
public final class SparkSweepEngine implements SweepEngine {
    private final SparkSession spark;
    private final JavaSparkContext jsc;
    private final org.apache.spark.util.LongAccumulator simNanos;

    /** Starts (or joins) a Spark session on {@code master}. */
    public SparkSweepEngine(String master) {
        SparkSession.Builder b =
                SparkSession.builder().appName("servesim-sweep").master(master);
        driverSettings(master).forEach(b::config);
        this.spark = b.getOrCreate();
        this.spark.sparkContext().setLogLevel("WARN");
        this.jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        this.simNanos = spark.sparkContext().longAccumulator("simulation-nanos");
    }

    /**
     * The driver's settings for a master: an embedded {@code local[...]} master binds the loopback interface only
     * (nothing is reachable from outside the machine); a cluster master ({@code spark://}, {@code k8s://},
     * {@code yarn}) leaves the driver's host and bind address to Spark's defaults or the user's
     * {@code spark-defaults.conf}, since executors on other hosts must reach the driver.
     */
    static java.util.Map<String, String> driverSettings(String master) {
        java.util.Map<String, String> c = new java.util.LinkedHashMap<>();
        c.put("spark.ui.enabled", "false");
        if (master.startsWith("local")) {
            c.put("spark.driver.host", "127.0.0.1");
            c.put("spark.driver.bindAddress", "127.0.0.1");
        }
        return c;
    }

    @Override
    public List<PointResult> run(SweepSpec spec, List<RunSpec> points, boolean failFast) {
        if (points.isEmpty()) {
            return List.of();
        }
        org.apache.spark.util.LongAccumulator acc = simNanos;
        List<PointResult> results = new ArrayList<>(jsc.parallelize(new ArrayList<>(points), points.size())
                .map(p -> {
                    long t0 = System.nanoTime(); // host time, for the orchestration share only (never in results)
                    PointResult r = Sweeps.evaluate(spec, p);
                    acc.add(System.nanoTime() - t0);
                    return r;
                })
                .collect());
        results.sort(Comparator.comparingInt(PointResult::pointId)); // the order of points (ids ascend)
        return results;
    }

    @Override
    public long simulationNanos() {
        return simNanos.value();
    }

    /** Writes results.parquet (one row per point, the results.csv columns). */
    @Override
    public List<String> writeExtras(SweepSpec spec, Sweeps.Outcome outcome, Path dir) {
        List<ResultRow> rows = new ArrayList<>();
        for (PointResult r : outcome.results()) {
            rows.add(ResultRow.of(r));
        }
        spark.createDataset(rows, Encoders.bean(ResultRow.class))
                .coalesce(1)
                .write()
                .mode(SaveMode.Overwrite)
                .parquet(dir.resolve("results.parquet").toAbsolutePath().toString());
        return List.of("results.parquet");
    }

    @Override
    public void close() {
        spark.stop();
    }
}
