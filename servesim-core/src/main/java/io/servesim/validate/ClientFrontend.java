package io.servesim.validate;

/**
 * What a client-side (HTTP) measurement adds to each streamed token beyond the engine: a constant (the request's HTTP,
 * tokenisation and streaming path) plus a time per request that received an output in the same engine step. vLLM's
 * API server handles a step's outputs in one pass before any stream writes its chunk ({@code AsyncLLM.output_handler}
 * in {@code vllm/v1/engine/async_llm.py}: {@code OutputProcessor.process_outputs} over up to
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
        if (!(overheadMs >= 0) || !Double.isFinite(overheadMs)) {
            throw new IllegalArgumentException("client overhead must be a finite number >= 0 ms, got " + overheadMs);
        }
        if (!(perRequestUs >= 0) || !Double.isFinite(perRequestUs)) {
            throw new IllegalArgumentException(
                    "client time per request in a step must be a finite number >= 0 us, got " + perRequestUs);
        }
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
