package io.servesim.cli.bench;

import java.util.List;
import java.util.Locale;

/** The fixture's target ratios computed from a table: flatness over W, KVCR-on over KVCR-off costs. */
final class FixtureRatios {
    private FixtureRatios() {}

    /** Renders the ratios the issue sets targets for, for the cells present. */
    static String render(List<FixtureCell> cells) {
        StringBuilder sb = new StringBuilder();
        int minW = Integer.MAX_VALUE;
        int maxW = 0;
        for (FixtureCell c : cells) {
            minW = Math.min(minW, c.workers());
            maxW = Math.max(maxW, c.workers());
        }
        if (cells.isEmpty()) {
            return "";
        }
        if (maxW > minW) {
            sb.append(String.format(
                    Locale.ROOT, "flatness: warm us/request at W%d / at W%d (target <= 1.5)%n", maxW, minW));
            for (FixtureCell hi : cells) {
                if (hi.workers() != maxW) {
                    continue;
                }
                FixtureCell lo = find(cells, minW, hi.dp(), hi.arm());
                if (lo != null) {
                    sb.append(String.format(
                            Locale.ROOT,
                            "  dp %d %-12s %.2f%n",
                            hi.dp(),
                            hi.arm(),
                            hi.usPerRequestWarm() / lo.usPerRequestWarm()));
                }
            }
        }
        boolean header = false;
        for (FixtureCell c : cells) {
            if (!c.arm().equals("kvcr-hinted") && !c.arm().equals("kvcr-idle")) {
                continue;
            }
            String base = c.arm().equals("kvcr-hinted") ? "kvcr-off" : "g2-only";
            FixtureCell b = find(cells, c.workers(), c.dp(), base);
            if (b == null) {
                continue;
            }
            if (!header) {
                sb.append("KVCR cost: kvcr-hinted / kvcr-off (target <= 1.15), kvcr-idle / g2-only (target <= 1.05)\n");
                header = true;
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "  W%-5d dp %d %-12s / %-9s %.2f%n",
                    c.workers(),
                    c.dp(),
                    c.arm(),
                    base,
                    c.usPerRequestWarm() / b.usPerRequestWarm()));
        }
        return sb.toString();
    }

    private static FixtureCell find(List<FixtureCell> cells, int workers, int dp, String arm) {
        for (FixtureCell c : cells) {
            if (c.workers() == workers && c.dp() == dp && c.arm().equals(arm)) {
                return c;
            }
        }
        return null;
    }
}
