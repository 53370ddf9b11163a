package io.ringshift.ring;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte counts in binary units for people: {@code 1536} -> {@code 1.50 KiB}, three significant digits, root locale.
 * The one byte formatter of every ringshift module (reports, status lines, task reasons), so sizes read alike.
 */
public final class ByteUnits {
  private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  private static final Pattern SIZE =
      Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(|B|[KMGTP]|[KMGTP]i?B)", Pattern.CASE_INSENSITIVE);

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

  /**
   * A byte count with an optional binary unit: {@code 0}, {@code 1073741824}, {@code 500GiB}, {@code 24TiB},
   * {@code 1.5 TiB}. Units are binary (KiB = 1024 B); {@code K}, {@code M}, {@code G}, {@code T}, {@code P} mean
   * the same, so that {@code 24T} is not silently 10% smaller than the {@code 24 TiB} it stands for.
   *
   * @throws IllegalArgumentException naming the value and the form a size takes
   */
  public static long parse(String value) {
    Matcher m = SIZE.matcher(value.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + value + "' is not a byte size; write for example 0, 1073741824, "
          + "500GiB or 24TiB");
    }
    String unit = m.group(2).toUpperCase(Locale.ROOT);
    int power = unit.isEmpty() || unit.equals("B") ? 0 : "KMGTP".indexOf(unit.charAt(0)) + 1;
    BigDecimal bytes = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(1024).pow(power));
    if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("'" + value + "' is more than " + Long.MAX_VALUE + " bytes");
    }
    return bytes.setScale(0, RoundingMode.HALF_UP).longValueExact();
  }
}
