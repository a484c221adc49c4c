package io.servesim.metrics;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** Fixed, locale-free number formatting for reports. */
public final class Numbers {
    private Numbers() {}

    /** Nanoseconds as exact milliseconds with 6 decimals ("12.000500"); -1 (never) gives "". */
    public static String nanosAsMillis(long nanos) {
        if (nanos < 0) {
            return "";
        }
        long ms = nanos / 1_000_000;
        long frac = nanos % 1_000_000;
        StringBuilder sb = new StringBuilder(24).append(ms).append('.');
        String f = Long.toString(frac);
        for (int i = f.length(); i < 6; i++) {
            sb.append('0');
        }
        return sb.append(f).toString();
    }

    /** A double rounded half-even to {@code scale} decimals, as a plain decimal (no exponent). */
    public static BigDecimal fixed(double value, int scale) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("non-finite number in report: " + value);
        }
        BigDecimal d = new BigDecimal(value).setScale(scale, RoundingMode.HALF_EVEN);
        return d.signum() == 0 ? BigDecimal.ZERO.setScale(scale) : d;
    }

    /** {@link #fixed} as a string. */
    public static String fixedString(double value, int scale) {
        return fixed(value, scale).toPlainString();
    }
}
