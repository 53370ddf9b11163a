package io.ringshift.dashboard.internal;

import io.ringshift.dashboard.DashboardConfig.WorkerLimits;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ClusterView.TaskView;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.Participants;
import io.ringshift.ring.Member;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.FillingRange;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the page shows of one cluster, as a tree of plain values for JSON: the published ring's identity (the page
 * fetches its geometry when it changes), the epochs as a timeline, the epoch in flight with its progress and tasks,
 * the cleanups, the nodes (members, joiners, leavers, failed nodes, and what each reports), the workers' throttles,
 * the clients' epochs and the latest rejected requests. Pure: built from records already read and reports already
 * gathered, so a test builds it from records.
 */
public final class StateModel {
  /** Tasks of the epoch in flight listed one by one; the counts cover all of them. */
  static final int TASKS_LISTED = 200;
  /** Epoch records on the timeline, the latest. */
  static final int EPOCHS_LISTED = 200;

  private StateModel() {}

  /**
   * The state of {@code view}'s cluster at {@code nowMillis}.
   *
   * @param clusters every cluster the topics hold, for the page's selector
   * @param health what each node's {@code /health} answered, by node id (absent: not probed)
   */
  public static Map<String, Object> of(ClusterView view, List<String> clusters, long nowMillis,
      Map<String, NodeHealth.Report> health, List<WorkerLimits> workers, Map<String, Long> clients) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cluster", view.clusterId());
    out.put("clusters", clusters);
    out.put("now", nowMillis);
    out.put("exists", view.exists());
    EpochRecord published = view.published();
    RingSnapshot ring = published == null ? null : EpochRecords.ring(published);
    out.put("published", published == null ? null : epochSummary(published));
    out.put("ringKey", published == null ? null : published.getEpoch() + "-" + ring.checksumHex());
    EpochRecord inFlight = view.inFlight();
    out.put("targetKey", inFlight == null ? null : inFlight.getEpoch() + "-" + planVersion(inFlight));
    out.put("inFlight", inFlight == null ? null : inFlight(view, inFlight, nowMillis, workers));
    out.put("cleanups", counts(view.cleanups()));
    out.put("epochs", timeline(view.history()));
    out.put("nodes", nodes(view, ring, inFlight, health));
    out.put("workers", workers.stream().map(StateModel::worker).toList());
    List<Map<String, Object>> clientList = new ArrayList<>();
    new TreeMap<>(clients).forEach((name, epoch) -> clientList.add(Map.of("name", name, "epoch", epoch)));
    out.put("clients", clientList);
    List<Map<String, Object>> rejected = new ArrayList<>();
    for (RejectedEvent r : view.rejected()) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("time", r.getTimestampMillis());
      row.put("request", r.getRequestId());
      row.put("reason", r.getReason());
      rejected.add(row);
    }
    out.put("rejected", rejected);
    out.put("rejectedTotal", view.rejectedTotal());
    return out;
  }

  /**
   * The participants of {@code cluster} as the page lists them (docs/protocol.md, "The client barrier"): each one's
   * route and whether its lease holds at {@code nowMillis} (timed from its record's timestamp: a view, not the
   * publisher's barrier), the ones behind the newest route a live one has, and why changes take the fence, if they
   * must.
   */
  static Map<String, Object> participants(String cluster, List<Participants.Participant> reports, long nowMillis) {
    Participants all = Participants.of(cluster, reports);
    Participants.Participant newest = all.newest(nowMillis).orElse(null);
    Set<String> behind = new java.util.HashSet<>();
    if (newest != null) {
      all.stragglers(newest.epoch(), newest.stage(), nowMillis).forEach(p -> behind.add(p.key()));
    }
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Participants.Participant p : all.all()) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("id", p.id());
      row.put("kind", p.isNode() ? "node" : "client");
      row.put("epoch", p.epoch());
      row.put("stage", p.stage().name());
      row.put("live", p.isLive(nowMillis));
      row.put("behind", behind.contains(p.key()));
      rows.add(row);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("list", rows);
    out.put("behind", behind.size());
    out.put("fenceOnly", all.fenceOnlyReason(nowMillis, java.time.Duration.ofMinutes(10)).orElse(null));
    return out;
  }

  private static int planVersion(EpochRecord e) {
    return e.getPlanVersion() == null ? 0 : e.getPlanVersion();
  }

  private static Map<String, Object> epochSummary(EpochRecord e) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("epoch", e.getEpoch());
    out.put("state", e.getState().name());
    out.put("cause", EpochRecords.cause(e.getCause(), true));
    out.put("time", e.getTimestampMillis());
    out.put("members", e.getMembers().size());
    out.put("vnodes", e.getVnodes());
    out.put("replicas", e.getReplicas());
    out.put("checksum", AvroBytes.hex(e.getTargetChecksum()).substring(0, 12));
    out.put("filling", e.getFilling().size());
    return out;
  }

  /**
   * Every epoch's records in log order, grouped by epoch: its states with their times, its cause and outcome. The
   * outcome ({@code last}) is the last state of the epoch's life (PLANNED, STAGED, READY, PUBLISHED, CANCELLED, ...):
   * a CONVERGED record (a barrier passed) or a FENCE_CUTOVER one (how it cuts over) is listed among its states but is
   * no outcome, so an epoch whose last barrier came after its publication still reads PUBLISHED.
   */
  static List<Map<String, Object>> timeline(List<EpochRecord> history) {
    Map<Long, Map<String, Object>> byEpoch = new LinkedHashMap<>();
    for (EpochRecord e : history) {
      Map<String, Object> row = byEpoch.computeIfAbsent(e.getEpoch(), n -> {
        Map<String, Object> fresh = new LinkedHashMap<>();
        fresh.put("epoch", n);
        fresh.put("cause", EpochRecords.cause(e.getCause(), true));
        fresh.put("failure", e.getCause() != null && e.getCause().getAction() == MembershipAction.FAIL);
        fresh.put("states", new ArrayList<Map<String, Object>>());
        return fresh;
      });
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> states = (List<Map<String, Object>>) row.get("states");
      Map<String, Object> state = new LinkedHashMap<>();
      state.put("state", e.getState().name());
      state.put("time", e.getTimestampMillis());
      state.put("plan", planVersion(e));
      if (e.getReason() != null) {
        state.put("reason", e.getReason());
      }
      states.add(state);
      if (!row.containsKey("last")
          || e.getState() != EpochState.CONVERGED && e.getState() != EpochState.FENCE_CUTOVER) {
        row.put("last", e.getState().name());
      }
      row.put("cause", EpochRecords.cause(e.getCause(), true));
      if (e.getDiffSummary() != null) {
        row.put("tasks", e.getDiffSummary().getTasks());
        row.put("moved", e.getDiffSummary().getMovedReplicaFraction());
        row.put("ideal", e.getDiffSummary().getIdealMovedFraction());
      }
      if (!e.getFilling().isEmpty()) {
        row.put("filling", e.getFilling().size());
      }
    }
    List<Map<String, Object>> rows = new ArrayList<>(byEpoch.values());
    return rows.subList(Math.max(0, rows.size() - EPOCHS_LISTED), rows.size());
  }

  private static Map<String, Object> inFlight(ClusterView view, EpochRecord e, long nowMillis,
      List<WorkerLimits> workers) {
    Map<String, Object> out = epochSummary(e);
    out.put("plan", planVersion(e));
    List<TaskView> tasks = view.tasks();
    EpochProgress progress = EpochProgress.of(tasks, nowMillis);
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("tasks", progress.tasks());
    p.put("verified", progress.verified());
    p.put("copiedBytes", progress.copiedBytes());
    p.put("estimatedBytes", progress.estimatedBytes());
    p.put("fraction", progress.fraction());
    p.put("bytesPerSecond", progress.bytesPerSecond());
    p.put("etaSeconds", progress.etaSeconds());
    out.put("progress", p);
    List<Map<String, Object>> waiting = new ArrayList<>();
    progress.waiting().forEach((reason, n) -> waiting.add(Map.of("reason", reason, "tasks", n)));
    out.put("waiting", waiting.subList(0, Math.min(8, waiting.size())));
    out.put("byState", counts(tasks).get("byState"));
    out.put("stage", stage(tasks));
    long throttle = workers.stream().mapToLong(WorkerLimits::bytesPerSecond).sum();
    out.put("throttle", workers.isEmpty() ? null : throttle);
    List<TaskView> listed = new ArrayList<>(tasks);
    // Unfinished first, then by range: what still moves is what a reader looks for.
    listed.sort(Comparator.comparing((TaskView t) -> t.state() == TaskState.VERIFIED)
        .thenComparing(t -> t.task().getRangeStart(), Long::compareUnsigned));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (TaskView t : listed.subList(0, Math.min(TASKS_LISTED, listed.size()))) {
      Map<String, Object> row = new LinkedHashMap<>();
      TaskStatus s = t.status();
      row.put("id", t.task().getTaskId());
      row.put("kind", t.task().getKind().name());
      row.put("range", String.format(Locale.ROOT, "(%016x, %016x]", t.task().getRangeStart(),
          t.task().getRangeEnd()));
      row.put("sources", t.task().getSources());
      row.put("target", t.task().getTarget());
      row.put("state", t.state().name());
      row.put("copiedBytes", s == null ? 0 : s.getCopiedBytes());
      row.put("rangeBytes", s == null || s.getRangeBytes() == null ? t.task().getEstimatedBytes() : s.getRangeBytes());
      row.put("worker", s == null ? null : s.getWorkerId());
      row.put("why", s == null ? null : s.getError() != null ? s.getError() : s.getBlockedReason());
      rows.add(row);
    }
    out.put("tasks", rows);
    return out;
  }

  /** planned (no worker reported yet), copying, fencing (every task caught up, or a fence set), or verified. */
  static String stage(List<TaskView> tasks) {
    if (tasks.isEmpty() || tasks.stream().allMatch(t -> t.status() == null)) {
      return "planned";
    }
    if (tasks.stream().allMatch(t -> t.state() == TaskState.VERIFIED)) {
      return "verified";
    }
    boolean fencing = tasks.stream().anyMatch(t -> t.state() == TaskState.FENCED) || tasks.stream()
        .allMatch(t -> t.state() == TaskState.CAUGHT_UP || t.state() == TaskState.FENCED
            || t.state() == TaskState.VERIFIED);
    return fencing ? "fencing" : "copying";
  }

  private static Map<String, Object> counts(List<TaskView> tasks) {
    Map<TaskState, Integer> byState = new EnumMap<>(TaskState.class);
    tasks.forEach(t -> byState.merge(t.state(), 1, Integer::sum));
    Map<String, Integer> named = new LinkedHashMap<>();
    byState.forEach((state, n) -> named.put(state.name(), n));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("count", tasks.size());
    out.put("byState", named);
    return out;
  }

  private static Map<String, Object> worker(WorkerLimits w) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("id", w.id());
    out.put("bytesPerSecond", w.bytesPerSecond());
    out.put("perSourceBytesPerSecond", w.perSourceBytesPerSecond());
    out.put("maxTasks", w.maxTasks());
    out.put("maxTasksPerSource", w.maxTasksPerSource());
    out.put("maxTasksPerTarget", w.maxTasksPerTarget());
    out.put("activeTasks", w.activeTasks());
    return out;
  }

  /**
   * The nodes: the published ring's members with their share of primary ranges and of replica data, the nodes the
   * epoch in flight adds or removes, the nodes that failed, and any node probed besides; each with what it reported.
   */
  static List<Map<String, Object>> nodes(ClusterView view, RingSnapshot ring, EpochRecord inFlight,
      Map<String, NodeHealth.Report> health) {
    Map<String, Map<String, Object>> nodes = new LinkedHashMap<>();
    Map<String, double[]> shares = new LinkedHashMap<>();
    Map<String, Integer> filling = new LinkedHashMap<>();
    if (ring != null) {
      for (int r = 0; r < ring.tokenCount(); r++) {
        ReplicaSet replicas = ring.replicasOfRange(r);
        double fraction = ring.rangeFraction(r);
        for (int i = 0; i < replicas.size(); i++) {
          double[] share = shares.computeIfAbsent(replicas.get(i).id(), id -> new double[2]);
          share[0] += i == 0 ? fraction : 0;
          share[1] += fraction / ring.replicasPerRange();
        }
      }
      for (FillingRange f : view.published().getFilling()) {
        filling.merge(f.getNode(), 1, Integer::sum);
      }
      for (Member m : ring.members()) {
        Map<String, Object> node = node(m.id(), m.zone(), m.weight(), "member");
        node.put("tokens", ring.tokenCount(ring.memberIndex(m.id())));
        node.put("primaryShare", shares.getOrDefault(m.id(), new double[2])[0]);
        node.put("replicaShare", shares.getOrDefault(m.id(), new double[2])[1]);
        node.put("fillingRanges", filling.getOrDefault(m.id(), 0));
        nodes.put(m.id(), node);
      }
    }
    if (inFlight != null) {
      Set<String> target = new LinkedHashSet<>();
      for (var spec : inFlight.getMembers()) {
        target.add(spec.getId());
        Map<String, Object> node = nodes.get(spec.getId());
        if (node == null) {
          nodes.put(spec.getId(), node(spec.getId(), spec.getZone(), spec.getWeight(), "joining"));
        } else if (((Number) node.get("weight")).doubleValue() != spec.getWeight()) {
          node.put("role", "reweighting");
          node.put("targetWeight", spec.getWeight());
        }
      }
      for (Map.Entry<String, Map<String, Object>> n : nodes.entrySet()) {
        if (!target.contains(n.getKey())) {
          n.getValue().put("role", "leaving");
        }
      }
    }
    for (EpochRecord e : view.history()) {
      if (e.getCause() != null && e.getCause().getAction() == MembershipAction.FAIL
          && e.getState() == EpochState.PUBLISHED && !nodes.containsKey(e.getCause().getNodeId())) {
        nodes.put(e.getCause().getNodeId(), node(e.getCause().getNodeId(), null, 0, "failed"));
      }
    }
    for (String id : new java.util.TreeSet<>(health.keySet())) {
      nodes.computeIfAbsent(id, n -> node(n, health.get(n).zone(), 0, "not a member"));
    }
    for (Map.Entry<String, Map<String, Object>> n : nodes.entrySet()) {
      NodeHealth.Report report = health.get(n.getKey());
      Map<String, Object> node = n.getValue();
      node.put("health", report == null ? "unknown" : report.up() ? "up" : "down");
      if (report != null && report.up()) {
        node.put("keys", report.keys());
        node.put("fences", report.fences());
        node.put("ringEpoch", report.ringEpoch());
        if (node.get("zone") == null) {
          node.put("zone", report.zone());
        }
      } else if (report != null) {
        node.put("error", report.error());
      }
    }
    return new ArrayList<>(nodes.values());
  }

  private static Map<String, Object> node(String id, String zone, double weight, String role) {
    Map<String, Object> node = new LinkedHashMap<>();
    node.put("id", id);
    node.put("zone", zone);
    node.put("weight", weight);
    node.put("role", role);
    return node;
  }
}
