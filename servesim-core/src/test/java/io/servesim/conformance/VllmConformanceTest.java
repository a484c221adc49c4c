package io.servesim.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import io.servesim.api.Result;
import io.servesim.api.Servesim;
import io.servesim.metrics.RequestRecord;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * servesim against vLLM's own scheduler, in CI without vLLM: random scenarios of the vllm-oracle harness (its
 * {@code gen.py}: chunked prefill, tiny budgets and pools, preemption and resumption over cached blocks, prefix hits,
 * max_model_len capping and rejection, max_num_seqs limits, and the {@code chaos} profile; vLLM's full-sequence
 * admission gate on in three scenarios of four, off in the fourth; vLLM's hybrid KV cache, a sliding-window group
 * beside the full-attention one as for gpt-oss, in one scenario of three; and 60 scenarios whose clients give up 120,
 * 250 or 400 ms after arrival, each unfinished request then aborted by vLLM's {@code finish_requests} before its next
 * schedule and recorded with what its client had received, as {@code workload.client_timeout_s} does) with the
 * results of vLLM's
 * real scheduler code recorded as fixtures at the vLLM commit named in each file, in the synchronous engine loop and
 * the async one. Every request's status, finish reason, output tokens, first-scheduled, first-token and last-token
 * time, preemptions, first-admission hit and vLLM-reported cached tokens, and each scenario's step count, must match.
 * Regenerate the fixtures only with the harness: {@code python3 scripts/conformance-fixtures.py}.
 */
class VllmConformanceTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @ParameterizedTest(name = "{0} engine loop")
    @ValueSource(strings = {"sync", "async"})
    void everyRecordedScenario_agreesWithVllm_onEveryField(String mode, @TempDir Path dir) throws IOException {
        List<String> mismatches = new ArrayList<>();
        int scenarios = 0;
        int requests = 0;
        int timedOut = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                new GZIPInputStream(
                        VllmConformanceTest.class.getResourceAsStream("/conformance/vllm-" + mode + ".jsonl.gz")),
                StandardCharsets.UTF_8))) {
            JsonNode header = JSON.readTree(in.readLine());
            assertThat(header.get("mode").asString()).isEqualTo(mode);
            assertThat(header.get("vllm_commit").asString()).hasSize(40);
            String line;
            while ((line = in.readLine()) != null) {
                JsonNode row = JSON.readTree(line);
                JsonNode sc = row.get("scenario");
                Result r = Servesim.run(
                        Servesim.configFromYaml(config(sc, mode.equals("async"), write(sc, dir, scenarios))));
                List<RequestRecord> got = r.requests().toList();
                JsonNode want = row.get("vllm").get("requests");
                String id = "seed " + sc.get("seed").asInt() + " ("
                        + sc.get("profile").asString() + ")";
                assertThat(got).as(id).hasSize(want.size());
                for (int i = 0; i < want.size(); i++) {
                    compare(id + " request " + i, want.get(i), got.get(i), mismatches);
                    timedOut += want.get(i).get("status").asString().equals("timed_out") ? 1 : 0;
                }
                long steps = row.get("vllm").get("steps").asLong();
                if (steps != r.counters().steps()) {
                    mismatches.add(id + ": steps " + steps + " (vLLM) vs "
                            + r.counters().steps());
                }
                scenarios++;
                requests += want.size();
            }
        }
        assertThat(scenarios).isGreaterThanOrEqualTo(260);
        assertThat(requests).isGreaterThan(1000);
        assertThat(timedOut).as("requests whose client gave up").isGreaterThan(50);
        assertThat(mismatches).as(mode + ": fields that differ from vLLM").isEmpty();
    }

    private static void compare(String id, JsonNode v, RequestRecord s, List<String> out) {
        check(out, id, "status", v.get("status").asString(), s.status().status());
        check(
                out,
                id,
                "finish_reason",
                v.get("finish_reason").asString(),
                s.status().reason());
        check(out, id, "output_tokens", v.get("output_tokens").asLong(), s.outputTokens());
        check(out, id, "preemptions", v.get("preemptions").asLong(), s.preemptions());
        check(out, id, "cached_tokens", v.get("cached_tokens").asLong(), s.cachedTokens());
        if (!v.get("first_token_ns").isNull()) {
            check(out, id, "first_scheduled_ns", v.get("first_scheduled_ns").asLong(), s.firstScheduledNanos());
            check(out, id, "first_token_ns", v.get("first_token_ns").asLong(), s.firstTokenNanos());
            check(out, id, "last_token_ns", v.get("last_token_ns").asLong(), s.lastTokenNanos());
        }
        if (!v.get("vllm_reported_cached").isNull()) {
            check(
                    out,
                    id,
                    "reported_cached_tokens",
                    v.get("vllm_reported_cached").asLong(),
                    s.reportedCachedTokens());
        }
    }

    private static void check(List<String> out, String id, String field, Object vllm, Object servesim) {
        if (!String.valueOf(vllm).equals(String.valueOf(servesim))) {
            out.add(id + ": " + field + " " + vllm + " (vLLM) vs " + servesim);
        }
    }

    /** The scenario's requests as a servesim native trace (real prompt and output token ids). */
    private static Path write(JsonNode sc, Path dir, int n) throws IOException {
        Path trace = dir.resolve("trace-" + n + ".jsonl");
        StringBuilder sb = new StringBuilder();
        for (JsonNode r : sc.get("requests")) {
            sb.append("{\"arrival_ms\":")
                    .append(r.get("arrival_ms").asDouble())
                    .append(",\"input_length\":")
                    .append(r.get("prompt").size())
                    .append(",\"input_token_ids\":")
                    .append(JSON.writeValueAsString(r.get("prompt")))
                    .append(",\"output_length\":")
                    .append(r.get("max_tokens").asInt())
                    .append(",\"output_token_ids\":")
                    .append(JSON.writeValueAsString(r.get("output_ids")))
                    .append("}\n");
        }
        Files.writeString(trace, sb.toString());
        return trace;
    }

    /** One worker, one rank, the scenario's vLLM settings and its constant step (the harness's run_servesim.py). */
    private static String config(JsonNode sc, boolean async, Path trace) {
        JsonNode c = sc.get("config");
        return String.format(
                Locale.ROOT,
                """
                workload: {type: trace, seed: 1, trace: {format: servesim, path: '%s'}, client_timeout_s: %s}
                cluster: {workers: 1, attention_dp: 1, router: {policy: round_robin}}
                engine:
                  max_model_len: %d
                  scheduler: {max_num_seqs: %d, max_num_batched_tokens: %d, long_prefill_token_threshold: %d,
                              enable_chunked_prefill: %s, async_scheduling: %s, reserve_full_isl: %s}
                  kv_cache: {block_size: %d, num_gpu_blocks: %d, prefix_caching: %s, hybrid_window: %d}
                timing: {type: fixed, fixed: {step_ms: %s, prefill_ms: 0, decode_ms: 0, cpu_ms: %s}}
                output: {timeseries_tick_s: 0}
                """,
                trace,
                c.has("client_timeout_ms")
                        ? String.valueOf(c.get("client_timeout_ms").asDouble() / 1000)
                        : "null",
                c.get("max_model_len").asInt(),
                c.get("max_num_seqs").asInt(),
                c.get("max_num_batched_tokens").asInt(),
                c.path("long_prefill_token_threshold").asInt(0),
                c.path("enable_chunked_prefill").asBoolean(true),
                async,
                c.get("reserve_full_isl").asBoolean(),
                c.get("block_size").asInt(),
                c.get("num_gpu_blocks").asInt(),
                c.path("prefix_caching").asBoolean(true),
                c.path("hybrid_window").asInt(0),
                sc.path("step_ms").asDouble(10),
                sc.path("cpu_ms").asDouble(0));
    }
}
