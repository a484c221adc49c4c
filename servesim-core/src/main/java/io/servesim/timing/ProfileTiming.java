package io.servesim.timing;

import io.servesim.config.ConfigException;
import io.servesim.config.ProfileTimingConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Step time from measured steps (docs/timing.md). Features of a step: prefill tokens, decode requests, and decode
 * context tokens (plus, for the linear model, the prefill attention term Σ n × (c + n / 2) in tokens²).
 *
 * <ul>
 *   <li>{@code linear_fit} (or given {@code coefficients}): {@code c0 + c1·prefill_tokens +
 *       c2·prefill_attention_term + c3·decode_seqs + c4·context_tokens} ms, fitted by least squares.
 *   <li>{@code interpolate}: inverse-distance weighting over the 4 nearest measured steps in feature space
 *       (each feature scaled by its measured range); an exact match returns its measurement.
 * </ul>
 */
public final class ProfileTiming implements TimingModel {
    private final double[] coefficients;
    private final double[][] points;
    private final double[] latencies;
    private final double[] scale;

    private ProfileTiming(double[] coefficients, double[][] points, double[] latencies, double[] scale) {
        this.coefficients = coefficients;
        this.points = points;
        this.latencies = latencies;
        this.scale = scale;
    }

    /** Creates the model from its config. */
    public static ProfileTiming create(ProfileTimingConfig c) {
        return create(c, null);
    }

    /** {@link #create(ProfileTimingConfig)} with a relative {@code path} resolved against {@code baseDir}. */
    public static ProfileTiming create(ProfileTimingConfig c, java.nio.file.Path baseDir) {
        if (c.coefficients() != null) {
            double[] k = new double[5];
            for (int i = 0; i < 5; i++) {
                k[i] = c.coefficients().get(i);
            }
            return new ProfileTiming(k, null, null, null);
        }
        if (c.path() == null) {
            throw new ConfigException("timing.profile", "set path (a CSV of measured steps) or coefficients");
        }
        List<double[]> rows = read(io.servesim.config.SimConfig.resolve(baseDir, c.path()));
        if (c.method() == ProfileTimingConfig.Method.LINEAR_FIT) {
            return new ProfileTiming(fit(rows), null, null, null);
        }
        double[][] pts = new double[rows.size()][3];
        double[] lat = new double[rows.size()];
        double[] max = new double[3];
        for (int i = 0; i < rows.size(); i++) {
            double[] r = rows.get(i);
            pts[i][0] = r[0];
            pts[i][1] = r[1];
            pts[i][2] = r[2];
            lat[i] = r[3];
            for (int d = 0; d < 3; d++) {
                max[d] = Math.max(max[d], r[d]);
            }
        }
        for (int d = 0; d < 3; d++) {
            max[d] = max[d] > 0 ? max[d] : 1;
        }
        return new ProfileTiming(null, pts, lat, max);
    }

