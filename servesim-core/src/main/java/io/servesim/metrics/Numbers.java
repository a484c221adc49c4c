package io.servesim.metrics;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** Fixed, locale-free number formatting for reports. */
public final class Numbers {
    private Numbers() {}

    /** Nanoseconds as exact milliseconds with 6 decimals ("12.000500"); -1 (never) gives "". */
    public static String nanosAsMillis(long nanos) {
        return unitsAsMillis(nanos, 1_000_000L, 6);
    }

    /** Picoseconds as exact milliseconds with 9 decimals ("12.000500001"); negative (never) gives "". */
    public static String picosAsMillis(long picos) {
        return unitsAsMillis(picos, 1_000_000_000L, 9);
    }

    /** Parses a millisecond value written by {@link #nanosAsMillis} back to exact nanoseconds ("" gives -1). */
    public static long millisAsNanos(String ms) {
        if (ms.isEmpty()) {
            return -1;
        }
        return new BigDecimal(ms)
                .movePointRight(6)
                .setScale(0, RoundingMode.HALF_EVEN)
                .longValueExact();
    }

    private static String unitsAsMillis(long value, long perMilli, int decimals) {
        if (value < 0) {
            return "";
        }
        long ms = value / perMilli;
        long frac = value % perMilli;
        StringBuilder sb = new StringBuilder(24).append(ms).append('.');
        String f = Long.toString(frac);
        for (int i = f.length(); i < decimals; i++) {
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
