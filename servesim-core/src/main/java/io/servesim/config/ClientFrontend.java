package io.servesim.config;

/**
 * What a client-side (HTTP) measurement adds to each streamed token beyond the engine ({@code output.client_frontend};
 * {@code servesim validate} for client-timed runs): a constant (the request's HTTP, tokenisation and streaming path)
 * plus a time per request that the token's rank served in the same engine step. vLLM's API server handles a step's
 * outputs in one pass before any stream writes its chunk ({@code AsyncLLM.output_handler} in
 * {@code vllm/v1/engine/async_llm.py}: {@code OutputProcessor.process_outputs} over up to
 * {@code VLLM_V1_OUTPUT_PROC_CHUNK_SIZE} = 128 outputs, detokenising each, without yielding the event loop), and the
 * streams then write one after another on that loop, so each token waits for work that grows with the step's requests.
 * Never part of a step's time: the engine's next step does not wait for it, so it moves TTFT and E2E but not the load
 * the engine sees.
 *
 * @param overheadMs the constant part, ms
 * @param perRequestUs the part per request in the token's step, µs
 */
public record ClientFrontend(double overheadMs, double perRequestUs) {
    /** No frontend: engine-side measurements. */
    public static final ClientFrontend NONE = new ClientFrontend(0, 0);

    /** Validates the two terms. */
    public ClientFrontend {
        Check.atLeast("overhead_ms", overheadMs, 0.0);
        Check.atLeast("per_request_us", perRequestUs, 0.0);
    }

    /** The constant part alone. */
    public static ClientFrontend constant(double overheadMs) {
        return new ClientFrontend(overheadMs, 0);
    }

    /** The time added to a token delivered by a step that gave outputs to {@code requestsInStep} requests, ms. */
    public double delayMs(int requestsInStep) {
        return overheadMs + perRequestUs * requestsInStep / 1000.0;
    }
}
