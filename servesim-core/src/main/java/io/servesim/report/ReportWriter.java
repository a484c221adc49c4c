package io.servesim.report;

import io.servesim.config.ConfigLoader;
import io.servesim.config.RooflineConfig;
import io.servesim.metrics.Numbers;
import io.servesim.metrics.RequestColumns;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.Stats;
import io.servesim.run.RunResult;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes a run's reports: {@code summary.json}, {@code requests.csv} and {@code canonical.json}, each atomically.
 *
 * <p>canonical.json is the byte-stable record of a run: keys sorted at every level, no host-time fields, every
 * number an integer (times in virtual nanoseconds) or a plain decimal (summary values rounded to 6 places, config
 * values as written), one request per line.
 */
public final class ReportWriter {
    /** Schema identifier written into canonical.json. */
    public static final String CANONICAL_SCHEMA = "servesim.canonical.v1";

    /** Columns of requests.csv, in order. */
    public static final List<String> REQUEST_COLUMNS = RequestColumns.CSV_NAMES;

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .disable(SerializationFeature.INDENT_OUTPUT)
            .build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ReportWriter() {}

    /**
     * Writes all reports of a run into {@code dir} (created if needed) and deletes the ones this run does not have;
     * returns the names written (a streamed requests.csv.zst, written during the run, included).
     */
    public static List<String> writeAll(RunResult result, Summary summary, Path dir) {
        List<String> written = new ArrayList<>();
        AtomicFiles.writeString(
                dir.resolve("summary.json"),
                JSON.writerWithDefaultPrettyPrinter().writeValueAsString(summaryTree(summary)) + "\n");
        written.add("summary.json");
        Path requestsCsv = dir.resolve("requests.csv");
        if (result.config().output().requestsCsv() && result.streamedRequestsSha256() == null) {
            // the view the summary was computed from (output.client_frontend), not a second one
            io.servesim.metrics.ClientView client =
                    summary.client() == null ? null : summary.client().view();
            AtomicFiles.write(requestsCsv, w -> writeRequestsCsv(result.log(), client, w));
            written.add("requests.csv");
        } else {
            AtomicFiles.delete(requestsCsv); // never leave a stale file from an earlier run next to new reports
        }
        if (result.streamedRequestsSha256() == null) {
            AtomicFiles.delete(dir.resolve("requests.csv.zst"));
        } else {
            written.add("requests.csv.zst");
        }
        AtomicFiles.write(dir.resolve("workers.csv"), w -> writeWorkersCsv(result, w));
        written.add("workers.csv");
        if (result.timeSeries().size() > 0) {
            AtomicFiles.write(
                    dir.resolve("timeseries.csv"), w -> writeTimeSeries(result.timeSeries(), result.pd() != null, w));
            written.add("timeseries.csv");
        } else {
            AtomicFiles.delete(dir.resolve("timeseries.csv"));
        }
        AtomicFiles.write(dir.resolve("canonical.json"), w -> writeCanonical(result, summary, w));
        written.add("canonical.json");
        return written;
    }

