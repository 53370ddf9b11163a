package io.ringshift.demo.internal;

import io.ringshift.demo.DemoResult;
import io.ringshift.demo.DemoResult.ChangeReport;
import io.ringshift.demo.DemoResult.Spread;
import io.ringshift.ring.ByteUnits;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The summary the demo prints at the end: a table of the changes, then the workload, the checks and the verdict. */
public final class SummaryText {
  private static final String[] PHASES = {"planned", "copied", "ready", "published", "cleaned"};

  private SummaryText() {}

  public static List<String> lines(DemoResult r) {
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "summary (seed %d, %s):", r.seed(), duration(r.elapsedMillis())));
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"change", "epochs", "tasks", "moved", "ideal", "/ideal", "plan", "copy", "verify",
        "publish", "cleanup", "fence window p50/p99/max", "swap"});
    for (ChangeReport c : r.changes()) {
      Map<String, Long> phases = c.phases();
      List<String> row = new ArrayList<>();
      row.add(c.label());
      row.add(epochs(c.epochs()) + ("PUBLISHED".equals(c.outcome()) ? "" : " " + c.outcome()));
      row.add(String.valueOf(c.tasks()));
      row.add(ByteUnits.format(c.bytesMoved()));
      row.add(c.idealBytes() > 0 ? ByteUnits.format(c.idealBytes()) : "-");
      row.add(c.movedToIdeal() < 0 ? "-" : String.format(Locale.ROOT, "%.2f", c.movedToIdeal()));
      for (String phase : PHASES) {
        Long ms = phases.get(phase);
        row.add(ms == null ? "-" : seconds(ms));
      }
      row.add(spread(c.fenceWindows()) + (c.downWindows().count() > 0 ? "; node down " + spread(c.downWindows())
          : ""));
      row.add(c.swapDelayMillis() < 0 ? "-" : c.swapDelayMillis() + " ms");
      rows.add(row.toArray(String[]::new));
    }
    lines.addAll(table(rows));
    lines.add("  moved: bytes the tasks copied; ideal: the weight share that changes hands times the replica bytes; "
        + "phases from the request; swap: publication to the application's client routing by it");
    lines.add("cutover per change (docs/protocol.md, \"Transition stages\"; barrier: until every live participant "
        + "routes by the stage):");
    for (ChangeReport c : r.changes()) {
      lines.add("  " + c.label() + ": " + cutover(c) + (c.writeP99Millis() < 0 ? ""
          : String.format(Locale.ROOT, "; write p99 %.1f ms", c.writeP99Millis()) + cpu(c.cpuCores()))
          + "; " + c.fenceWindows().count() + " writes refused at its fences");
    }
    if (r.steadyWriteP99Millis() >= 0) {
      lines.add(String.format(Locale.ROOT, "  write p99 while no change was in progress: %.1f ms",
          r.steadyWriteP99Millis()) + cpu(r.steadyCpuCores()));
    }
    double seconds = Math.max(1, r.workloadMillis()) / 1e3;
    int askedWrites = r.settings().rate() / 2;
    int askedReads = r.settings().rate() - askedWrites;
    lines.add(String.format(Locale.ROOT, "writes: %,d acknowledged (%,.0f/s of the %,d/s asked), %,d attempts refused "
        + "at a fence or for a newer ring and sent again, %,d failed on a node that was down and sent again, %,d never "
        + "acknowledged when the application stopped", r.writes(), r.writes() / seconds, askedWrites,
        r.refusedAttempts(), r.failedAttempts(), r.abandonedWrites()));
    lines.add(String.format(Locale.ROOT, "reads: %,d served (%,.0f/s of the %,d/s asked), %,d stale, %,d served by a "
        + "filling replica (%,d of a key written by a newer ring than the reader's, not checked)", r.reads(),
        r.reads() / seconds, askedReads, r.staleReads(), r.fillingReads(), r.readsBehind()));
    if (r.writes() + r.reads() < 0.9 * r.settings().rate() * seconds) {
      lines.add("  (below the rate asked: every role of the plane shares this machine's cores with the application, "
          + "and an operation that waits at a fence or on a down node is not made up afterwards)");
    }
    lines.add(String.format(Locale.ROOT, "replicas: %,d (key, replica) pairs of the final ring read back: %,d lost "
        + "writes", r.replicaReads(), r.lostWrites()));
    lines.add("audit: " + r.audit());
    for (String example : r.examples()) {
      lines.add("  " + example);
    }
    if (r.passed()) {
      lines.add("PASSED: no acknowledged write lost, no stale read, no read from a filling replica, every snapshot "
          + "proved");
    } else {
      lines.add("FAILED: " + String.join("; ", r.failures()));
    }
    return lines;
  }

  /** How a change was cut over, with its stages' timings and barrier waits. */
  static String cutover(ChangeReport c) {
    if (c.transition().isEmpty()) {
      return c.cutover();
    }
    List<String> parts = new ArrayList<>();
    long planned = c.at("planned");
    long s1 = c.transitionAt("stage 1");
    long b1 = c.transitionAt("barrier 1");
    long s2 = c.transitionAt("stage 2");
    long fin = c.transitionAt("final");
    long b3 = c.transitionAt("barrier 3");
    long reverted = c.transitionAt("reverted");
    if (s1 >= 0) {
      parts.add("stage 1 " + (planned > 0 ? seconds(Math.max(0, s1 - planned)) + " after the plan" : "published"));
    }
    if (b1 >= 0 && s1 >= 0) {
      parts.add("barrier 1 " + Math.max(0, b1 - s1) + " ms");
    }
    if (s2 >= 0) {
      parts.add("stage 2 at READY" + (s1 >= 0 ? ", " + seconds(Math.max(0, s2 - s1)) + " after stage 1" : ""));
    }
    if (fin >= 0 && s2 >= 0) {
      parts.add("barrier 2 " + Math.max(0, fin - s2) + " ms to FINAL");
    }
    if (b3 >= 0 && fin >= 0) {
      parts.add("barrier 3 " + Math.max(0, b3 - fin) + " ms");
    }
    if (reverted >= 0) {
      parts.add("reverted " + (s1 >= 0 ? seconds(Math.max(0, reverted - s1)) + " after stage 1" : ""));
    }
    return "stages: " + String.join(", ", parts);
  }

  /**
   * The process's CPU use beside a latency figure: the demo runs the broker, every role, the nodes and the application
   * in one process, so a figure taken with every core busy measures the machine's queue as much as the protocol.
   */
  static String cpu(double cores) {
    return cores < 0 ? "" : String.format(Locale.ROOT, " (process CPU %.1f of %d cores)", cores,
        Runtime.getRuntime().availableProcessors());
  }

  static String spread(Spread s) {
    if (s.count() == 0) {
      return "none";
    }
    return String.format(Locale.ROOT, "%d/%d/%d ms (%d writes)", s.p50(), s.p99(), s.max(), s.count());
  }

  static String epochs(List<Long> epochs) {
    return String.join("+", epochs.stream().map(String::valueOf).toList());
  }

  static String seconds(long millis) {
    return String.format(Locale.ROOT, "%.1f s", millis / 1e3);
  }

  static String duration(long millis) {
    long s = Math.round(millis / 1e3);
    return s < 60 ? s + " s" : (s / 60) + " min " + (s % 60) + " s";
  }

  /** Left-aligned first column, right-aligned numbers, two spaces apart. */
  static List<String> table(List<String[]> rows) {
    int columns = rows.get(0).length;
    int[] width = new int[columns];
    for (String[] row : rows) {
      for (int c = 0; c < columns; c++) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    List<String> lines = new ArrayList<>();
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder(" ");
      for (int c = 0; c < columns; c++) {
        String cell = row[c];
        String pad = " ".repeat(width[c] - cell.length());
        line.append("  ").append(c == 0 ? cell + pad : pad + cell);
      }
      lines.add(line.toString().stripTrailing());
    }
    return lines;
  }
}
