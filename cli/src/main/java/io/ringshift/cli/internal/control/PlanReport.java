package io.ringshift.cli.internal.control;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.ByteUnits;
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
record PlanReport(ChangeSpec change, PlanPreview preview, PlanCost cost, String fenceReason) {
  /** How the change would be cut over, for the text: in transition stages, or at the fence and why. */
  String cutover() {
    return fenceReason == null ? "in transition stages: writes go on through the cutover (docs/protocol.md)"
        : "at the fence, without transition stages: " + fenceReason;
  }

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
    Double ratio = diff.movedToIdeal();
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
    lines.add("cutover    " + cutover());
    lines.addAll(cost.text(preview));
    if (plan.tasks().isEmpty()) {
      return lines;
    }
    int shown = taskLimit == 0 ? plan.tasks().size() : Math.min(taskLimit, plan.tasks().size());
    List<List<String>> taskRows = new ArrayList<>();
    taskRows.add(bytes ? List.of("KIND", "RANGE", "KEYSPACE", "BYTES", "SOURCES -> TARGET")
        : List.of("KIND", "RANGE", "KEYSPACE", "SOURCES -> TARGET"));
    for (PlannedTask t : preview.sortedTasks().subList(0, shown)) {
      List<String> row = new ArrayList<>(List.of(t.kind().name(),
          RingRange.of(t.rangeStart(), t.rangeEnd()).toString(), Text.percent(t.keyspaceFraction())));
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

  /** {@code plan --json}: the summary, the zone totals and every task with the id the orchestrator will give it. */
  record PlanJson(String cluster, String action, String node, String basis, long fromEpoch, Long inFlightEpoch,
      long toEpoch, int planVersion, String fromChecksum, String toChecksum, int tasks, int alreadyVerified,
      double changedFraction, double movedReplicaFraction, double idealMovedFraction, double primaryMovedFraction,
      long clusterBytes, List<ZoneFlowJson> byZone, String cutover, String fenceReason, PlanCost.CostJson cost,
      List<PlannedTaskJson> taskList) {}

  record ZoneFlowJson(String sourceZone, String targetZone, int tasks, double keyspaceFraction, long bytes) {}

  record PlannedTaskJson(String id, String kind, String rangeStart, String rangeEnd, double keyspaceFraction,
      long estimatedBytes, List<String> sources, String target, String targetZone) {}

  PlanJson json() {
    EpochPlanner.Plan plan = preview.plan();
    RingDiff diff = plan.diff();
    return new PlanJson(preview.clusterId(), change.action().name(), change.nodeId(), preview.basis().name(),
        preview.base().epoch(), preview.inFlight(), plan.target().epoch(), plan.planVersion(),
        preview.base().checksumHex(), plan.target().checksumHex(), plan.tasks().size(), preview.alreadyVerified(),
        diff.changedFraction(), diff.movedReplicaFraction(), diff.idealMovedFraction(), diff.primaryMovedFraction(),
        preview.clusterBytes(),
        preview.flows().stream().map(f -> new ZoneFlowJson(f.sourceZone(), f.targetZone(), f.tasks(),
            f.keyspaceFraction(), f.bytes())).toList(),
        fenceReason == null ? "stages" : "fence", fenceReason,
        cost.json(preview),
        preview.sortedTasks().stream().map(t -> new PlannedTaskJson(t.taskId(), t.kind().name(),
            HexFormat.of().toHexDigits(t.rangeStart()), HexFormat.of().toHexDigits(t.rangeEnd()),
            t.keyspaceFraction(), t.estimatedBytes(), t.sources(), t.target(), t.targetZone())).toList());
  }
}