    /** The summary as a JSON tree with the public key names (insertion-ordered for reading). */
    public static ObjectNode summaryTree(Summary s) {
        ObjectNode o = NODES.objectNode();
        o.put("requests", s.requests());
        o.put("completed", s.completed());
        o.put("rejected", s.rejected());
        o.put("incomplete", s.incomplete());
        o.put("abandoned", s.abandoned());
        if (s.timedOut() != null) {
            o.put("timed_out", s.timedOut()); // only with workload.client_timeout_s
        }
        o.put("length_capped", s.lengthCapped());
        o.put("duration_ms", Numbers.fixed(s.durationMs(), 6));
        o.put("total_input_tokens", s.totalInputTokens());
        o.put("total_output_tokens", s.totalOutputTokens());
        o.put("request_throughput_rps", Numbers.fixed(s.requestThroughputRps(), 6));
        o.put("input_throughput_tok_s", Numbers.fixed(s.inputThroughputTokS(), 6));
        o.put("output_throughput_tok_s", Numbers.fixed(s.outputThroughputTokS(), 6));
        o.put("total_throughput_tok_s", Numbers.fixed(s.totalThroughputTokS(), 6));
        o.put("prefix_reuse_ratio", Numbers.fixed(s.prefixReuseRatio(), 6));
        o.put("first_admission_prefix_reuse_ratio", Numbers.fixed(s.firstAdmissionPrefixReuseRatio(), 6));
        ObjectNode tokens = o.putObject("token_counts"); // the raw counts behind the ratios
        tokens.put("admission_tokens", s.tokenCounts().admissionTokens());
        tokens.put("admission_hit_tokens", s.tokenCounts().admissionHitTokens());
        tokens.put("first_admission_tokens", s.tokenCounts().firstAdmissionTokens());
        tokens.put("first_admission_hit_tokens", s.tokenCounts().firstAdmissionHitTokens());
        tokens.put("first_admission_g2_tokens", s.tokenCounts().firstAdmissionG2Tokens());
        tokens.put("first_admission_remote_tokens", s.tokenCounts().firstAdmissionRemoteTokens());
        o.put("preemptions", s.preemptions());
        o.put("steps", s.steps());
        o.put("evictions", s.evictions());
        o.set("ttft_ms", statsTree(s.ttftMs()));
        o.set("tpot_ms", statsTree(s.tpotMs()));
        o.set("itl_ms", statsTree(s.itlMs()));
        o.set("e2e_ms", statsTree(s.e2eMs()));
        o.set("queue_ms", statsTree(s.queueMs()));
        o.put("percentile_method", s.percentileMethod());
        o.put("load_imbalance_ratio", Numbers.fixed(s.loadImbalanceRatio(), 6));
        o.put("workers_drained", s.workersDrained());
        o.put("workers_failed", s.workersFailed());
        o.put("restarts", s.restarts());
        o.set("deployment", deploymentTree(s.deployment()));
        o.set("kv_tiers", kvTiersTree(s));
        o.set("kvcr", kvcrTree(s.kvcr()));
        o.set("workers", workersTree(s.ranks()));
        if (!s.pools().isEmpty()) {
            var pools = o.putArray("pools"); // only with cluster.pools: summaries of uniform fleets are unchanged
            for (Summary.Pool p : s.pools()) {
                ObjectNode po = pools.addObject();
                po.put("name", p.name());
                po.put("first_worker", p.firstWorker());
                po.put("workers", p.workers());
                po.set("deployment", deploymentTree(p.deployment()));
                po.put("requests_routed", p.requestsRouted());
                po.put("completed", p.completed());
                po.put("rejected", p.rejected());
                po.put("output_tokens", p.outputTokens());
                po.put("output_throughput_tok_s", Numbers.fixed(p.outputThroughputTokS(), 6));
                po.set("ttft_ms", statsTree(p.ttftMs()));
                po.set("tpot_ms", statsTree(p.tpotMs()));
                po.set("e2e_ms", statsTree(p.e2eMs()));
            }
        }
        if (s.client() != null) {
            ObjectNode client = o.putObject("client"); // only with output.client_frontend
            client.put("overhead_ms", Numbers.fixed(s.client().frontend().overheadMs(), 6));
            client.put("per_request_us", Numbers.fixed(s.client().frontend().perRequestUs(), 6));
            client.set("ttft_ms", statsTree(s.client().ttftMs()));
            client.set("tpot_ms", statsTree(s.client().tpotMs()));
            client.set("e2e_ms", statsTree(s.client().e2eMs()));
        }
        if (s.pd() != null) {
            ObjectNode pd = o.putObject("pd"); // only with cluster.mode: disaggregated
            pd.put("handoffs", s.pd().handoffs());
            pd.put("transfers", s.pd().transfers());
            pd.put("landed", s.pd().landed());
            pd.put("aborted", s.pd().aborted());
            pd.put("cancelled", s.pd().cancelled());
            pd.put("expired", s.pd().expired());
            pd.put("reprefills", s.pd().reprefills());
            pd.put("local_prefills", s.pd().localPrefills());
            pd.put("bytes", s.pd().bytes());
            pd.put("tokens", s.pd().tokens());
            pd.put("moving_peak", s.pd().movingPeak());
            pd.put("link_utilization", Numbers.fixed(s.pd().linkUtilization(), 6));
            pd.set("transfer_ms", statsTree(s.pd().transferMs()));
            pd.set("transfer_wait_ms", statsTree(s.pd().transferWaitMs()));
            pd.set("prefill_ms", statsTree(s.pd().prefillMs()));
            pd.set("decode_first_token_ms", statsTree(s.pd().decodeFirstTokenMs()));
        }
        o.put("bad_lines_skipped", s.badLinesSkipped());
        var samples = o.putArray("bad_line_samples");
        for (String line : s.badLineSamples()) {
            samples.add(line);
        }
        return o;
    }

