package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * The attention kernel vLLM selects by default for a GPU architecture (its FLASH_ATTN backend builds FlashAttention
 * 3 only for compute capability 9.0 and FlashAttention 2 for the others; Blackwell data-centre parts default to
 * FlashInfer). AIConfigurator's context-attention tables name the same kernels for the six GPUs it measures.
 */
public enum AttentionKernel implements Named {
    FA2(
            "fa2",
            "FlashAttention 2 (Ampere, Ada, Blackwell workstation): packs a KV head's query heads only in"
                    + " decode-only launches"),
    FA3("fa3", "FlashAttention 3 (Hopper): packs them in every launch"),
    FLASHINFER("flashinfer", "FlashInfer / TensorRT-LLM kernels (Blackwell data centre)");

    private final String configName;
    private final String description;

    AttentionKernel(String configName, String description) {
        this.configName = configName;
        this.description = description;
    }

    /** Parses a config value. */
    @JsonCreator
    public static AttentionKernel of(String name) {
        return Named.parse(AttentionKernel.class, name);
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
