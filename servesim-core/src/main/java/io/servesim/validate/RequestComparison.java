package io.servesim.validate;

import io.servesim.config.ClientFrontend;
import io.servesim.metrics.ClientView;
import io.servesim.metrics.RequestLog;
import io.servesim.metrics.RequestRecord;
import io.servesim.run.RunResult;
import java.util.Locale;

/**
 * A run folder's requests side by side, measured and simulated, one CSV row per workload row ({@code requests.csv}
 * beside {@code validation.json}): where in a run and at which load an error arises, request by request. The
 * simulated TTFT and E2E carry the run's client frontend ({@link ClientFrontend}, with the requests each token's rank
 * served then), and the simulated TPOT is derived from them as a client derives it; a request the measurement marks
 * failed, or the replay did not complete, has empty cells on that side. Every row names how the replay ended it
 * ({@code completed}, {@code rejected}, {@code incomplete}; {@code missing} for a row the replay never created).
 */
public final class RequestComparison {
    /** The CSV header. */
    public static final String HEADER = "row,arrival_s,measured_ttft_ms,measured_tpot_ms,measured_e2e_ms,"
            + "simulated_ttft_ms,simulated_tpot_ms,simulated_e2e_ms,requests_in_first_token_step,"
            + "requests_in_last_token_step,simulated_status";

    private RequestComparison() {}

    /**
     * The CSV for {@code run} replayed as {@code sim}: workload row i is the replay's request i (a layout workload is
     * replayed in file order).
     */
    public static String csv(RunFolder run, RunResult sim, ClientFrontend client) {
        double[] arrival = LayoutRows.arrivals(run.dir().resolve(RunFolder.WORKLOAD));
        LayoutRows measured = LayoutRows.read(run.dir().resolve(RunFolder.MEASURED), arrival.length);
        RequestLog log = sim.log();
        RequestRecord[] byRow = new RequestRecord[arrival.length];
        for (int i = 0; i < log.size(); i++) {
            RequestRecord r = log.get(i);
            if (r.requestId() >= 0 && r.requestId() < byRow.length) {
                byRow[r.requestId()] = r;
            }
        }
        ClientView view = ClientView.of(log, client);
        int[] logIndex = new int[arrival.length];
        for (int i = 0; i < log.size(); i++) {
            int id = log.requestId(i);
            if (id >= 0 && id < logIndex.length) {
                logIndex[id] = i;
            }
        }
        StringBuilder sb = new StringBuilder(HEADER).append('\n');
        for (int row = 0; row < arrival.length; row++) {
            sb.append(row).append(',').append(number(arrival[row], 6));
            sb.append(',').append(number(measured.ttftMs(row), 4));
            sb.append(',').append(number(measured.tpotMs(row), 4));
            sb.append(',').append(number(measured.e2eMs(row), 4));
            RequestRecord r = byRow[row];
            if (r == null || !r.completed()) {
                sb.append(",,,,,,")
                        .append(r == null ? "missing" : r.status().status())
                        .append('\n');
                continue;
            }
            int i = logIndex[row];
            sb.append(',').append(number(view.ttftMs(i), 4));
            sb.append(',').append(number(view.tpotMs(i), 4));
            sb.append(',').append(number(view.e2eMs(i), 4));
            sb.append(',')
                    .append(view.firstTokenStepRequests(i))
                    .append(',')
                    .append(view.lastTokenStepRequests(i))
                    .append(',')
                    .append(r.status().status())
                    .append('\n');
        }
        return sb.toString();
    }

    private static String number(double v, int digits) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%." + digits + "f", v);
    }
}
