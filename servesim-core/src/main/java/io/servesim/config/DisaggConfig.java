package io.servesim.config;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * Disaggregated prefill/decode settings ({@code cluster.disagg}, read only with {@code cluster.mode: disaggregated}):
 * when a prompt is prefilled on its decode worker instead of a prefill worker, and how the KV cache moves from the
 * prefill worker to the decode worker.
 *
 * @param maxLocalPrefillTokens conditional disaggregation (Dynamo's {@code max_local_prefill_length}): a request
 *     whose prompt, less the prefix its decode worker already caches, has at most this many tokens is prefilled on
 *     the decode worker; 0 disaggregates every request (vLLM's P/D proxy)
 * @param transfer the prefill-to-decode KV transfer
 */
public record DisaggConfig(int maxLocalPrefillTokens, KvTransferConfig transfer) {
    /** Validates the settings. */
    public DisaggConfig {
        Check.atLeast("max_local_prefill_tokens", maxLocalPrefillTokens, 0);
        Check.present("transfer", transfer);
    }

    /**
     * The prefill-to-decode KV transfer ({@code cluster.disagg.transfer}): what is moved, and over which links. Every
     * worker has one NIC with {@code nic_gbytes_per_s} in each direction; concurrent transfers share it (and the
     * fabric cap, when set) through servesim's transfer service.
     *
     * @param mode which prompt tokens are moved and charged
     * @param firstByteMs latency before a transfer's first byte (handshake, RDMA setup)
     * @param nicGbytesPerS each worker's NIC bandwidth, egress and ingress (GB/s; 0 = unlimited)
     * @param fabricGbytesPerS a cap shared by all moving transfers (GB/s; 0 = none)
     * @param bytesPerToken KV bytes per token moved, or null for the model's (every layer and KV head, at the KV
     *     dtype)
     * @param kvLeaseS vLLM NIXL's {@code kv_lease_duration}: how long a prefill worker keeps blocks no decode worker
     *     has read after the last heartbeat (which extends the lease by two thirds of it) when that decode worker fails;
     *     0 = released at once
     */
    public record KvTransferConfig(
            Mode mode,
            double firstByteMs,
            double nicGbytesPerS,
            double fabricGbytesPerS,
            Long bytesPerToken,
            double kvLeaseS) {
        /** Validates the settings. */
        public KvTransferConfig {
            Check.present("mode", mode);
            Check.atLeast("kv_lease_s", kvLeaseS, 0.0);
            Check.atLeast("first_byte_ms", firstByteMs, 0.0);
            Check.atLeast("nic_gbytes_per_s", nicGbytesPerS, 0.0);
            Check.atLeast("fabric_gbytes_per_s", fabricGbytesPerS, 0.0);
            if (bytesPerToken != null) {
                Check.atLeast("bytes_per_token", bytesPerToken, 1);
            }
        }
    }

    /** Which prompt tokens a transfer moves ({@code cluster.disagg.transfer.mode}). */
    public enum Mode implements Named {
        /** Only what the decode worker lacks. */
        DESTINATION_MISSING(
                "destination_missing",
                "move only the prompt tokens the decode worker does not cache (vLLM NIXL: prompt less the local hit)"),
        /** The whole prompt. */
        FULL_PROMPT("full_prompt", "move and charge the whole prompt, whatever the decode worker caches");

        private final String configName;
        private final String description;

        Mode(String configName, String description) {
            this.configName = configName;
            this.description = description;
        }

        /** Looks a name up. */
        @JsonCreator
        public static Mode of(String name) {
            return Named.parse(Mode.class, name);
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
}
