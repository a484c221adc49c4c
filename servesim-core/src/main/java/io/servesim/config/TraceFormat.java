package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * The trace-format family ({@code workload.trace.format}) with what each format can carry (docs/traces.md). Opened
 * by {@code io.servesim.workload.trace.TraceFormats}.
 */
public enum TraceFormat implements Named {
    /** Mooncake FAST'25 / Dynamo JSONL. */
    MOONCAKE("mooncake", "Mooncake / Dynamo JSONL: lengths, hash_ids per trace_block_size tokens", true, false, true),
    /** Azure LLM inference CSV. */
    AZURE("azure", "Azure LLM inference CSV: timestamps and lengths only", false, false, false),
    /** vLLM-bench / LLMServingSim JSONL. */
    VLLM_BENCH("vllm_bench", "vLLM-bench / LLMServingSim JSONL with real token ids", true, true, false),
    /** The workload.jsonl of a measured-run folder. */
    MEASURED(
            "measured",
            "a measured run's workload.jsonl: arrival_s, input_tokens, output_tokens, optional prompt_token_ids",
            false,
            true,
            false),
    /** servesim's own JSONL. */
    SERVESIM("servesim", "servesim's native JSONL, the superset every format converts to", true, true, true);

    private final String configName;
    private final String description;
    private final boolean sessions;
    private final boolean tokenIds;
    private final boolean hashIds;

    TraceFormat(String configName, String description, boolean sessions, boolean tokenIds, boolean hashIds) {
        this.configName = configName;
        this.description = description;
        this.sessions = sessions;
        this.tokenIds = tokenIds;
        this.hashIds = hashIds;
    }

    /** Looks a name up; unknown names fail with {@code unknown value 'x' (expected one of: ...)}. */
    @JsonCreator
    public static TraceFormat of(String name) {
        return Named.parse(TraceFormat.class, name);
    }

    @Override
    public String configName() {
        return configName;
    }

    @Override
    public String description() {
        return description;
    }

    /** Whether rows may carry a session id (multi-turn sessions replayed closed loop). */
    public boolean sessions() {
        return sessions;
    }

    /** Whether rows may carry real prompt token ids. */
    public boolean tokenIds() {
        return tokenIds;
    }

    /** Whether rows may carry prefix hash ids (expanded deterministically to tokens). */
    public boolean hashIds() {
        return hashIds;
    }

    /** Whether the hash ids are per {@code workload.trace.trace_block_size} tokens (rather than per row). */
    public boolean usesTraceBlockSize() {
        return this == MOONCAKE;
    }
}