    /** Per worker (summed over its ranks) and per rank: requests, busy time, passes, tokens, peak KV, preemptions. */
    private static tools.jackson.databind.node.ArrayNode workersTree(java.util.List<io.servesim.run.RankStats> ranks) {
        var workers = NODES.arrayNode();
        int i = 0;
        while (i < ranks.size()) {
            int w = ranks.get(i).worker();
            ObjectNode wo = workers.addObject();
            long req = 0;
            long busy = 0;
            long passes = 0;
            long pre = 0;
            long dec = 0;
            long preempt = 0;
            double peak = 0;
            var rankArray = NODES.arrayNode();
            for (; i < ranks.size() && ranks.get(i).worker() == w; i++) {
                io.servesim.run.RankStats r = ranks.get(i);
                req += r.requests();
                busy += r.busyNanos();
                passes += r.passes();
                pre += r.prefillTokens();
                dec += r.decodeTokens();
                preempt += r.preemptions();
                peak = Math.max(peak, r.peakKvUsage());
                ObjectNode ro = rankArray.addObject();
                ro.put("rank", r.rank());
                ro.put("requests", r.requests());
                ro.put("busy_ms", Numbers.fixed(r.busyNanos() / 1e6, 6));
                ro.put("passes", r.passes());
                ro.put("prefill_tokens", r.prefillTokens());
                ro.put("decode_tokens", r.decodeTokens());
                ro.put("peak_kv_usage", Numbers.fixed(r.peakKvUsage(), 6));
                ro.put("preemptions", r.preemptions());
            }
            wo.put("worker", w);
            wo.put("requests", req);
            wo.put("busy_ms", Numbers.fixed(busy / 1e6, 6));
            wo.put("passes", passes);
            wo.put("prefill_tokens", pre);
            wo.put("decode_tokens", dec);
            wo.put("peak_kv_usage", Numbers.fixed(peak, 6));
            wo.put("preemptions", preempt);
            wo.set("ranks", rankArray);
        }
        return workers;
    }

    private static ObjectNode kvcrTree(Summary.Kvcr k) {
        ObjectNode o = NODES.objectNode();
        o.put("staged", k.staged());
        o.put("landed", k.landed());
        o.put("completed", k.completed());
        o.put("detached", k.detached());
        o.put("source_only", k.sourceOnly());
        o.put("aborted", k.aborted());
        ObjectNode rejected = o.putObject("rejected");
        rejected.put("draining_source", k.rejectedDrainingSource());
        rejected.put("failed_source", k.rejectedFailedSource());
        rejected.put("cost", k.rejectedCost());
        o.put("moving_peak", k.movingPeak());
        o.put("bytes", k.bytes());
        o.put("source_g2_blocks", k.sourceG2Blocks());
        o.put("remote_tokens", k.remoteTokens());
        o.put("remote_first_admission_reuse_ratio", Numbers.fixed(k.remoteFirstAdmissionReuseRatio(), 6));
        o.put("registry_wakeups", k.registryWakeups());
        o.set("pull_ms", statsTree(k.pullMs()));
        o.set("parked_ms", statsTree(k.parkedMs()));
        return o;
    }

