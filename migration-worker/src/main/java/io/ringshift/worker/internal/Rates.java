package io.ringshift.worker.internal;

import java.time.Duration;
import java.util.Locale;

/** How statuses and logs write byte rates and durations: binary units, one decimal, like the CLI. */
public final class Rates {
  private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

  private Rates() {}

  /** {@code 20971520} as {@code 20.0 MiB/s}; 0 as {@code unlimited}. */
  public static String format(long bytesPerSecond) {
    return bytesPerSecond == 0 ? "unlimited" : bytes(bytesPerSecond) + "/s";
  }

  /** {@code 1536} as {@code 1.5 KiB}. */
  public static String bytes(long bytes) {
    double value = bytes;
    int unit = 0;
    while (value >= 1024 && unit < UNITS.length - 1) {
      value /= 1024;
      unit++;
    }
    return unit == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", value, UNITS[unit]);
  }

  /** A wait as an operator reads it: {@code 8 min 20 s}, {@code 45 s}, {@code 2 h 5 min}. */
  public static String duration(Duration d) {
    long seconds = Math.max(0, (d.toMillis() + 999) / 1000);
    long h = seconds / 3600;
    long m = seconds % 3600 / 60;
    long s = seconds % 60;
    if (h > 0) {
      return m > 0 ? h + " h " + m + " min" : h + " h";
    }
    if (m > 0) {
      return s > 0 ? m + " min " + s + " s" : m + " min";
    }
    return s + " s";
  }
}
