package io.servesim.cli;

import io.servesim.config.SimConfig;
import io.servesim.metrics.Stats;
import io.servesim.report.Summary;
import java.util.Locale;

/** Renders the short human summary a replay prints: an aligned table, numbers in Locale.ROOT. */
final class ConsoleTable {
    private ConsoleTable() {}

    static String render(Summary s, SimConfig c) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "servesim replay: %d worker(s) x %d rank(s), router %s, timing %s, workload %s%n",
                c.cluster().workers(),
                c.cluster().attentionDp(),
                c.cluster().disaggregated()
                        ? "prefill "
                                + c.cluster().pools().get(0).router().policy().configName() + " / decode "
                                + c.cluster().pools().get(1).router().policy().configName()
                        : c.cluster().router().policy().configName(),
                s.pools().isEmpty()
                        ? timing(s.deployment(), c.timing())
                        : s.pools().size() + " pools (below)",
                c.workload().type().configName()));
        sb.append(String.format(
                Locale.ROOT,
                "requests %d  completed %d  rejected %d%s%s%s  preemptions %d  virtual duration %.3f s%n",
                s.requests(),
                s.completed(),
                s.rejected(),
                s.incomplete() > 0 ? "  incomplete " + s.incomplete() : "",
                s.abandoned() > 0 ? "  abandoned " + s.abandoned() : "",
                s.timedOut() != null && s.timedOut() > 0 ? "  timed out " + s.timedOut() : "",
                s.preemptions(),
                s.durationMs() / 1000));
        if (s.workersDrained() + s.workersFailed() > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "fleet: workers drained %d  failed %d  request restarts %d%n",
                    s.workersDrained(),
                    s.workersFailed(),
                    s.restarts()));
        }
        if (s.kvcr().staged() + s.kvcr().rejectedDrainingSource() + s.kvcr().rejectedFailedSource() > 0) {
            sb.append(String.format(
                    Locale.ROOT,
                    "kvcr: pulls staged %d  completed %d  aborted %d  source-only %d  remote reuse %.1f%%  pull p99 %.3f ms%n",
                    s.kvcr().staged(),
                    s.kvcr().completed(),
                    s.kvcr().aborted(),
                    s.kvcr().sourceOnly(),
                    100 * s.kvcr().remoteFirstAdmissionReuseRatio(),
                    s.kvcr().pullMs().p99()));
        }
        if (s.pd() != null) {
            Summary.Pd pd = s.pd();
            sb.append(String.format(
                    Locale.ROOT,
                    "p/d: handoffs %d  local prefills %d  transfers %d (%.2f GB, mean %.3f ms, p99 %.3f ms, peak %d"
                            + " moving)  re-prefills %d  prefill mean %.3f ms  decode first token mean %.3f ms%n",
                    pd.handoffs(),
                    pd.localPrefills(),
                    pd.transfers(),
                    pd.bytes() / 1e9,
                    pd.transferMs().mean(),
                    pd.transferMs().p99(),
                    pd.movingPeak(),
                    pd.reprefills(),
                    pd.prefillMs().mean(),
                    pd.decodeFirstTokenMs().mean()));
        }
        sb.append(String.format(
                Locale.ROOT,
                "throughput %.3f req/s  %.1f output tok/s  prefix reuse %.1f%% (first admission %.1f%%)%n",
                s.requestThroughputRps(),
                s.outputThroughputTokS(),
                100 * s.prefixReuseRatio(),
                100 * s.firstAdmissionPrefixReuseRatio()));
        String nameFormat = s.client() != null ? "%-14s" : "%-8s"; // wide enough for the client rows' names
        sb.append(String.format(
                Locale.ROOT, nameFormat + " %12s %12s %12s %12s %12s%n", "metric", "mean", "p50", "p90", "p99", "max"));
        row(sb, nameFormat, "ttft_ms", s.ttftMs());
        row(sb, nameFormat, "tpot_ms", s.tpotMs());
        row(sb, nameFormat, "itl_ms", s.itlMs());
        row(sb, nameFormat, "e2e_ms", s.e2eMs());
        if (s.client() != null) {
            // the client's view (output.client_frontend): the engine's tokens plus the declared frontend
            row(sb, nameFormat, "client_ttft_ms", s.client().ttftMs());
            row(sb, nameFormat, "client_tpot_ms", s.client().tpotMs());
            row(sb, nameFormat, "client_e2e_ms", s.client().e2eMs());
        }
        for (int i = 0; i < s.pools().size() && s.pd() != null; i++) {
            Summary.Pool p =
                    s.pools().get(i); // disaggregated: requests end on the decode pool, prefills run on the other
            sb.append(String.format(
                    Locale.ROOT,
                    "pool %s: %d worker(s) x %d rank(s) from %d, timing %s, requests routed %d%n",
                    p.name(),
                    p.workers(),
                    c.cluster().attentionDpOfPool(i),
                    p.firstWorker(),
                    timing(p.deployment(), c.cluster().pools().get(i).timing()),
                    p.requestsRouted()));
        }
        for (int i = 0; i < s.pools().size() && s.pd() == null; i++) {
            Summary.Pool p = s.pools().get(i);
            sb.append(String.format(
                    Locale.ROOT,
                    "pool %s: %d worker(s) from %d, timing %s, completed %d, %.1f output tok/s, mean ttft %.3f ms"
                            + "  tpot %.3f ms  e2e %.3f ms%n",
                    p.name(),
                    p.workers(),
                    p.firstWorker(),
                    timing(p.deployment(), c.cluster().pools().get(i).timing()),
                    p.completed(),
                    p.outputThroughputTokS(),
                    p.ttftMs().mean(),
                    p.tpotMs().mean(),
                    p.e2eMs().mean()));
        }
        return sb.toString();
    }

    private static String timing(io.servesim.timing.Deployment d, io.servesim.config.TimingConfig t) {
        if (d.model() == null || d.gpu() == null) {
            return d.timingType().configName();
        }
        return d.timingType().configName() + " (" + d.model().name() + " on "
                + d.gpu().name() + ", TP" + t.tensorParallel() + ", " + d.numGpuBlocks() + " KV blocks/rank)";
    }

    private static void row(StringBuilder sb, String nameFormat, String name, Stats st) {
        sb.append(String.format(
                Locale.ROOT,
                nameFormat + " %12.3f %12.3f %12.3f %12.3f %12.3f%n",
                name,
                st.mean(),
                st.p50(),
                st.p90(),
                st.p99(),
                st.max()));
    }
}
