package io.ringshift.cli.internal.control;

import io.ringshift.ring.ByteUnits;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.admin.PlanPreview;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/** {@code ringshift plan}'s text and JSON of a {@link PlanPreview}. */
record PlanReport(ChangeSpec change, PlanPreview preview) {
  /** The text: a summary, the zone totals, and the first {@code taskLimit} tasks (0: all). */
  List<String> text(int taskLimit) {
    String clusterId = preview.clusterId();
    RingSnapshot base = preview.base();
    PlanPreview.Basis basis = preview.basis();
    Long inFlight = preview.inFlight();
    EpochPlanner.Plan plan = preview.plan();
    int alreadyVerified = preview.alreadyVerified();
    long clusterBytes = preview.clusterBytes();
    List<String> lines = new ArrayList<>();
    RingSnapshot target = plan.target();
    RingDiff diff = plan.diff();
    lines.add(String.format(Locale.ROOT, "plan: %s on cluster %s (nothing was written)", change.describe(),
        clusterId));
    String from = switch (basis) {
      case ACTIVE -> String.format(Locale.ROOT, "active epoch %d (%d members, checksum %.12s)", base.epoch(),
          base.memberCount(), base.checksumHex());
      case QUEUED -> String.format(Locale.ROOT, "the target of epoch %d (%d members, checksum %.12s), which is in "
          + "flight: the change waits for it to be READY", base.epoch(), base.memberCount(), base.checksumHex());
      case REPLAN -> String.format(Locale.ROOT, "active epoch %d (%d members, checksum %.12s): a FAIL re-plans epoch "
          + "%d, which is in flight, and its current plan becomes SUPERSEDED", base.epoch(), base.memberCount(),
          base.checksumHex(), inFlight);
      case FAILURE -> String.format(Locale.ROOT, "active epoch %d (%d members, checksum %.12s): a FAIL publishes "
          + "failure epoch %d at once (the base without the dead nodes, its new replicas marked filling)%s, then "
          + "plans the repair", base.epoch(), base.memberCount(), base.checksumHex(), target.epoch() - 1,
          inFlight == null ? "" : " and supersedes the plan of epoch " + inFlight + " in flight");
    };
    lines.add("from       " + from);
    lines.add(String.format(Locale.ROOT, "to         epoch %d plan %d (%d members, checksum %.12s)", target.epoch(),
        plan.planVersion(), target.memberCount(), target.checksumHex()));
    List<String> kinds = new ArrayList<>();
    preview.kinds().forEach((kind, n) -> kinds.add(n + " " + kind));
    lines.add(String.format(Locale.ROOT, "tasks      %d%s%s", plan.tasks().size(),
        kinds.isEmpty() ? "" : " (" + String.join(", ", kinds) + ")",
        alreadyVerified == 0 ? "" : "; " + alreadyVerified + " already VERIFIED are kept, not issued again"));
    Double ratio = diff.idealMovedFraction() > 0 ? diff.movedReplicaFraction() / diff.idealMovedFraction() : null;
    lines.add(String.format(Locale.ROOT, "moves      %s of the replica data; ideal %s; ratio %s",
        Text.percent(diff.movedReplicaFraction()), Text.percent(diff.idealMovedFraction()),
        ratio == null ? "n/a (ideal is 0)" : String.format(Locale.ROOT, "%.3f", ratio)));
    lines.add(String.format(Locale.ROOT, "keyspace   %s changes its replica list, %s its primary",
        Text.percent(diff.changedFraction()), Text.percent(diff.primaryMovedFraction())));
    boolean bytes = clusterBytes > 0;
    lines.add(bytes
        ? String.format(Locale.ROOT, "by zone    (preferred source zone -> target zone; cluster of %s)",
            ByteUnits.format(clusterBytes))
        : "by zone    (preferred source zone -> target zone; keyspace fractions: --cluster-bytes N shows bytes)");
    List<List<String>> rows = new ArrayList<>();
    for (PlanPreview.ZoneFlow f : preview.flows()) {
      List<String> row = new ArrayList<>(List.of(f.sourceZone() + " -> " + f.targetZone(),
          f.tasks() + " task" + (f.tasks() == 1 ? "" : "s"), Text.percent(f.keyspaceFraction())));
      if (bytes) {
        row.add(ByteUnits.format(f.bytes()));
      }
      rows.add(row);
    }
    Text.table(rows).forEach(line -> lines.add("  " + line));
    if (plan.tasks().isEmpty()) {
      return lines;
    }
    int shown = taskLimit == 0 ? plan.tasks().size() : Math.min(taskLimit, plan.tasks().size());
    List<List<String>> taskRows = new ArrayList<>();
    taskRows.add(bytes ? List.of("KIND", "RANGE", "KEYSPACE", "BYTES", "SOURCES -> TARGET")
        : List.of("KIND", "RANGE", "KEYSPACE", "SOURCES -> TARGET"));
    for (PlannedTask t : preview.sortedTasks().subList(0, shown)) {
      List<String> row = new ArrayList<>(List.of(t.kind().name(), Text.range(t.rangeStart(), t.rangeEnd()),
          Text.percent(t.keyspaceFraction())));
      if (bytes) {
        row.add(ByteUnits.format(t.estimatedBytes()));
      }
      row.add((t.sources().isEmpty() ? "(no live source)" : String.join(",", t.sources())) + " -> " + t.target());
      taskRows.add(row);
    }
    lines.add(shown == plan.tasks().size() ? "task list" : "task list (first " + shown + ")");
    Text.table(taskRows).forEach(line -> lines.add("  " + line));
    if (shown < plan.tasks().size()) {
      lines.add(String.format(Locale.ROOT, "  ... %d more (--limit 0 shows all)", plan.tasks().size() - shown));
    }
    return lines;
  }

