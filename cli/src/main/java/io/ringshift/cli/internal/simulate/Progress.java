package io.ringshift.cli.internal.simulate;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Progress of a run on stderr: the stage name and the overall percentage. On a terminal one line is redrawn in
 * place (at most ten times a second); otherwise, for logs and CI, a plain line is printed per stage. Stage
 * wall times are recorded for the report either way.
 *
 * <p>Stages carry weights proportional to their expected duration, so the percentage moves evenly.
 */
final class Progress {
  private static final long REDRAW_NANOS = 100_000_000L;

  private final PrintWriter err;
  private final boolean terminal;
  private final boolean quiet;
  private final LongSupplier nanoTime;
  private final double totalWeight;
  private final Map<String, Long> stageMillis = new LinkedHashMap<>();
  private final long start;
  private double doneWeight;
  private String stage;
  private double stageWeight;
  private long stageStart;
  private long lastDraw;
  private int lastWidth;

  Progress(PrintWriter err, boolean terminal, boolean quiet, double totalWeight, LongSupplier nanoTime) {
    this.err = err;
    this.terminal = terminal;
    this.quiet = quiet;
    this.totalWeight = totalWeight;
    this.nanoTime = nanoTime;
    this.start = nanoTime.getAsLong();
  }

  /** A progress reporter that prints nothing (library and test use). */
  static Progress silent() {
    return new Progress(new PrintWriter(PrintWriter.nullWriter()), false, true, 1, System::nanoTime);
  }

  /**
   * True when file descriptor 2 is a terminal. Linux tells through /proc; elsewhere fall back to whether the JVM
   * has a console, which is about stdin and stdout but is the best the JDK offers.
   */
  static boolean stderrIsTerminal() {
    if ("dumb".equals(System.getenv("TERM"))) {
      return false;
    }
    Path fd2 = Path.of("/proc/self/fd/2");
    if (Files.isSymbolicLink(fd2)) {
      try {
        String target = Files.readSymbolicLink(fd2).toString();
        return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
      } catch (java.io.IOException | SecurityException e) {
        return System.console() != null;
      }
    }
    return System.console() != null;
  }

  /** Ends the current stage and starts the next; {@code weight} is its share of the whole run. */
  void stage(String name, double weight) {
    endStage();
    stage = name;
    stageWeight = weight;
    stageStart = nanoTime.getAsLong();
    if (!quiet && !terminal) {
      err.printf(Locale.ROOT, "simulate: [%3d%%] %s%n", percent(0), name);
      err.flush();
    }
    draw(0, null, true);
  }

  /** Progress within the current stage, {@code fraction} in [0, 1], with an optional detail. */
  void update(double fraction, String detail) {
    draw(fraction, detail, false);
  }

  /** Ends the last stage and clears the progress line. */
  void finish() {
    endStage();
    stage = null;
    if (quiet) {
      return;
    }
    String line = String.format(Locale.ROOT, "simulate: [100%%] done in %.1f s", (nanoTime.getAsLong() - start) / 1e9);
    if (terminal) {
      err.print("\r" + pad(line));
      err.println();
    } else {
      err.println(line);
    }
    err.flush();
  }

  /** Wall time per stage, in run order. */
  Map<String, Long> stageMillis() {
    return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(stageMillis));
  }

  long elapsedMillis() {
    return (nanoTime.getAsLong() - start) / 1_000_000;
  }

  private void endStage() {
    if (stage != null) {
      stageMillis.put(stage, (nanoTime.getAsLong() - stageStart) / 1_000_000);
      doneWeight += stageWeight;
    }
  }

  private int percent(double fraction) {
    return (int) Math.min(99, Math.floor(100 * (doneWeight + stageWeight * Math.max(0, Math.min(1, fraction)))
        / totalWeight));
  }

  private void draw(double fraction, String detail, boolean force) {
    if (quiet || !terminal) {
      return;
    }
    long now = nanoTime.getAsLong();
    if (!force && now - lastDraw < REDRAW_NANOS) {
      return;
    }
    lastDraw = now;
    String line = String.format(Locale.ROOT, "simulate: [%3d%%] %s%s", percent(fraction), stage,
        detail == null ? "" : " (" + detail + ")");
    err.print("\r" + pad(line));
    err.flush();
  }

  /** Pads with spaces so that a shorter line fully covers the previous one. */
  private String pad(String line) {
    String padded = line.length() < lastWidth ? line + " ".repeat(lastWidth - line.length()) : line;
    lastWidth = line.length();
    return padded;
  }
}
