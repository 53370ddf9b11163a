package io.ringshift.simulator;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import io.ringshift.simulator.internal.SimulationRun;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Progress of a run on stderr: the stage name and the overall percentage. On a terminal one line is redrawn in
 * place (at most ten times a second); otherwise, for logs and CI, a plain line is printed per stage. Stage
 * wall times are recorded for the report either way.
 *
 * <p>Stages carry weights proportional to their expected duration, so the percentage moves evenly. The caller
 * creates one per run; {@link Simulation#run} drives it through {@link #stage}, {@link #update} and
 * {@link #finish}. Not thread-safe: the run calls it from one thread.
 */
public final class SimulationProgress {
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

  /**
   * Progress of one {@link Simulation#run} on {@code err}.
   *
   * @param terminal redraw one line in place (see {@link #stderrIsTerminal()}) rather than print a line a stage
   * @param quiet print nothing; stage times are still recorded
   */
  public SimulationProgress(PrintWriter err, boolean terminal, boolean quiet) {
    this(err, terminal, quiet, SimulationRun.TOTAL_WEIGHT, System::nanoTime);
  }

  SimulationProgress(PrintWriter err, boolean terminal, boolean quiet, double totalWeight, LongSupplier nanoTime) {
    this.err = err;
    this.terminal = terminal;
    this.quiet = quiet;
    this.totalWeight = totalWeight;
    this.nanoTime = nanoTime;
    this.start = nanoTime.getAsLong();
  }

  /** A progress reporter that prints nothing, for runs from code. */
  public static SimulationProgress silent() {
    return new SimulationProgress(new PrintWriter(PrintWriter.nullWriter()), false, true, 1, System::nanoTime);
  }

  /**
   * True when file descriptor 2 is a terminal. Linux tells through /proc; elsewhere fall back to whether the JVM
   * has a console, which is about stdin and stdout but is the best the JDK offers.
   */
  public static boolean stderrIsTerminal() {
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
  public void stage(String name, double weight) {
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
  public void update(double fraction, String detail) {
    draw(fraction, detail, false);
  }

  /** Ends the last stage and clears the progress line. */
  public void finish() {
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
  public Map<String, Long> stageMillis() {
    return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(stageMillis));
  }

  /** Wall time since this progress was created. */
  public long elapsedMillis() {
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