    private static ObjectNode deploymentTree(io.servesim.timing.Deployment d) {
        ObjectNode o = NODES.objectNode();
        o.put("model", d.model() == null ? null : d.model().name());
        o.put("gpu", d.gpu() == null ? null : d.gpu().name());
        o.put("timing", d.timingType().configName());
        o.put("num_gpu_blocks", d.numGpuBlocks());
        o.put("num_gpu_blocks_source", d.blocksSource());
        o.put("bytes_per_token", d.bytesPerToken());
        o.put("max_model_len", d.maxModelLen());
        if (d.model() != null) {
            o.put("model_params_b", Numbers.fixed(d.model().totalParams() / 1e9, 3));
        }
        if (d.model() != null && d.model().checkpointDtype() != null) {
            // a checkpoint quantized ahead is served in its own type, whatever timing.weight_dtype says
            o.put("weight_dtype", d.model().checkpointDtype().configName());
        }
        if (d.model() != null && d.model().checkpointKvDtype() != null) {
            // a ModelOpt checkpoint's KV cache type, which vLLM's kv_cache_dtype auto takes, whatever timing.kv_dtype
            // says
            o.put("kv_dtype", d.model().checkpointKvDtype().configName());
        }
        if (d.expertDtype() != null) {
            o.put("expert_dtype", d.expertDtype().configName()); // MoE models only: the checkpoint's or the stated
        }
        if (d.hybridWindowTokens() > 0) {
            o.put("hybrid_window", d.hybridWindowTokens()); // vLLM's hybrid KV cache runs (gpt-oss): its window
        }
        // the vLLM scheduler's limits in effect: the stated ones, else vLLM's defaults for the GPU (batchDefaults)
        if (d.vllmEngine()) {
            o.put("max_num_seqs", d.maxNumSeqs());
            o.put("max_num_batched_tokens", d.maxNumBatchedTokens());
        }
        if (d.sglang() != null) {
            o.put("chunked_prefill_size", d.sglang().chunkTokens()); // stated, or SGLang's default for the GPU
        }
        if (d.capacity() != null) {
            ObjectNode c = o.putObject("kv_capacity_gib");
            c.put("memory", Numbers.fixed(d.capacity().memoryGib(), 3));
            c.put("weights", Numbers.fixed(d.capacity().weightsGib(), 3));
            c.put("activation", Numbers.fixed(d.capacity().activationGib(), 3));
            c.put("non_torch", Numbers.fixed(d.capacity().nonTorchGib(), 3));
            c.put("available_kv", Numbers.fixed(d.capacity().availableKvGib(), 3));
            // SGLang's and TensorRT-LLM's rules: their memory share (vLLM's is timing.gpu_memory_utilization)
            switch (d.capacity().engine()) {
                case SGLANG ->
                    c.put("mem_fraction_static", Numbers.fixed(d.capacity().fraction(), 3));
                case TRTLLM ->
                    c.put("free_gpu_memory_fraction", Numbers.fixed(d.capacity().fraction(), 3));
                case VLLM -> {}
            }
        }
        if (d.roofline() != null) {
            ObjectNode r = o.putObject("roofline");
            for (String key : RooflineConfig.KEYS) {
                r.put(key, Numbers.fixed(d.roofline().get(key), 6));
            }
        }
        return o;
    }

    private static ObjectNode kvTiersTree(Summary s) {
        ObjectNode o = NODES.objectNode();
        o.put("g1_first_admission_reuse_ratio", Numbers.fixed(s.g1FirstAdmissionReuseRatio(), 6));
        o.put("g2_first_admission_reuse_ratio", Numbers.fixed(s.g2FirstAdmissionReuseRatio(), 6));
        o.put("g2_store_bytes", s.g2StoreBytes());
        o.put("g2_load_bytes", s.g2LoadBytes());
        o.put("g2_loads", s.g2Loads());
        o.put("g2_evictions", s.g2Evictions());
        return o;
    }

    private static ObjectNode statsTree(Stats st) {
        ObjectNode o = NODES.objectNode();
        o.put("count", st.count());
        o.put("mean", Numbers.fixed(st.mean(), 6));
        o.put("min", Numbers.fixed(st.min(), 6));
        o.put("max", Numbers.fixed(st.max(), 6));
        o.put("p50", Numbers.fixed(st.p50(), 6));
        o.put("p90", Numbers.fixed(st.p90(), 6));
        o.put("p95", Numbers.fixed(st.p95(), 6));
        o.put("p99", Numbers.fixed(st.p99(), 6));
        return o;
    }

    /** Writes requests.csv (header row, one row per request in request-id order, Locale.ROOT numbers). */
    public static void writeRequestsCsv(RequestLog log, Writer w) throws IOException {
        writeRequestsCsv(log, null, w);
    }

    /** The columns requests.csv ends with when the run reports the client's view ({@code output.client_frontend}). */
    public static final List<String> CLIENT_COLUMNS = List.of(
            "client_ttft_ms",
            "client_tpot_ms",
            "client_e2e_ms",
            "requests_in_first_token_step",
            "requests_in_last_token_step");

    /**
     * Writes requests.csv; with {@code client} non-null each row ends in {@link #CLIENT_COLUMNS} (empty unless the
     * request completed; the TPOT empty below two outputs).
     */
    public static void writeRequestsCsv(RequestLog log, io.servesim.metrics.ClientView client, Writer w)
            throws IOException {
        String[] pools = log.poolNames();
        String header = RequestColumns.csvHeader(log.disaggregated(), pools != null);
        if (client != null) {
            header = header.substring(0, header.length() - 1) + "," + String.join(",", CLIENT_COLUMNS) + "\n";
        }
        w.write(header);
        StringBuilder sb = new StringBuilder(256);
        for (int i : log.indicesByRequestId()) {
            sb.setLength(0);
            RequestColumns.appendCsv(log.get(i), pools, sb);
            if (client != null) {
                sb.setLength(sb.length() - 1); // before the newline
                if (client.completed(i)) {
                    double tpot = client.tpotMs(i);
                    sb.append(',').append(Numbers.fixedString(client.ttftMs(i), 6));
                    sb.append(',').append(Double.isNaN(tpot) ? "" : Numbers.fixedString(tpot, 6));
                    sb.append(',').append(Numbers.fixedString(client.e2eMs(i), 6));
                    sb.append(',').append(client.firstTokenStepRequests(i));
                    sb.append(',').append(client.lastTokenStepRequests(i)).append('\n');
                } else {
                    sb.append(",,,,,\n");
                }
            }
            w.append(sb);
        }
    }

