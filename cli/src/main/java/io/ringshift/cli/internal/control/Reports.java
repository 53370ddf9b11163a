package io.ringshift.cli.internal.control;

import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.ring.ByteUnits;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.admin.ClusterView.TaskView;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskState;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The text and JSON of {@code status} and {@code epochs}, and the line for the outcome of a request. Pure. */
final class Reports {
  private Reports() {}

  // ---- epochs ----

  /** "JOIN node-012", "INIT", "SET_WEIGHT node-3 -> 2.0": what caused an epoch. */
  static String cause(MembershipEvent cause) {
    if (cause == null) {
      return "-";
    }
    MembershipAction action = cause.getAction();
    if (action == MembershipAction.INIT) {
      return "INIT";
    }
    String text = action + " " + cause.getNodeId();
    if (action == MembershipAction.JOIN && cause.getZone() != null) {
      text += " (" + cause.getZone() + ")";
    }
    if (action == MembershipAction.SET_WEIGHT && cause.getWeight() != null) {
      text += " -> " + cause.getWeight();
    }
    return text;
  }

  static int tasks(EpochRecord e) {
    return e.getDiffSummary() == null ? 0 : e.getDiffSummary().getTasks();
  }

  static double moved(EpochRecord e) {
    return e.getDiffSummary() == null ? 0 : e.getDiffSummary().getMovedReplicaFraction();
  }

