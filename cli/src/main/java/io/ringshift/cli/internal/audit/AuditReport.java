package io.ringshift.cli.internal.audit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.audit.AuditReplay.ClusterResult;
import io.ringshift.audit.AuditReplay.EpochResult;
import io.ringshift.audit.AuditReplay.Failure;
import io.ringshift.audit.AuditReplay.Result;
import io.ringshift.audit.AuditReplay.SnapshotBytes;
import io.ringshift.audit.WhatIf.ClusterWhatIf;
import io.ringshift.audit.WhatIf.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The text and JSON of {@code ringshift audit} and of its {@code --what-if} mode. Pure. */
final class AuditReport {
  /** Hex digits of a checksum shown in tables, as {@code ringshift epochs} shows them. */
  private static final int CHECKSUM_PREFIX = 12;

  private AuditReport() {}

  // ---- audit ----

  /** Per cluster a heading and one line per published epoch; then the verdict when every check passed. */
  static List<String> auditText(Result result) {
    List<String> lines = new ArrayList<>();
    for (ClusterResult c : result.clusters()) {
      if (!lines.isEmpty()) {
        lines.add("");
      }
      lines.add(String.format(Locale.ROOT, "cluster %s: %s of %s on ring.epochs, %s on ring.snapshots", c.cluster(),
          plural(c.published(), "published epoch"), plural(c.records(), "epoch record"),
          plural(c.snapshots(), "snapshot")));
      if (c.epochs().isEmpty()) {
        continue;
      }
      List<List<String>> rows = new ArrayList<>();
      rows.add(List.of("EPOCH", "STATE", "CHECKSUM", "KEY", "MEMBERS", "CAUSE", "SNAPSHOT"));
      for (EpochResult e : c.epochs()) {
        rows.add(List.of(
            String.valueOf(e.epoch()),
            e.ok() ? "ok" : "FAIL",
            prefix(e.checksum()),
            e.signingKeyId() == null ? "-" : e.signingKeyId(),
            String.valueOf(e.members()),
            e.cause(),
            e.snapshot() == null ? "-" : e.snapshot().label()));
      }
      lines.addAll(table(rows));
    }
    if (result.passed()) {
      lines.add(String.format(Locale.ROOT, "audit passed: %s verified in %s; snapshot bytes: %d match, %d compacted, "
              + "%d absent", plural(result.verified(), "published epoch"), plural(result.clusters().size(), "cluster"),
          result.count(SnapshotBytes.MATCH), result.count(SnapshotBytes.COMPACTED),
          result.count(SnapshotBytes.ABSENT)));
    }
    return lines;
  }

  static ObjectNode auditJson(Result result) {
    ObjectNode root = JsonOutput.object();
    root.put("passed", result.passed());
    root.put("verified", result.verified());
    ObjectNode bytes = root.putObject("snapshotBytes");
    for (SnapshotBytes b : SnapshotBytes.values()) {
      bytes.put(b.label(), result.count(b));
    }
    ArrayNode clusters = root.putArray("clusters");
    for (ClusterResult c : result.clusters()) {
      ObjectNode cluster = clusters.addObject();
      cluster.put("cluster", c.cluster());
      cluster.put("epochRecords", c.records());
      cluster.put("published", c.published());
      cluster.put("snapshotRecords", c.snapshots());
      ArrayNode epochs = cluster.putArray("epochs");
      for (EpochResult e : c.epochs()) {
        ObjectNode epoch = epochs.addObject();
        epoch.put("epoch", e.epoch());
        epoch.put("state", e.ok() ? "ok" : "FAIL");
        epoch.put("checksum", e.checksum());
        epoch.put("signingKeyId", e.signingKeyId());
        epoch.put("members", e.members());
        epoch.put("cause", e.cause());
        epoch.put("snapshot", e.snapshot() == null ? null : e.snapshot().label());
      }
    }
    Failure f = result.failure();
    if (f == null) {
      root.putNull("failure");
    } else {
      ObjectNode failure = root.putObject("failure");
      failure.put("cluster", f.cluster());
      failure.put("epoch", f.epoch());
      failure.put("check", f.check().label());
      failure.put("expected", f.expected());
      failure.put("found", f.found());
      failure.put("message", f.message());
    }
    return root;
  }

  // ---- what-if ----

