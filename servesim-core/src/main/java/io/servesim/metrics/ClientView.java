package io.servesim.metrics;

import io.servesim.config.ClientFrontend;

/**
 * A finished run's completed requests as a streaming HTTP client would time them: each first and last token arrives
 * {@link ClientFrontend#delayMs} after the engine emitted it, for the requests its rank was serving then
 * ({@link StepOccupancy}), and TPOT is derived from those two as a client derives it, (E2E − TTFT) / (outputs − 1).
 * The engine's own latencies are untouched; this is a view beside them ({@code output.client_frontend},
 * {@code servesim validate} for client-timed runs; docs/metrics.md, "The client's view").
 */
public final class ClientView {
    private final RequestLog log;
    private final ClientFrontend frontend;
    private final int[] firstStepRequests;
    private final int[] lastStepRequests;

    private ClientView(RequestLog log, ClientFrontend frontend, int[] firstStepRequests, int[] lastStepRequests) {
        this.log = log;
        this.frontend = frontend;
        this.firstStepRequests = firstStepRequests;
        this.lastStepRequests = lastStepRequests;
    }

    /** The view of every row of {@code log} (one sort of its records per rank). */
    public static ClientView of(RequestLog log, ClientFrontend frontend) {
        int n = log.size();
        int[] first = new int[n];
        int[] last = new int[n];
        StepOccupancy occupancy = StepOccupancy.of(log);
        for (int i = 0; i < n; i++) {
            if (log.status(i).completed()) {
                int worker = log.worker(i);
                int rank = log.rank(i);
                first[i] = occupancy.requestsAt(worker, rank, log.firstTokenNanos(i));
                last[i] = occupancy.requestsAt(worker, rank, log.lastTokenNanos(i));
            }
        }
        return new ClientView(log, frontend, first, last);
    }

    /** The frontend it applies. */
    public ClientFrontend frontend() {
        return frontend;
    }

    /** Whether row {@code i} completed (only completed rows have client latencies). */
    public boolean completed(int i) {
        return log.status(i).completed();
    }

    /** Requests row {@code i}'s rank served when its first token came (0 unless it completed). */
    public int firstTokenStepRequests(int i) {
        return firstStepRequests[i];
    }

    /** Requests row {@code i}'s rank served when its last token came (0 unless it completed). */
    public int lastTokenStepRequests(int i) {
        return lastStepRequests[i];
    }

    /** The delay the client sees on row {@code i}'s first token, ms (completed rows). */
    public double firstDelayMs(int i) {
        return frontend.delayMs(firstStepRequests[i]);
    }

    /** The delay the client sees on row {@code i}'s last token, ms (completed rows). */
    public double lastDelayMs(int i) {
        return frontend.delayMs(lastStepRequests[i]);
    }

    /** Row {@code i}'s TTFT as the client times it, ms (completed rows). */
    public double ttftMs(int i) {
        return (log.firstTokenNanos(i) - log.arrivalNanos(i)) / 1e6 + firstDelayMs(i);
    }

    /** Row {@code i}'s E2E latency as the client times it, ms (completed rows). */
    public double e2eMs(int i) {
        return (log.lastTokenNanos(i) - log.arrivalNanos(i)) / 1e6 + lastDelayMs(i);
    }

    /**
     * Row {@code i}'s TPOT as the client derives it, ms: the engine's ({@link RequestRecord#tpotMs}) plus the change in
     * the frontend's delay from the first to the last token spread over the later tokens; NaN with fewer than 2 outputs.
     */
    public double tpotMs(int i) {
        int outputs = log.outputTokens(i);
        long ps = RequestRecord.tpotPicos(log.firstTokenNanos(i), log.lastTokenNanos(i), outputs);
        if (ps < 0) {
            return Double.NaN;
        }
        return ps * 1e-9 + (lastDelayMs(i) - firstDelayMs(i)) / (outputs - 1);
    }

    /** The client's TTFT, TPOT and E2E statistics over the completed rows (exact percentiles). */
    public Latencies latencies() {
        Samples s = samples(Long.MIN_VALUE, Long.MAX_VALUE);
        return new Latencies(
                frontend,
                Stats.of(s.ttftMs(), s.ttftMs().length),
                Stats.of(s.tpotMs(), s.tpotMs().length),
                Stats.of(s.e2eMs(), s.e2eMs().length),
                this);
    }

    /**
     * The client's latencies of the completed rows that arrived in [{@code fromArrivalNanos}, {@code
     * toArrivalNanos}), in log order.
     */
    public Samples samples(long fromArrivalNanos, long toArrivalNanos) {
        int n = log.size();
        double[] ttft = new double[n];
        double[] tpot = new double[n];
        double[] e2e = new double[n];
        int nc = 0;
        int nt = 0;
        long outputs = 0;
        for (int i = 0; i < n; i++) {
            long arrival = log.arrivalNanos(i);
            if (!completed(i) || arrival < fromArrivalNanos || arrival >= toArrivalNanos) {
                continue;
            }
            ttft[nc] = ttftMs(i);
            e2e[nc] = e2eMs(i);
            nc++;
            outputs += log.outputTokens(i);
            double t = tpotMs(i);
            if (!Double.isNaN(t)) {
                tpot[nt++] = t;
            }
        }
        return new Samples(
                java.util.Arrays.copyOf(ttft, nc),
                java.util.Arrays.copyOf(tpot, nt),
                java.util.Arrays.copyOf(e2e, nc),
                outputs);
    }

    /**
     * Client latencies of a set of completed requests.
     *
     * @param ttftMs each request's TTFT, ms
     * @param tpotMs each TPOT, ms (requests with at least 2 outputs)
     * @param e2eMs each E2E latency, ms
     * @param outputTokens the requests' output tokens
     */
    @SuppressWarnings("ArrayRecordComponent") // samples handed over once, never compared
    public record Samples(double[] ttftMs, double[] tpotMs, double[] e2eMs, long outputTokens) {}

    /**
     * The client's latency statistics of a run (summary.json's {@code client} object).
     *
     * @param frontend the frontend applied
     * @param ttftMs TTFT, ms
     * @param tpotMs TPOT, ms (requests with at least 2 outputs)
     * @param e2eMs E2E latency, ms
     * @param view the per-request view they summarise (requests.csv's client columns and sweeps' goodput read it,
     *     so it is computed once per run)
     */
    public record Latencies(ClientFrontend frontend, Stats ttftMs, Stats tpotMs, Stats e2eMs, ClientView view) {}
}
