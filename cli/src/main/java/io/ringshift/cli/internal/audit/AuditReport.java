package io.ringshift.cli.internal.audit;

import io.ringshift.audit.AuditReplay.ClusterResult;
import io.ringshift.audit.AuditReplay.EpochResult;
import io.ringshift.audit.AuditReplay.Failure;
import io.ringshift.audit.AuditReplay.Result;
import io.ringshift.audit.AuditReplay.SnapshotBytes;
import io.ringshift.audit.WhatIf.ClusterWhatIf;
import io.ringshift.audit.WhatIf.Row;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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

  /** {@code audit --json}; {@code failure} is null when every check passed. */
  record AuditJson(boolean passed, int verified, Map<String, Integer> snapshotBytes, List<AuditClusterJson> clusters,
      FailureJson failure) {}

  record AuditClusterJson(String cluster, int epochRecords, int published, int snapshotRecords,
      List<AuditEpochJson> epochs) {}

  record AuditEpochJson(long epoch, String state, String checksum, String signingKeyId, int members, String cause,
      String snapshot) {
    static AuditEpochJson of(EpochResult e) {
      return new AuditEpochJson(e.epoch(), e.ok() ? "ok" : "FAIL", e.checksum(), e.signingKeyId(), e.members(),
          e.cause(), e.snapshot() == null ? null : e.snapshot().label());
    }
  }

  record FailureJson(String cluster, Long epoch, String check, String expected, String found, String message) {
    static FailureJson of(Failure f) {
      return f == null ? null
          : new FailureJson(f.cluster(), f.epoch(), f.check().label(), f.expected(), f.found(), f.message());
    }
  }

  static AuditJson auditJson(Result result) {
    Map<String, Integer> bytes = new LinkedHashMap<>();
    for (SnapshotBytes b : SnapshotBytes.values()) {
      bytes.put(b.label(), result.count(b));
    }
    List<AuditClusterJson> clusters = result.clusters().stream().map(c -> new AuditClusterJson(c.cluster(),
        c.records(), c.published(), c.snapshots(), c.epochs().stream().map(AuditEpochJson::of).toList())).toList();
    return new AuditJson(result.passed(), result.verified(), bytes, clusters, FailureJson.of(result.failure()));
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

  /** {@code audit --what-if --json}. */
  record WhatIfJson(List<WhatIfClusterJson> clusters) {}

  /** {@code replicas} is null when each epoch keeps its recorded R. */
  record WhatIfClusterJson(String cluster, List<Integer> recordedVnodes, List<Integer> recordedReplicas, int vnodes,
      Integer replicas, List<WhatIfEpochJson> epochs, WhatIfTotalJson total) {}

  /** The moved fractions are null for a cluster's first published epoch. */
  record WhatIfEpochJson(long epoch, String cause, int members, Double movedActual, Double movedWhatIf,
      double balanceActual, double balanceWhatIf) {
    static WhatIfEpochJson of(Row r) {
      return new WhatIfEpochJson(r.epoch(), r.cause(), r.members(), r.movedActual(), r.movedWhatIf(),
          r.balanceActual(), r.balanceWhatIf());
    }
  }

  record WhatIfTotalJson(double movedActual, double movedWhatIf, double worstBalanceActual,
      double worstBalanceWhatIf) {}

  static WhatIfJson whatIfJson(List<ClusterWhatIf> clusters) {
    return new WhatIfJson(clusters.stream().map(c -> new WhatIfClusterJson(c.cluster(), c.recordedVnodes(),
        c.recordedReplicas(), c.vnodes(), c.replicas(), c.rows().stream().map(WhatIfEpochJson::of).toList(),
        new WhatIfTotalJson(c.totalMovedActual(), c.totalMovedWhatIf(), c.worstBalanceActual(),
            c.worstBalanceWhatIf()))).toList());
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
