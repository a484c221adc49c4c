package io.servesim.cli;

import io.servesim.config.ConfigException;
import io.servesim.config.ConfigLoader;
import io.servesim.config.SimConfig;
import io.servesim.config.TimingType;
import io.servesim.timing.Deployment;
import io.servesim.timing.StepBatch;
import io.servesim.timing.TimingModel;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code servesim step CONFIG}: prices engine steps of the config's deployment the way a replay does, split by term,
 * without simulating anything: what a decode step of a given batch costs and why.
 */
@Command(
        name = "step",
        mixinStandardHelpOptions = true,
        description = "Price engine steps of the config's deployment by term, without simulating: decode steps of the"
                + " given batch sizes (each sequence holding --context tokens) and optionally one prefill chunk. Prints"
                + " the GPU part's terms, the CPU part, and the step period under the engine loop (synchronous: GPU +"
                + " CPU; async or overlapped: the larger), which is a decode's TPOT at that batch.")
public final class StepCommand implements Callable<Integer> {
    @CommandLine.Mixin
    ConfigArgs args = new ConfigArgs();

    @Option(
            names = "--batch",
            split = ",",
            paramLabel = "N",
            defaultValue = "1,8,32,128",
            description = "Decode batch sizes, comma-separated (default: ${DEFAULT-VALUE}).")
    List<Integer> batches;

    @Option(
            names = "--context",
            paramLabel = "TOKENS",
            defaultValue = "1024",
            description = "Tokens each decoding sequence already holds (default: ${DEFAULT-VALUE}).")
    int contextTokens;

    @Option(
            names = "--prefill",
            paramLabel = "TOKENS",
            defaultValue = "0",
            description = "Also price one prefill chunk of this many prompt tokens (no cached prefix), alone.")
    int prefillTokens;

