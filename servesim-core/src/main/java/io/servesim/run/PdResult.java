package io.servesim.run;

import io.servesim.engine.PdTransfers;
import io.servesim.metrics.LatencyDistribution;

/**
 * What a disaggregated run's prefill/decode handoffs did (docs/pd.md).
 *
 * @param transfers the P/D transfer totals
 * @param prefillNanos arrival to the prefill's sampled token, of requests handed to a decode worker
 * @param decodeFirstTokenNanos transfer landing to the first token on the decode worker (its admission and one-token
 *     step), of completed requests with a landed transfer
 * @param nicGbytesPerS each worker's NIC bandwidth (0 = unlimited)
 * @param prefillWorkers workers of the prefill pool
 */
public record PdResult(
        PdTransfers.Totals transfers,
        LatencyDistribution prefillNanos,
        LatencyDistribution decodeFirstTokenNanos,
        double nicGbytesPerS,
        int prefillWorkers) {}