    /** Writes timeseries.csv: the header, then one row per sample in time order (cluster row first). */
    public static void writeTimeSeries(io.servesim.metrics.TimeSeries ts, Writer w) throws IOException {
        writeTimeSeries(ts, false, w);
    }

    /** Writes timeseries.csv with the header of a run, disaggregated ({@code pd_*} columns) or not. */
    public static void writeTimeSeries(io.servesim.metrics.TimeSeries ts, boolean disaggregated, Writer w)
            throws IOException {
        w.write(io.servesim.metrics.TimeSeries.header(disaggregated));
        StringBuilder sb = new StringBuilder(128);
        for (int i = 0; i < ts.size(); i++) {
            sb.setLength(0);
            ts.appendRow(i, sb);
            w.append(sb);
        }
    }

    /** Writes workers.csv: per worker, requests routed to it, busy time (Σ over its ranks) and busy fraction. */
    public static void writeWorkersCsv(RunResult result, Writer w) throws IOException {
        w.write("worker,requests,busy_ms,busy_fraction\n");
        long[] busy = result.workerBusyNanos();
        long[] reqs = result.workerRequests();
        for (int i = 0; i < busy.length; i++) {
            double span = (double) result.endNanos() * result.config().cluster().ranksOf(i);
            w.write(i + "," + reqs[i] + "," + Numbers.nanosAsMillis(busy[i]) + ","
                    + Numbers.fixedString(span > 0 ? busy[i] / span : 0, 6) + "\n");
        }
    }

    /** Writes canonical.json: sorted keys, integer nanoseconds, fixed decimals, one request per line. */
    public static void writeCanonical(RunResult result, Summary summary, Writer w) throws IOException {
        w.write("{\"config\":");
        w.write(JSON.writeValueAsString(sorted(ConfigLoader.toTree(result.config()))));
        w.write(",\n\"requests\":[");
        RequestLog log = result.log();
        boolean firstRow = true;
        StringBuilder sb = new StringBuilder(320);
        char[] row = new char[512]; // each row goes out through one reused array: no String or char[] per row
        for (int i : log.indicesByRequestId()) {
            sb.setLength(0);
            sb.append(firstRow ? "\n" : ",\n");
            firstRow = false;
            RequestColumns.appendCanonical(log.get(i), sb);
            int n = sb.length();
            if (n > row.length) {
                row = new char[Math.max(n, row.length * 2)];
            }
            sb.getChars(0, n, row, 0);
            w.write(row, 0, n);
        }
        w.write("],\n");
        if (result.streamedRequestsSha256() != null) {
            // rows were streamed to requests.csv.zst, not kept: their digest stands for them
            w.write("\"requests_csv_sha256\":\"" + result.streamedRequestsSha256() + "\",\n");
        }
        w.write("\"schema\":\"" + CANONICAL_SCHEMA + "\",\n\"summary\":");
        w.write(JSON.writeValueAsString(sorted(summaryTree(summary))));
        w.write(",\n\"workers\":[");
        long[] busy = result.workerBusyNanos();
        long[] reqs = result.workerRequests();
        for (int i = 0; i < busy.length; i++) {
            w.write((i == 0 ? "" : ",") + "{\"busy_ns\":" + busy[i] + ",\"requests\":" + reqs[i] + ",\"worker\":" + i
                    + "}");
        }
        w.write("]}\n");
    }

    /** A copy of a tree with object keys sorted at every level and floating-point numbers as plain decimals. */
    static JsonNode sorted(JsonNode node) {
        if (node.isFloatingPointNumber() && !node.isBigDecimal()) {
            return NODES.numberNode(java.math.BigDecimal.valueOf(node.doubleValue()));
        }
        if (node.isObject()) {
            ObjectNode out = NODES.objectNode();
            List<String> keys = new ArrayList<>(node.propertyNames());
            Collections.sort(keys);
            for (String k : keys) {
                out.set(k, sorted(node.get(k)));
            }
            return out;
        }
        if (node.isArray()) {
            var out = NODES.arrayNode();
            for (JsonNode child : node) {
                out.add(sorted(child));
            }
            return out;
        }
        return node;
    }
}
