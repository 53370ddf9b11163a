package io.ringshift.simulator.internal;

import io.ringshift.ring.ByteUnits;
import java.util.Locale;

/** Number formatting shared by the text and HTML reports (binary byte units, root locale). */
public final class Units {

  private Units() {}

  /** A fraction as a percentage with enough digits for small values: 0.00813 -> {@code 0.813%}. */
  public static String percent(double fraction) {
    double v = 100 * fraction;
    if (v == 0) {
      return "0%";
    }
    if (Math.abs(v) >= 10) {
      return String.format(Locale.ROOT, "%.1f%%", v);
    }
    if (Math.abs(v) >= 1) {
      return String.format(Locale.ROOT, "%.2f%%", v);
    }
    return String.format(Locale.ROOT, "%.3f%%", v);
  }

  /** An axis tick in percent without trailing zeros: 0.005 -> {@code 0.5%}, 0.1 -> {@code 10%}. */
  public static String percentTick(double fraction) {
    java.math.BigDecimal v = java.math.BigDecimal.valueOf(100 * fraction).round(new java.math.MathContext(3));
    return v.stripTrailingZeros().toPlainString() + "%";
  }

  /** A byte-size axis tick: powers of 32 print as whole binary units (1 KiB, 32 KiB, 1 MiB). */
  public static String bytesTick(double value) {
    return ByteUnits.format(value).replace(".00 ", " ").replace(".0 ", " ");
  }

  /** A ratio with two decimals, or a dash when undefined. */
  public static String ratio(Double value) {
    return value == null ? "-" : String.format(Locale.ROOT, "%.2f", value);
  }

  public static String count(long value) {
    return String.format(Locale.ROOT, "%,d", value);
  }

  /** Requests per second, compact: 16,528 -> {@code 16.5k}. */
  public static String rate(double value) {
    if (value >= 1e6) {
      return String.format(Locale.ROOT, "%.2fM", value / 1e6);
    }
    if (value >= 1e3) {
      return String.format(Locale.ROOT, "%.1fk", value / 1e3);
    }
    return String.format(Locale.ROOT, "%.0f", value);
  }

  public static String fixed(double value, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f", value);
  }
}