  /** One line per epoch record: the audit log. */
  static List<String> epochsText(String clusterId, List<EpochRecord> history) {
    List<List<String>> rows = new ArrayList<>();
    rows.add(List.of("TIME", "EPOCH", "PLAN", "STATE", "CAUSE", "REQUEST", "MEMBERS", "CHECKSUM", "TASKS", "MOVED",
        "REASON"));
    for (EpochRecord e : history) {
      rows.add(List.of(
          Text.time(e.getTimestampMillis()),
          String.valueOf(e.getEpoch()),
          e.getPlanVersion() == null ? "-" : String.valueOf(e.getPlanVersion()),
          e.getState().name(),
          cause(e.getCause()),
          e.getCause() == null ? "-" : e.getCause().getRequestId(),
          String.valueOf(e.getMembers().size()),
          Text.checksumPrefix(e.getTargetChecksum()),
          String.valueOf(tasks(e)),
          Text.percent(moved(e)),
          e.getReason() == null ? "" : e.getReason()));
    }
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "cluster %s: %d epoch record%s", clusterId, history.size(),
        history.size() == 1 ? "" : "s"));
    lines.addAll(Text.table(rows));
    return lines;
  }

  static ObjectNode epochsJson(String clusterId, List<EpochRecord> history) {
    ObjectNode root = JsonOutput.object();
    root.put("cluster", clusterId);
    ArrayNode epochs = root.putArray("epochs");
    history.forEach(e -> epochs.add(epochJson(e)));
    return root;
  }

  static ObjectNode epochJson(EpochRecord e) {
    ObjectNode node = JsonOutput.object();
    node.put("epoch", e.getEpoch());
    node.put("planVersion", e.getPlanVersion());
    node.put("state", e.getState().name());
    node.put("time", Text.time(e.getTimestampMillis()));
    node.set("cause", causeJson(e.getCause()));
    node.put("members", e.getMembers().size());
    node.put("zones", Text.zoneCount(e.getMembers()));
    node.put("vnodes", e.getVnodes());
    node.put("replicas", e.getReplicas());
    node.put("checksum", AvroBytes.hex(e.getTargetChecksum()));
    DiffSummary d = e.getDiffSummary();
    node.put("tasks", tasks(e));
    node.put("changedRanges", d == null ? 0 : d.getChangedRanges());
    node.put("changedFraction", d == null ? 0 : d.getChangedFraction());
    node.put("movedReplicaFraction", moved(e));
    node.put("idealMovedFraction", d == null ? 0 : d.getIdealMovedFraction());
    node.put("estimatedBytes", d == null ? 0 : d.getEstimatedBytes());
    node.put("supersedes", e.getSupersedes());
    node.put("reason", e.getReason());
    return node;
  }

  private static ObjectNode causeJson(MembershipEvent c) {
    if (c == null) {
      return null;
    }
    ObjectNode node = JsonOutput.object();
    node.put("action", c.getAction().name());
    node.put("node", c.getNodeId());
    node.put("zone", c.getZone());
    node.put("weight", c.getWeight());
    node.put("requestId", c.getRequestId());
    node.put("requestedBy", c.getRequestedBy());
    node.put("time", Text.time(c.getTimestampMillis()));
    return node;
  }

  // ---- status ----

  static List<String> statusText(ClusterView view, int taskLimit, long nowMillis) {
    List<String> lines = new ArrayList<>();
    lines.add("cluster " + view.clusterId());
    EpochRecord a = view.active();
    lines.add("active     " + (a == null ? "none (no epoch is READY yet)" : String.format(Locale.ROOT,
        "epoch %d %s: %d members in %d zones, vnodes %d, replicas %d, checksum %s; %s at %s",
        a.getEpoch(), a.getState(), a.getMembers().size(), Text.zoneCount(a.getMembers()), a.getVnodes(),
        a.getReplicas(), Text.checksumPrefix(a.getTargetChecksum()), cause(a.getCause()),
        Text.time(a.getTimestampMillis()))));
    EpochRecord p = view.published();
    EpochRecord refused = view.publisherRejection();
    lines.add("published  " + (p == null ? "none yet (clients have no ring; is the publisher running?)"
        : String.format(Locale.ROOT, "epoch %d at %s by key %s: clients route by it", p.getEpoch(),
            Text.time(p.getTimestampMillis()), p.getSigningKeyId()))
        + (refused == null ? "" : String.format(Locale.ROOT, "; epoch %d was REJECTED by the publisher at %s: %s",
            refused.getEpoch(), Text.time(refused.getTimestampMillis()), refused.getReason())));
    EpochRecord f = view.inFlight();
    if (f == null) {
      lines.add("in flight  none");
    } else {
      lines.add(String.format(Locale.ROOT,
          "in flight  epoch %d plan %s PLANNED: %s (request %s by %s) at %s; %d members, checksum %s",
          f.getEpoch(), f.getPlanVersion(), cause(f.getCause()), requestOf(f), requestedBy(f),
          Text.time(f.getTimestampMillis()), f.getMembers().size(), Text.checksumPrefix(f.getTargetChecksum())));
      DiffSummary d = f.getDiffSummary();
      if (d != null) {
        lines.add(String.format(Locale.ROOT,
            "           %d tasks, replica data moved %s (ideal %s), keyspace changed %s, estimated %s",
            d.getTasks(), Text.percent(d.getMovedReplicaFraction()), Text.percent(d.getIdealMovedFraction()),
            Text.percent(d.getChangedFraction()), ByteUnits.format(d.getEstimatedBytes())));
      }
      for (EpochRecord s : view.superseded()) {
        lines.add(String.format(Locale.ROOT, "           superseded plan %s at %s: %s", s.getPlanVersion(),
            Text.time(s.getTimestampMillis()), s.getReason() == null ? "-" : s.getReason()));
      }
      lines.addAll(progressText("progress   ", EpochProgress.of(view.tasks(), nowMillis)));
      lines.addAll(tasksText(view, taskLimit));
    }
    lines.addAll(cleanupText(view, nowMillis));
    lines.addAll(rejectedText(view));
    return lines;
  }

  private static List<String> tasksText(ClusterView view, int limit) {
    List<String> lines = new ArrayList<>();
    int expected = tasks(view.inFlight());
    List<String> counts = new ArrayList<>();
    view.countsByState().forEach((state, n) -> counts.add(state + " " + n));
    String found = view.tasks().size() == expected ? ""
        : String.format(Locale.ROOT, " (%d of %d readable on ring.tasks)", view.tasks().size(), expected);
    lines.add(String.format(Locale.ROOT, "tasks      %d%s%s", view.tasks().size(), found,
        counts.isEmpty() ? "" : ": " + String.join(", ", counts)));
    if (view.tasks().isEmpty()) {
      return lines;
    }
    List<List<String>> rows = new ArrayList<>();
    rows.add(List.of("STATE", "KIND", "RANGE", "KEYSPACE", "SOURCES -> TARGET", "COPIED", "ID", "DETAIL"));
    int shown = limit == 0 ? view.tasks().size() : Math.min(limit, view.tasks().size());
    for (TaskView t : view.tasks().subList(0, shown)) {
      RangeCopyTask task = t.task();
      rows.add(List.of(t.state().name(), task.getKind().name(), Text.range(task.getRangeStart(), task.getRangeEnd()),
          Text.percent(RingRange.of(task.getRangeStart(), task.getRangeEnd()).fraction()),
          String.join(",", task.getSources()) + " -> " + task.getTarget(),
          ByteUnits.format(t.status() == null ? 0 : t.status().getCopiedBytes()), task.getTaskId(), detail(t)));
    }
    Text.table(rows).forEach(line -> lines.add("  " + line));
    if (shown < view.tasks().size()) {
      lines.add(String.format(Locale.ROOT, "  ... %d more (--limit 0 shows all)", view.tasks().size() - shown));
    }
    return lines;
  }

  /** The progress bar, then why tasks wait (the five most common reasons). */
  private static List<String> progressText(String label, EpochProgress progress) {
    List<String> lines = new ArrayList<>();
    lines.add(label + progress.line());
    int shown = 0;
    for (Map.Entry<String, Integer> reason : progress.waiting().entrySet()) {
      if (shown++ == 5) {
        lines.add(String.format(Locale.ROOT, "           ... and %d other reasons", progress.waiting().size() - 5));
        break;
      }
      lines.add(String.format(Locale.ROOT, "  waiting  %d task%s: %s", reason.getValue(),
          reason.getValue() == 1 ? "" : "s", reason.getKey()));
    }
    return lines;
  }

  /** The CLEANUP tasks of the active epoch and the unfinished ones of older epochs, per epoch. */
  private static List<String> cleanupText(ClusterView view, long nowMillis) {
    List<String> lines = new ArrayList<>();
    Map<Long, List<TaskView>> byEpoch = new TreeMap<>();
    view.cleanups().forEach(t -> byEpoch.computeIfAbsent(t.task().getEpoch(), e -> new ArrayList<>()).add(t));
    byEpoch.forEach((epoch, tasks) -> {
      Map<TaskState, Integer> counts = new EnumMap<>(TaskState.class);
      tasks.forEach(t -> counts.merge(t.state(), 1, Integer::sum));
      List<String> parts = new ArrayList<>();
      counts.forEach((state, n) -> parts.add(state + " " + n));
      lines.add(String.format(Locale.ROOT, "cleanup    epoch %d: %d task%s: %s", epoch, tasks.size(),
          tasks.size() == 1 ? "" : "s", String.join(", ", parts)));
      List<String> progress = progressText("", EpochProgress.of(tasks, nowMillis));
      lines.addAll(progress.subList(1, progress.size()));
    });
    return lines;
  }

  private static String detail(TaskView t) {
    if (t.status() == null) {
      return "";
    }
    String why = t.status().getError() != null ? t.status().getError() : t.status().getBlockedReason();
    return why == null ? "" : why;
  }

  private static List<String> rejectedText(ClusterView view) {
    List<String> lines = new ArrayList<>();
    if (view.rejectedTotal() == 0) {
      lines.add("rejected   none");
      return lines;
    }
    lines.add(String.format(Locale.ROOT, "rejected   %d (latest %d):", view.rejectedTotal(), view.rejected().size()));
    for (RejectedEvent r : view.rejected()) {
      lines.add(String.format(Locale.ROOT, "  %s  request %s  %s", Text.time(r.getTimestampMillis()),
          r.getRequestId() == null ? "-" : r.getRequestId(), r.getReason()));
    }
    return lines;
  }

  static ObjectNode statusJson(ClusterView view, long nowMillis) {
    ObjectNode root = JsonOutput.object();
    root.put("cluster", view.clusterId());
    root.set("active", view.active() == null ? null : epochJson(view.active()));
    root.set("published", view.published() == null ? null : epochJson(view.published()));
    root.set("publisherRejection", view.publisherRejection() == null ? null : epochJson(view.publisherRejection()));
    root.set("inFlight", view.inFlight() == null ? null : epochJson(view.inFlight()));
    ArrayNode superseded = root.putArray("superseded");
    view.superseded().forEach(s -> superseded.add(epochJson(s)));
    ObjectNode counts = root.putObject("taskCounts");
    view.countsByState().forEach((state, n) -> counts.put(state.name(), n));
    root.set("progress", view.inFlight() == null ? null : progressJson(EpochProgress.of(view.tasks(), nowMillis)));
    taskArray(root.putArray("tasks"), view.tasks());
    taskArray(root.putArray("cleanups"), view.cleanups());
    root.put("rejectedTotal", view.rejectedTotal());
    ArrayNode rejected = root.putArray("rejected");
    for (RejectedEvent r : view.rejected()) {
      ObjectNode node = rejected.addObject();
      node.put("time", Text.time(r.getTimestampMillis()));
      node.put("requestId", r.getRequestId());
      node.put("key", r.getKey());
      node.put("reason", r.getReason());
    }
    return root;
  }

  private static ObjectNode progressJson(EpochProgress p) {
    ObjectNode node = JsonOutput.object();
    node.put("tasks", p.tasks());
    node.put("verified", p.verified());
    node.put("copiedBytes", p.copiedBytes());
    node.put("estimatedBytes", p.estimatedBytes());
    node.put("fraction", p.fraction());
    node.put("bytesPerSecond", p.bytesPerSecond() < 0 ? null : p.bytesPerSecond());
    node.put("etaSeconds", p.etaSeconds() < 0 ? null : p.etaSeconds());
    ObjectNode waiting = node.putObject("waiting");
    p.waiting().forEach(waiting::put);
    return node;
  }

  private static void taskArray(ArrayNode tasks, List<TaskView> views) {
    for (TaskView t : views) {
      RangeCopyTask task = t.task();
      ObjectNode node = tasks.addObject();
      node.put("id", task.getTaskId());
      node.put("kind", task.getKind().name());
      node.put("rangeStart", HexFormat.of().toHexDigits(task.getRangeStart()));
      node.put("rangeEnd", HexFormat.of().toHexDigits(task.getRangeEnd()));
      node.put("keyspaceFraction", RingRange.of(task.getRangeStart(), task.getRangeEnd()).fraction());
      ArrayNode sources = node.putArray("sources");
      task.getSources().forEach(sources::add);
      node.put("target", task.getTarget());
      node.put("targetZone", task.getTargetZone());
      node.put("estimatedBytes", task.getEstimatedBytes());
      node.put("state", t.state().name());
      node.put("copiedBytes", t.status() == null ? 0 : t.status().getCopiedBytes());
      node.put("epoch", task.getEpoch());
      node.put("detail", t.status() == null ? null
          : t.status().getError() != null ? t.status().getError() : t.status().getBlockedReason());
    }
  }

  private static String requestOf(EpochRecord e) {
    return e.getCause() == null ? "-" : e.getCause().getRequestId();
  }

  private static String requestedBy(EpochRecord e) {
    return e.getCause() == null || e.getCause().getRequestedBy().isEmpty() ? "-" : e.getCause().getRequestedBy();
  }

  // ---- the outcome of a request ----

  /** "epoch 2 PLANNED (plan 1): 97 tasks, replica data moved 7.69% (ideal 7.69%), estimated 0 B". */
  static String outcome(EpochRecord e) {
    DiffSummary d = e.getDiffSummary();
    String summary = d == null ? "" : String.format(Locale.ROOT,
        ": %d tasks, replica data moved %s (ideal %s), estimated %s", d.getTasks(),
        Text.percent(d.getMovedReplicaFraction()), Text.percent(d.getIdealMovedFraction()),
        ByteUnits.format(d.getEstimatedBytes()));
    return String.format(Locale.ROOT, "epoch %d %s (plan %s, %d members, checksum %s)%s", e.getEpoch(), e.getState(),
        e.getPlanVersion(), e.getMembers().size(), Text.checksumPrefix(e.getTargetChecksum()), summary);
  }
}
