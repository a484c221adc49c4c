package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * The engine family ({@code engine.kind}): which serving engine each rank runs (docs/engines.md). The {@code engine}
 * section's other keys are its settings; {@code trtllm} reads {@code engine.trtllm} instead of vLLM's scheduler keys.
 */
public enum EngineKind implements Named {
    /** vLLM v1. */
    VLLM("vllm", "vLLM v1: its scheduler (running loop, then waiting loop) over a paged, prefix-cached KV pool"),
    /** TensorRT-LLM (PyTorch backend). */
    TRTLLM(
            "trtllm",
            "TensorRT-LLM: capacity scheduler (no-evict or max-utilization) then micro-batch scheduler, block reuse"),
    /** SGLang. */
    SGLANG(
            "sglang",
            "SGLang: prefill or decode batches, future-token reservation, retraction, page-granular radix cache");

    private final String configName;
    private final String description;

    EngineKind(String configName, String description) {
        this.configName = configName;
        this.description = description;
    }

    /** Looks a name up; unknown names fail with {@code unknown engine 'x' (known: ...)}. */
    @JsonCreator
    public static EngineKind of(String name) {
        return Named.parse(EngineKind.class, name, "engine");
    }

    @Override
    public String configName() {
        return configName;
    }

    @Override
    public String description() {
        return description;
    }
}
