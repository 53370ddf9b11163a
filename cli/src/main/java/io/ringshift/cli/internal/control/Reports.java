package io.ringshift.cli.internal.control;

import io.ringshift.protocol.EpochRecords;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.ring.ByteUnits;
import io.ringshift.orchestrator.admin.ClusterView.TaskView;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The text and JSON of {@code status} and {@code epochs}, and the line for the outcome of a request. Pure. */
final class Reports {
  private Reports() {}

  // ---- epochs ----

  static String cause(MembershipEvent cause) {
    return EpochRecords.cause(cause, true);
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

  /** {@code epochs --json}. */
  record EpochsJson(String cluster, List<EpochJson> epochs) {}

  /** An epoch record, in {@code epochs --json} and {@code status --json}. */
  record EpochJson(long epoch, Integer planVersion, String state, String time, CauseJson cause, int members,
      int zones, int vnodes, int replicas, String checksum, int tasks, int changedRanges, double changedFraction,
      double movedReplicaFraction, double idealMovedFraction, long estimatedBytes, Long supersedes, String reason) {
    /** Null for null: status prints {@code null} for an epoch that does not exist. */
    static EpochJson of(EpochRecord e) {
      if (e == null) {
        return null;
      }
      DiffSummary d = e.getDiffSummary();
      // Reports.tasks: the record's own tasks() would shadow it.
      return new EpochJson(e.getEpoch(), e.getPlanVersion(), e.getState().name(), Text.time(e.getTimestampMillis()),
          CauseJson.of(e.getCause()), e.getMembers().size(), Text.zoneCount(e.getMembers()), e.getVnodes(),
          e.getReplicas(), AvroBytes.hex(e.getTargetChecksum()), Reports.tasks(e),
          d == null ? 0 : d.getChangedRanges(), d == null ? 0 : d.getChangedFraction(), moved(e),
          d == null ? 0 : d.getIdealMovedFraction(), d == null ? 0 : d.getEstimatedBytes(), e.getSupersedes(),
          e.getReason());
    }
  }

  record CauseJson(String action, String node, String zone, Double weight, String requestId, String requestedBy,
      String time) {
    static CauseJson of(MembershipEvent c) {
      return c == null ? null : new CauseJson(c.getAction().name(), c.getNodeId(), c.getZone(), c.getWeight(),
          c.getRequestId(), c.getRequestedBy(), Text.time(c.getTimestampMillis()));
    }
  }

  static EpochsJson epochsJson(String clusterId, List<EpochRecord> history) {
    return new EpochsJson(clusterId, history.stream().map(EpochJson::of).toList());
  }

  // ---- status ----

  /** What the orchestrator did about a rejected epoch, as far as the log says. */
  private static String rollback(ClusterView view, EpochRecord refused, EpochRecord published) {
    String to = published == null ? "the cluster's start" : "published epoch " + published.getEpoch();
    EpochRecord again = view.replannedAfter(refused);
    return again == null
        ? String.format(Locale.ROOT, "; the orchestrator rolled back to %s (after a second rejection in a row it "
            + "plans only failures again, after a third it holds there until the next change)", to)
        : String.format(Locale.ROOT, "; the orchestrator rolled back to %s and planned again as epoch %d", to,
            again.getEpoch());
  }

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
            refused.getEpoch(), Text.time(refused.getTimestampMillis()), refused.getReason())
            + rollback(view, refused, p)));
    EpochRecord c = view.cutover();
    if (c != null) {
      lines.add("cutover    " + cutoverText(c));
    }
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
      if (f.getReason() != null && f.getReason().startsWith("re-planned")) {
        lines.add("           " + f.getReason());
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
      RingRange range = RingRange.of(task.getRangeStart(), task.getRangeEnd());
      rows.add(List.of(t.state().name(), task.getKind().name(), range.toString(), Text.percent(range.fraction()),
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
      int nothing = 0;
      for (TaskView t : tasks) {
        if (deletedNothing(t)) {
          nothing++; // a correct outcome, not a failure: the range is where it must be
        } else {
          counts.merge(t.state(), 1, Integer::sum);
        }
      }
      List<String> parts = new ArrayList<>();
      counts.forEach((state, n) -> parts.add(state + " " + n));
      if (nothing > 0) {
        parts.add("nothing to delete " + nothing);
      }
      lines.add(String.format(Locale.ROOT, "cleanup    epoch %d: %d task%s: %s", epoch, tasks.size(),
          tasks.size() == 1 ? "" : "s", String.join(", ", parts)));
      List<String> progress = progressText("", EpochProgress.of(tasks.stream().filter(t -> !deletedNothing(t))
          .toList(), nowMillis));
      lines.addAll(progress.subList(1, progress.size()));
    });
    return lines;
  }

  /**
   * A CLEANUP that ended without deleting, because its range is where it must be: VERIFIED with a note (FAILED from
   * workers of earlier versions), its note beginning "nothing deleted: " or naming the target's refusal.
   */
  static boolean deletedNothing(TaskView t) {
    TaskStatus s = t.status();
    return s != null && s.getError() != null && t.task().getKind() == io.ringshift.schemas.avro.TaskKind.CLEANUP
        && (s.getState() == TaskState.VERIFIED || s.getState() == TaskState.FAILED)
        && (s.getError().startsWith("nothing deleted: ") || s.getError().contains(" refused the delete: "));
  }

  private static String detail(TaskView t) {
    String why = why(t);
    return why == null ? "" : why;
  }

  /** Why a task waits or failed: its error, else its blocked reason; null when neither (or no status yet). */
  private static String why(TaskView t) {
    return t.status() == null ? null
        : t.status().getError() != null ? t.status().getError() : t.status().getBlockedReason();
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

  /** {@code status --json}: every task, not only the first {@code --limit}. */
  record StatusJson(String cluster, EpochJson active, EpochJson published, EpochJson publisherRejection,
      EpochJson inFlight, List<EpochJson> superseded, Map<String, Integer> taskCounts, ProgressJson progress,
      List<TaskJson> tasks, List<TaskJson> cleanups, int rejectedTotal, List<RejectedJson> rejected,
      HotKeysSection.HotKeysJson hotKeys, ParticipantsSection.ParticipantsJson participants, EpochJson cutover,
      Integer cutoverStage) {

    /** With the cluster's hot keys (the reports of its clients on ring.hot-keys, merged). */
    StatusJson withHotKeys(HotKeysSection.HotKeysJson keys) {
      return new StatusJson(cluster, active, published, publisherRejection, inFlight, superseded, taskCounts, progress,
          tasks, cleanups, rejectedTotal, rejected, keys, participants, cutover, cutoverStage);
    }

    /** With the cluster's participants (the reports on ring.participants). */
    StatusJson withParticipants(ParticipantsSection.ParticipantsJson reported) {
      return new StatusJson(cluster, active, published, publisherRejection, inFlight, superseded, taskCounts, progress,
          tasks, cleanups, rejectedTotal, rejected, hotKeys, reported, cutover, cutoverStage);
    }
  }

  /** A rate or an ETA that is not known (-1) is null. */
  record ProgressJson(int tasks, int verified, long copiedBytes, long estimatedBytes, double fraction,
      Double bytesPerSecond, Long etaSeconds, Map<String, Integer> waiting) {
    static ProgressJson of(EpochProgress p) {
      return new ProgressJson(p.tasks(), p.verified(), p.copiedBytes(), p.estimatedBytes(), p.fraction(),
          p.bytesPerSecond() < 0 ? null : p.bytesPerSecond(), p.etaSeconds() < 0 ? null : p.etaSeconds(),
          p.waiting());
    }
  }

  record TaskJson(String id, String kind, String rangeStart, String rangeEnd, double keyspaceFraction,
      List<String> sources, String target, String targetZone, long estimatedBytes, String state, long copiedBytes,
      long epoch, String detail) {
    static TaskJson of(TaskView t) {
      RangeCopyTask task = t.task();
      return new TaskJson(task.getTaskId(), task.getKind().name(), HexFormat.of().toHexDigits(task.getRangeStart()),
          HexFormat.of().toHexDigits(task.getRangeEnd()),
          RingRange.of(task.getRangeStart(), task.getRangeEnd()).fraction(), task.getSources(), task.getTarget(),
          task.getTargetZone(), task.getEstimatedBytes(), t.state().name(),
          t.status() == null ? 0 : t.status().getCopiedBytes(), task.getEpoch(), why(t));
    }
  }

  record RejectedJson(String time, String requestId, String key, String reason) {}

  static StatusJson statusJson(ClusterView view, long nowMillis) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    view.countsByState().forEach((state, n) -> counts.put(state.name(), n));
    return new StatusJson(view.clusterId(), EpochJson.of(view.active()), EpochJson.of(view.published()),
        EpochJson.of(view.publisherRejection()), EpochJson.of(view.inFlight()),
        view.superseded().stream().map(EpochJson::of).toList(), counts,
        view.inFlight() == null ? null : ProgressJson.of(EpochProgress.of(view.tasks(), nowMillis)),
        view.tasks().stream().map(TaskJson::of).toList(), view.cleanups().stream().map(TaskJson::of).toList(),
        view.rejectedTotal(), view.rejected().stream().map(r -> new RejectedJson(Text.time(r.getTimestampMillis()),
            r.getRequestId(), r.getKey(), r.getReason())).toList(), HotKeysSection.HotKeysJson.NONE,
        ParticipantsSection.ParticipantsJson.NONE, EpochJson.of(view.cutover()),
        view.cutover() == null ? null : view.cutover().getStage());
  }

  /** The publisher's last transition record of the latest epoch: where its cutover stands. */
  static String cutoverText(EpochRecord c) {
    String at = Text.time(c.getTimestampMillis());
    return switch (c.getState()) {
      case STAGED -> String.format(Locale.ROOT, "epoch %d in stage %s since %s: writes go to both rings, reads to the "
          + "%s one", c.getEpoch(), c.getStage() != null && c.getStage() == 1 ? "WRITE_BOTH_READ_OLD"
              : "WRITE_BOTH_READ_NEW", at, c.getStage() != null && c.getStage() == 1 ? "previous" : "new");
      case CONVERGED -> String.format(Locale.ROOT, "epoch %d: %s (at %s)", c.getEpoch(), c.getReason(), at);
      case FENCE_CUTOVER -> String.format(Locale.ROOT, "epoch %d %s (at %s)", c.getEpoch(), c.getReason(), at);
      case REVERTED -> String.format(Locale.ROOT, "epoch %d REVERTED at %s: %s", c.getEpoch(), at, c.getReason());
      default -> c.getState() + " epoch " + c.getEpoch();
    };
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
    if (e.getState() == EpochState.CANCELLED) {
      return String.format(Locale.ROOT, "epoch %d CANCELLED (plan %s): %s", e.getEpoch(), e.getPlanVersion(),
          e.getReason());
    }
    return String.format(Locale.ROOT, "epoch %d %s (plan %s, %d members, checksum %s)%s", e.getEpoch(), e.getState(),
        e.getPlanVersion(), e.getMembers().size(), Text.checksumPrefix(e.getTargetChecksum()), summary);
  }
}