  static List<String> whatIfText(List<ClusterWhatIf> clusters) {
    List<String> lines = new ArrayList<>();
    for (ClusterWhatIf c : clusters) {
      if (!lines.isEmpty()) {
        lines.add("");
      }
      lines.add(String.format(Locale.ROOT, "what-if for cluster %s: %s; recorded vnodes %s, replicas %s; what-if "
              + "vnodes %d, replicas %s", c.cluster(), plural(c.rows().size(), "published epoch"),
          join(c.recordedVnodes()), join(c.recordedReplicas()), c.vnodes(),
          c.replicas() == null ? join(c.recordedReplicas()) : String.valueOf(c.replicas())));
      List<List<String>> rows = new ArrayList<>();
      rows.add(List.of("EPOCH", "CAUSE", "MEMBERS", "MOVED ACTUAL", "MOVED WHAT-IF", "BALANCE ACTUAL",
          "BALANCE WHAT-IF"));
      for (Row r : c.rows()) {
        rows.add(List.of(
            String.valueOf(r.epoch()),
            r.cause(),
            String.valueOf(r.members()),
            r.movedActual() == null ? "-" : percent(r.movedActual()),
            r.movedWhatIf() == null ? "-" : percent(r.movedWhatIf()),
            ratio(r.balanceActual()),
            ratio(r.balanceWhatIf())));
      }
      rows.add(List.of("total", "", "", percent(c.totalMovedActual()), percent(c.totalMovedWhatIf()),
          ratio(c.worstBalanceActual()) + " worst", ratio(c.worstBalanceWhatIf()) + " worst"));
      lines.addAll(table(rows));
    }
    return lines;
  }

  static ObjectNode whatIfJson(List<ClusterWhatIf> clusters) {
    ObjectNode root = JsonOutput.object();
    ArrayNode array = root.putArray("clusters");
    for (ClusterWhatIf c : clusters) {
      ObjectNode cluster = array.addObject();
      cluster.put("cluster", c.cluster());
      ArrayNode recordedVnodes = cluster.putArray("recordedVnodes");
      c.recordedVnodes().forEach(recordedVnodes::add);
      ArrayNode recordedReplicas = cluster.putArray("recordedReplicas");
      c.recordedReplicas().forEach(recordedReplicas::add);
      cluster.put("vnodes", c.vnodes());
      cluster.put("replicas", c.replicas());
      ArrayNode epochs = cluster.putArray("epochs");
      for (Row r : c.rows()) {
        ObjectNode epoch = epochs.addObject();
        epoch.put("epoch", r.epoch());
        epoch.put("cause", r.cause());
        epoch.put("members", r.members());
        epoch.put("movedActual", r.movedActual());
        epoch.put("movedWhatIf", r.movedWhatIf());
        epoch.put("balanceActual", r.balanceActual());
        epoch.put("balanceWhatIf", r.balanceWhatIf());
      }
      ObjectNode total = cluster.putObject("total");
      total.put("movedActual", c.totalMovedActual());
      total.put("movedWhatIf", c.totalMovedWhatIf());
      total.put("worstBalanceActual", c.worstBalanceActual());
      total.put("worstBalanceWhatIf", c.worstBalanceWhatIf());
    }
    return root;
  }

  // ---- formatting ----

  private static String prefix(String checksumHex) {
    return checksumHex.length() <= CHECKSUM_PREFIX ? checksumHex : checksumHex.substring(0, CHECKSUM_PREFIX);
  }

  /** A fraction as a percentage with two decimals: 0.0769 -> {@code 7.69%}. */
  static String percent(double fraction) {
    return String.format(Locale.ROOT, "%.2f%%", 100 * fraction);
  }

  private static String ratio(double value) {
    return String.format(Locale.ROOT, "%.3f", value);
  }

  private static String plural(int n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }

  private static String join(List<Integer> values) {
    return values.stream().map(String::valueOf).collect(Collectors.joining("/"));
  }

  /** Left-aligned columns, two spaces apart, each as wide as its widest cell; trailing blanks stripped. */
  private static List<String> table(List<List<String>> rows) {
    int[] width = new int[rows.get(0).size()];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        width[i] = Math.max(width[i], row.get(i).length());
      }
    }
    List<String> lines = new ArrayList<>(rows.size());
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(row.get(i)).append(" ".repeat(width[i] - row.get(i).length() + 2));
      }
      lines.add(line.toString().stripTrailing());
    }
    return lines;
  }
}
