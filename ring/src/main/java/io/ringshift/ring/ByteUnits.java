package io.ringshift.ring;

import java.util.Locale;

/**
 * Byte counts in binary units for people: {@code 1536} -> {@code 1.50 KiB}, three significant digits, root locale.
 * The one byte formatter of every ringshift module (reports, status lines, task reasons), so sizes read alike.
 */
public final class ByteUnits {
  private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

  private ByteUnits() {}

  public static String format(double value) {
    int unit = 0;
    double v = value;
    while (Math.abs(v) >= 1024 && unit < UNITS.length - 1) {
      v /= 1024;
      unit++;
    }
    if (unit == 0) {
      return String.format(Locale.ROOT, "%.0f B", v);
    }
    return String.format(Locale.ROOT, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, UNITS[unit]);
  }
}
