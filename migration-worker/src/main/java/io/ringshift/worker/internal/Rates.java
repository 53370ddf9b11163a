package io.ringshift.worker.internal;

import io.ringshift.ring.ByteUnits;
import java.time.Duration;

/** How statuses and logs write byte rates and durations: binary units ({@link ByteUnits}), like the CLI. */
public final class Rates {
  private Rates() {}

  /** {@code 20971520} as {@code 20.0 MiB/s}; 0 as {@code unlimited}. */
  public static String format(long bytesPerSecond) {
    return bytesPerSecond == 0 ? "unlimited" : ByteUnits.format(bytesPerSecond) + "/s";
  }

  /** A wait as an operator reads it: {@code 8 min 20 s}, {@code 45 s}, {@code 2 h 5 min}, {@code 50 ms}. */
  public static String duration(Duration d) {
    if (d.toMillis() > 0 && d.toMillis() < 1000) {
      return d.toMillis() + " ms";
    }
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