    /** Reads {@code prefill_tokens,decode_seqs,context_tokens,latency_ms} rows (header first). */
    static List<double[]> read(Path path) {
        List<double[]> rows = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String header = r.readLine();
            if (header == null || !header.strip().equals("prefill_tokens,decode_seqs,context_tokens,latency_ms")) {
                throw new ConfigException(
                        "timing.profile.path",
                        path + ":1: expected the header prefill_tokens,decode_seqs,context_tokens,latency_ms");
            }
            String line;
            int n = 1;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.split(",", -1);
                if (f.length != 4) {
                    throw new ConfigException("timing.profile.path", path + ":" + n + ": expected 4 fields");
                }
                double[] v = new double[4];
                for (int i = 0; i < 4; i++) {
                    try {
                        v[i] = Double.parseDouble(f[i].strip());
                    } catch (NumberFormatException e) {
                        throw new ConfigException(
                                "timing.profile.path", path + ":" + n + ": field " + (i + 1) + " is not a number");
                    }
                    if (!(v[i] >= 0) || Double.isInfinite(v[i])) {
                        throw new ConfigException(
                                "timing.profile.path", path + ":" + n + ": field " + (i + 1) + " must be >= 0");
                    }
                }
                rows.add(v);
            }
        } catch (IOException e) {
            throw new ConfigException("timing.profile.path", "cannot read " + path + ": " + e.getMessage());
        }
        if (rows.isEmpty()) {
            throw new ConfigException("timing.profile.path", path + ": no measured steps");
        }
        return rows;
    }

    /**
     * Least-squares fit of the 5 coefficients from measured rows. A CSV row gives only totals, so the attention
     * term of a prefill is approximated as prefill_tokens² / 2 (one chunk, no cached context).
     */
    static double[] fit(List<double[]> rows) {
        double[][] ata = new double[5][5];
        double[] atb = new double[5];
        for (double[] r : rows) {
            double[] x = {1, r[0], r[0] * r[0] / 2, r[1], r[2]};
            for (int i = 0; i < 5; i++) {
                for (int j = 0; j < 5; j++) {
                    ata[i][j] += x[i] * x[j];
                }
                atb[i] += x[i] * r[3];
            }
        }
        for (int i = 0; i < 5; i++) {
            ata[i][i] += 1e-9 * (1 + ata[i][i]); // ridge: a feature the profile never varies gets ~0
        }
        return solve(ata, atb);
    }

    private static double[] solve(double[][] a, double[] b) {
        int n = b.length;
        for (int col = 0; col < n; col++) {
            int pivot = col;
            for (int r = col + 1; r < n; r++) {
                if (Math.abs(a[r][col]) > Math.abs(a[pivot][col])) {
                    pivot = r;
                }
            }
            double[] t = a[col];
            a[col] = a[pivot];
            a[pivot] = t;
            double tb = b[col];
            b[col] = b[pivot];
            b[pivot] = tb;
            for (int r = col + 1; r < n; r++) {
                double f = a[r][col] / a[col][col];
                for (int k = col; k < n; k++) {
                    a[r][k] -= f * a[col][k];
                }
                b[r] -= f * b[col];
            }
        }
        double[] x = new double[n];
        for (int r = n - 1; r >= 0; r--) {
            double s = b[r];
            for (int k = r + 1; k < n; k++) {
                s -= a[r][k] * x[k];
            }
            x[r] = s / a[r][r];
        }
        return x;
    }

    /** The linear model's coefficients (null when interpolating). */
    public double[] coefficients() {
        return coefficients == null ? null : coefficients.clone();
    }

    @Override
    public long stepNanos(StepBatch batch) {
        double prefill = batch.prefillTokens();
        double decodes = batch.decodeRequests();
        double context = batch.decodeContextTokens();
        double ms;
        if (coefficients != null) {
            double attention = 0;
            for (int i = 0; i < batch.size(); i++) {
                if (!batch.isDecode(i)) {
                    double t = batch.newTokens(i);
                    attention += t * (batch.contextTokens(i) + t / 2);
                }
            }
            ms = coefficients[0]
                    + coefficients[1] * prefill
                    + coefficients[2] * attention
                    + coefficients[3] * decodes
                    + coefficients[4] * context;
        } else {
            ms = interpolate(prefill, decodes, context);
        }
        return Math.max(1, Math.round(ms * 1e6));
    }

    private double interpolate(double prefill, double decodes, double context) {
        int k = Math.min(4, points.length);
        int[] best = new int[k];
        double[] bestD = new double[k];
        java.util.Arrays.fill(bestD, Double.POSITIVE_INFINITY);
        for (int i = 0; i < points.length; i++) {
            double dx = (points[i][0] - prefill) / scale[0];
            double dy = (points[i][1] - decodes) / scale[1];
            double dz = (points[i][2] - context) / scale[2];
            double d = dx * dx + dy * dy + dz * dz;
            if (d == 0) {
                return latencies[i];
            }
            for (int j = 0; j < k; j++) {
                if (d < bestD[j]) {
                    for (int m = k - 1; m > j; m--) {
                        bestD[m] = bestD[m - 1];
                        best[m] = best[m - 1];
                    }
                    bestD[j] = d;
                    best[j] = i;
                    break;
                }
            }
        }
        double wsum = 0;
        double vsum = 0;
        for (int j = 0; j < k; j++) {
            double w = 1 / bestD[j];
            wsum += w;
            vsum += w * latencies[best[j]];
        }
        return vsum / wsum;
    }
}
