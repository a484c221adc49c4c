package io.servesim.api;

import io.servesim.config.SimConfig;
import io.servesim.metrics.RequestRecord;
import io.servesim.metrics.TimeSeries;
import io.servesim.report.ReportWriter;
import io.servesim.report.Summary;
import io.servesim.run.RunCounters;
import io.servesim.run.RunResult;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * A finished run: its summary (what {@code summary.json} holds), every request's record, the time series and the
 * engine counters. In memory only; {@link #writeTo} writes the output files when asked.
 */
public final class Result {
    private final RunResult raw;
    private final Summary summary;

    Result(RunResult raw, Summary summary) {
        this.raw = raw;
        this.summary = summary;
    }

    /** The config that ran. */
    public SimConfig config() {
        return raw.config();
    }

    /** The summary: counts, throughput, reuse, latency statistics. */
    public Summary summary() {
        return summary;
    }

    /** Every request's record in request-id order (empty when rows were streamed to a file). */
    public Stream<RequestRecord> requests() {
        return raw.log().byRequestId();
    }

    /** The time series (cluster rows, and per-worker rows when asked for). */
    public TimeSeries timeSeries() {
        return raw.timeSeries();
    }

    /** Engine totals (steps, admissions, G2 and KVCR traffic, restarts). */
    public RunCounters counters() {
        return raw.counters();
    }

    /** Everything the run produced, unformatted. */
    public RunResult raw() {
        return raw;
    }

    /** The byte-stable canonical record of the run (what {@code canonical.json} holds). */
    public String canonicalJson() {
        StringWriter w = new StringWriter();
        try {
            ReportWriter.writeCanonical(raw, summary, w);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    /**
     * Writes summary.json, requests.csv (unless streamed or turned off), workers.csv, timeseries.csv and
     * canonical.json into {@code dir} (created if needed), each atomically, and last its manifest.json
     * ({@link io.servesim.report.RunDirectory}: a run killed while writing leaves a directory that says so).
     */
    public Result writeTo(Path dir) {
        io.servesim.report.RunDirectory.RUN.begin(dir);
        io.servesim.report.RunDirectory.RUN.finish(dir, writeFilesTo(dir));
        return this;
    }

    /**
     * Writes the files of {@link #writeTo} but not the manifest, and returns their names: for a caller that adds
     * files of its own (report.html) before {@link io.servesim.report.RunDirectory#finish}.
     */
    public List<String> writeFilesTo(Path dir) {
        return ReportWriter.writeAll(raw, summary, dir);
    }
}