  /** The JSON: the summary, the zone totals and every task with the id the orchestrator will give it. */
  ObjectNode json() {
    String clusterId = preview.clusterId();
    RingSnapshot base = preview.base();
    PlanPreview.Basis basis = preview.basis();
    Long inFlight = preview.inFlight();
    EpochPlanner.Plan plan = preview.plan();
    int alreadyVerified = preview.alreadyVerified();
    long clusterBytes = preview.clusterBytes();
    RingDiff diff = plan.diff();
    ObjectNode root = JsonOutput.object();
    root.put("cluster", clusterId);
    root.put("action", change.action().name());
    root.put("node", change.nodeId());
    root.put("basis", basis.name());
    root.put("fromEpoch", base.epoch());
    root.put("inFlightEpoch", inFlight);
    root.put("toEpoch", plan.target().epoch());
    root.put("planVersion", plan.planVersion());
    root.put("fromChecksum", base.checksumHex());
    root.put("toChecksum", plan.target().checksumHex());
    root.put("tasks", plan.tasks().size());
    root.put("alreadyVerified", alreadyVerified);
    root.put("changedFraction", diff.changedFraction());
    root.put("movedReplicaFraction", diff.movedReplicaFraction());
    root.put("idealMovedFraction", diff.idealMovedFraction());
    root.put("primaryMovedFraction", diff.primaryMovedFraction());
    root.put("clusterBytes", clusterBytes);
    ArrayNode byZone = root.putArray("byZone");
    for (PlanPreview.ZoneFlow f : preview.flows()) {
      ObjectNode node = byZone.addObject();
      node.put("sourceZone", f.sourceZone());
      node.put("targetZone", f.targetZone());
      node.put("tasks", f.tasks());
      node.put("keyspaceFraction", f.keyspaceFraction());
      node.put("bytes", f.bytes());
    }
    ArrayNode tasks = root.putArray("taskList");
    for (PlannedTask t : preview.sortedTasks()) {
      ObjectNode node = tasks.addObject();
      node.put("id", t.taskId());
      node.put("kind", t.kind().name());
      node.put("rangeStart", HexFormat.of().toHexDigits(t.rangeStart()));
      node.put("rangeEnd", HexFormat.of().toHexDigits(t.rangeEnd()));
      node.put("keyspaceFraction", t.keyspaceFraction());
      node.put("estimatedBytes", t.estimatedBytes());
      ArrayNode sources = node.putArray("sources");
      t.sources().forEach(sources::add);
      node.put("target", t.target());
      node.put("targetZone", t.targetZone());
    }
    return root;
  }
}