    @Option(
            names = "--pool",
            paramLabel = "I",
            description = "With cluster.pools: the pool whose deployment to price (0-based; default 0).")
    Integer pool;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private String poolLabel = "";

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        SimConfig cfg;
        Deployment d;
        TimingModel timing;
        try {
            ConfigLoader.Loaded loaded = ConfigLoader.loadWithWarnings(args.config, args.overrides);
            Main.warn(err, loaded.warnings());
            cfg = loaded.config();
            int pools = cfg.cluster().pools().size();
            if (pool != null && (pool < 0 || pool >= Math.max(1, pools))) {
                err.println("error: --pool must be between 0 and " + (Math.max(1, pools) - 1) + ", got " + pool
                        + (pools == 0 ? " (the config has no cluster.pools)" : ""));
                return Main.USAGE;
            }
            if (pools > 0) {
                int p = pool == null ? 0 : pool;
                io.servesim.config.PoolConfig pc = cfg.cluster().pools().get(p);
                poolLabel = String.format(
                        Locale.ROOT,
                        "pool %d of %d, '%s'%s (--pool picks another): ",
                        p,
                        pools,
                        pc.name(),
                        pc.role() != null ? ", " + pc.role().configName() : "");
                try {
                    cfg = cfg.forPool(p);
                } catch (ConfigException e) {
                    throw e.under("cluster.pools[" + p + "]");
                }
            }
            d = Deployment.resolve(cfg);
            timing = d.timingModel(
                    cfg.timing(), cfg.engine().kind(), cfg.cluster().attentionDp(), cfg.baseDir());
        } catch (ConfigException e) {
            err.println("config error: " + e.getMessage());
            return Main.USAGE;
        }
        String bad = check(d);
        if (bad != null) {
            err.println("error: " + bad);
            return Main.USAGE;
        }
        boolean overlapped = cfg.engine().scheduler().asyncScheduling();
        out.print(header(cfg, d, overlapped));
        // what a rank's scheduler gives the timing model: its usable blocks (vLLM keeps one as the null block)
        long kvTokens = (long) (d.numGpuBlocks() - 1) * cfg.engine().kvCache().blockSize();
        List<String> names = null;
        List<String[]> rows = new ArrayList<>();
        StepBatch batch = new StepBatch();
        for (int n : batches) {
            batch.reset(kvTokens);
            for (int i = 0; i < n; i++) {
                batch.addDecode(contextTokens);
            }
            String note = (long) n * (contextTokens + 1) > kvTokens ? "over the KV pool" : "";
            if (n > d.maxNumSeqs()) {
                note = (note.isEmpty() ? "" : note + "; ") + "over max_num_seqs " + d.maxNumSeqs();
            }
            names = addRow(rows, "decode " + n, n, timing, batch, overlapped, note);
        }
        if (prefillTokens > 0) {
            batch.reset(kvTokens);
            batch.add(prefillTokens, 0, false);
            String note = prefillTokens > d.maxNumBatchedTokens()
                    ? "over max_num_batched_tokens " + d.maxNumBatchedTokens() + " (vLLM chunks it)"
                    : "";
            names = addRow(rows, "prefill " + prefillTokens, prefillTokens, timing, batch, overlapped, note);
        }
        List<String> columns = new ArrayList<>(List.of("step"));
        for (String name : names) {
            columns.add(name + "_ms");
        }
        columns.addAll(List.of("gpu_ms", "cpu_ms", "period_ms", "tokens/s", ""));
        out.print(table(columns, rows));
        out.flush();
        return Main.OK;
    }

    /** Why the options do not describe steps this deployment can run, or null. */
    private String check(Deployment d) {
        if (batches.isEmpty() || batches.stream().anyMatch(n -> n < 1 || n > 1 << 20)) {
            return "--batch sizes must be between 1 and 1048576, got " + batches;
        }
        if (contextTokens < 0 || contextTokens + 1 > d.maxModelLen()) {
            return "--context must be between 0 and max_model_len - 1 = " + (d.maxModelLen() - 1) + ", got "
                    + contextTokens;
        }
        if (prefillTokens < 0 || prefillTokens > d.maxModelLen()) {
            return "--prefill must be between 0 and max_model_len = " + d.maxModelLen() + ", got " + prefillTokens;
        }
        return null;
    }

    /** Prices one step and appends its row; returns the GPU terms' names. */
    private static List<String> addRow(
            List<String[]> rows,
            String label,
            int newTokens,
            TimingModel timing,
            StepBatch batch,
            boolean overlapped,
            String note) {
        List<TimingModel.StepTerm> terms = timing.stepTerms(batch);
        long gpu = timing.stepNanos(batch);
        long cpu = timing.cpuNanos(batch);
        long period = overlapped ? Math.max(gpu, cpu) : gpu + cpu;
        List<String> row = new ArrayList<>();
        row.add(label);
        List<String> names = new ArrayList<>();
        if (terms.size() > 1) { // one term is the GPU part itself
            for (TimingModel.StepTerm t : terms) {
                names.add(t.name());
                row.add(ms(t.nanos()));
            }
        }
        row.add(ms((double) gpu));
        row.add(ms((double) cpu));
        row.add(ms((double) period));
        row.add(String.format(Locale.ROOT, "%.0f", newTokens / (period / 1e9)));
        row.add(note);
        rows.add(row.toArray(String[]::new));
        return names;
    }

    private static String ms(double nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e6);
    }

    private String header(SimConfig c, Deployment d, boolean overlapped) {
        StringBuilder sb = new StringBuilder("servesim step: ").append(poolLabel);
        var t = c.timing();
        if (d.timingType() == TimingType.ROOFLINE) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%s on %d x %s (TP %d%s), weights %s, ",
                    d.model().name(),
                    t.tensorParallel() * c.cluster().attentionDp(),
                    d.gpu().name(),
                    t.tensorParallel(),
                    c.cluster().attentionDp() > 1
                            ? ", attention DP " + c.cluster().attentionDp()
                            : "",
                    d.model().weightDtype(t.weightDtype()).configName()));
        } else {
            sb.append(d.timingType().configName()).append(" timing, ");
        }
        sb.append(String.format(
                Locale.ROOT,
                "%s engine%s, %s loop%n",
                c.engine().kind().configName(),
                t.version() != null ? " (vLLM " + t.version() + ")" : "",
                overlapped ? "async (CPU overlapped)" : "synchronous (CPU then GPU)"));
        sb.append(String.format(
                Locale.ROOT,
                "KV pool %d blocks x %d tokens (%s), max_num_seqs %d, max_num_batched_tokens %d, max_model_len %d;"
                        + " decodes hold %d tokens each%n",
                d.numGpuBlocks(),
                c.engine().kvCache().blockSize(),
                d.blocksSource(),
                d.maxNumSeqs(),
                d.maxNumBatchedTokens(),
                d.maxModelLen(),
                contextTokens));
        return sb.toString();
    }

    /** Right-aligned columns (the first and last left-aligned), two spaces apart. */
    static String table(List<String> columns, List<String[]> rows) {
        int[] width = new int[columns.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = columns.get(i).length();
            for (String[] r : rows) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        List<String[]> all = new ArrayList<>();
        all.add(columns.toArray(String[]::new));
        all.addAll(rows);
        for (String[] r : all) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                String cell = r[i];
                boolean left = i == 0 || i == r.length - 1;
                String pad = " ".repeat(width[i] - cell.length());
                line.append(i == 0 ? "" : "  ").append(left ? cell + pad : pad + cell);
            }
            sb.append(line.toString().stripTrailing()).append(System.lineSeparator());
        }
        return sb.toString();
    }
}
