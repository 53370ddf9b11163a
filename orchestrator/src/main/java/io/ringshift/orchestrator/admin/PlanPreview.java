package io.ringshift.orchestrator.admin;

import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.TaskState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a membership change would do if it were requested now, planned from the topics exactly as the
 * orchestrator would plan it, without writing anything: the base it starts from, the epoch planned, the tasks,
 * and the totals per (preferred source zone, target zone).
 *
 * @param base the ring the plan starts from: the active epoch's, or for a queued change the target of the epoch
 *     in flight
 * @param basis why the plan starts there
 * @param inFlight the epoch in flight (that the change waits for, or that a FAIL re-plans), or null
 * @param alreadyVerified for a re-plan, how many of its tasks the old plan already has VERIFIED (kept, not
 *     issued again)
 * @param clusterBytes the cluster's logical size for byte figures; 0 shows keyspace fractions only
 */
public record PlanPreview(String clusterId, RingSnapshot base, Basis basis, Long inFlight, EpochPlanner.Plan plan,
    int alreadyVerified, long clusterBytes) {

  /** Where the orchestrator would plan the change from. */
  public enum Basis {
    /** Nothing is in flight: planned from the active epoch at once. */
    ACTIVE,
    /** An epoch is in flight: the change waits, and is planned from that epoch's target once it is READY. */
    QUEUED,
    /**
     * A FAIL of a node that only the epoch in flight adds (a joining node): that epoch is re-planned from the
     * active ring without the node, under the same number.
     */
    REPLAN,
    /**
     * A FAIL of a node clients route to: a failure epoch (the base without the dead nodes, its new replicas marked
     * filling) is published at once as epoch {@code target - 1}, superseding the plan in flight if any, and the
     * rest (the change in flight, if any, and the repair) is planned from the base as the next epoch.
     */
    FAILURE
  }

  /** Totals of the tasks from one zone to another; the source zone is that of each task's preferred source. */
  public record ZoneFlow(String sourceZone, String targetZone, int tasks, double keyspaceFraction, long bytes) {}

  /**
   * Plans {@code change} as the orchestrator's state machine would (docs/orchestrator.md). The base is the
   * orchestrator's active ring: the latest READY epoch that is not a failure epoch. With nothing in flight a change
   * is planned from it at the next epoch. While an epoch is in flight, a change other than FAIL waits and is
   * planned from that epoch's target. A FAIL of a node of the base publishes a failure epoch at once (the base
   * without every node that died since, numbered as the epoch in flight or the next) and plans the rest from the
   * base as the epoch after it; a FAIL of a node only the plan in flight adds re-plans that epoch under its number.
   *
   * @throws AdminException {@link AdminException.Reason#BAD_REQUEST}, or {@link RingException}, with the reason the
   *     orchestrator would give
   */
  public static PlanPreview of(MembershipChange change, ClusterView view, long clusterBytes) {
    EpochRecord baseRecord = view.planningBase();
    if (baseRecord == null) {
      throw AdminException.badRequest("cluster " + view.clusterId() + " has no READY epoch to plan from");
    }
    String clusterId = view.clusterId();
    String node = change.nodeId();
    boolean fail = change.action() == MembershipChange.Action.FAIL;
    RingSnapshot base = EpochRecords.ring(baseRecord);
    EpochRecord inFlight = view.inFlight();
    if (inFlight == null) {
      List<Member> members = applyTo(change, clusterId, base.members());
      if (fail && EpochPlanner.keepsReplicaZones(base, List.of(node))) {
        EpochPlanner.Plan plan = EpochPlanner.plan(base, members, base.epoch() + 2, 0, Set.of(node), clusterBytes);
        return new PlanPreview(clusterId, base, Basis.FAILURE, null, plan, 0, clusterBytes);
      }
      EpochPlanner.Plan plan = EpochPlanner.plan(base, members, base.epoch() + 1, 0,
          fail ? Set.of(node) : Set.of(), clusterBytes);
      return new PlanPreview(clusterId, base, Basis.ACTIVE, null, plan, 0, clusterBytes);
    }
    RingSnapshot target = EpochRecords.ring(inFlight);
    if (!fail) {
      List<Member> members = applyTo(change, clusterId, target.members());
      EpochPlanner.Plan plan = EpochPlanner.plan(target, members, target.epoch() + 1, 0, Set.of(), clusterBytes);
      return new PlanPreview(clusterId, target, Basis.QUEUED, inFlight.getEpoch(), plan, 0,
          clusterBytes);
    }
    Set<String> dead = deadNodes(view.history(), base.epoch());
    if (dead.contains(node)) {
      throw AdminException.badRequest("FAIL of node " + node + ": it already failed");
    }
    if (target.member(node) == null && base.member(node) == null) {
      throw AdminException.badRequest("FAIL of node " + node + ": it is not a member of cluster " + clusterId);
    }
    List<Member> members = new ArrayList<>(target.members());
    members.removeIf(m -> m.id().equals(node));
    dead.add(node);
    long publishedFailures = inFlight.getEpoch() - base.epoch() - 1;
    boolean everyFailurePublished = publishedFailures == failedMembers(base, dead).size() - 1;
    if (base.member(node) != null && everyFailurePublished && EpochPlanner.keepsReplicaZones(base, dead)) {
      EpochPlanner.Plan plan = EpochPlanner.plan(base, members, target.epoch() + 1, 0, dead, clusterBytes);
      return new PlanPreview(clusterId, base, Basis.FAILURE, inFlight.getEpoch(), plan, 0,
          clusterBytes);
    }
    int planVersion = (inFlight.getPlanVersion() == null ? 0 : inFlight.getPlanVersion()) + 1;
    EpochPlanner.Plan plan = EpochPlanner.plan(base, members, target.epoch(), planVersion, dead, clusterBytes);
    Set<String> verified = new HashSet<>();
    view.tasks().stream().filter(t -> t.state() == TaskState.VERIFIED).forEach(t -> verified.add(t.task().getTaskId()));
    int kept = (int) plan.tasks().stream().filter(t -> verified.contains(t.taskId())).count();
    return new PlanPreview(clusterId, base, Basis.REPLAN, inFlight.getEpoch(), plan, kept,
        clusterBytes);
  }

  /** The dead nodes that are members of the base ring. */
  private static List<String> failedMembers(RingSnapshot base, java.util.Collection<String> dead) {
    return dead.stream().filter(id -> base.member(id) != null).toList();
  }

  /**
   * The nodes that failed since the base epoch, in the order they failed: the node of every PLANNED record of a later epoch caused by a
   * FAIL (failure epochs, the plans after them and re-plans all name the FAIL that made them).
   */
  public static Set<String> deadNodes(List<EpochRecord> history, long baseEpoch) {
    Set<String> dead = new java.util.LinkedHashSet<>();
    for (EpochRecord e : history) {
      if (e.getEpoch() > baseEpoch && e.getState() == EpochState.PLANNED && e.getCause() != null
          && e.getCause().getAction() == MembershipAction.FAIL) {
        dead.add(e.getCause().getNodeId());
      }
    }
    return dead;
  }

  /**
   * The membership after {@code change}, by the orchestrator's rules.
   *
   * @throws AdminException {@link AdminException.Reason#BAD_REQUEST} when the orchestrator would refuse the change,
   *     with the reason it would give
   */
  public static List<Member> applyTo(MembershipChange change, String clusterId, List<Member> members) {
    MembershipChange.Outcome outcome = change.applyTo(clusterId, members);
    if (outcome instanceof MembershipChange.Refused refused) {
      throw AdminException.badRequest(refused.reason());
    }
    return ((MembershipChange.Applied) outcome).members();
  }

  /** The tasks in ring order. */
  public List<PlannedTask> sortedTasks() {
    List<PlannedTask> tasks = new ArrayList<>(plan.tasks());
    tasks.sort(Comparator.<PlannedTask, Long>comparing(PlannedTask::rangeStart, Long::compareUnsigned)
        .thenComparing(PlannedTask::target));
    return tasks;
  }

  /** Task count, keyspace and bytes per (preferred source zone, target zone), sorted by zone names. */
  public List<ZoneFlow> flows() {
    Map<String, ZoneFlow> flows = new LinkedHashMap<>();
    for (PlannedTask t : plan.tasks()) {
      String from = t.sources().isEmpty() ? "(no live source)" : zoneOf(t.sources().get(0));
      String key = from + "\u0000" + t.targetZone();
      ZoneFlow old = flows.get(key);
      flows.put(key, old == null
          ? new ZoneFlow(from, t.targetZone(), 1, t.keyspaceFraction(), t.estimatedBytes())
          : new ZoneFlow(from, t.targetZone(), old.tasks() + 1, old.keyspaceFraction() + t.keyspaceFraction(),
              old.bytes() + t.estimatedBytes()));
    }
    List<ZoneFlow> list = new ArrayList<>(flows.values());
    list.sort(Comparator.comparing(ZoneFlow::sourceZone).thenComparing(ZoneFlow::targetZone));
    return list;
  }

  /** Sources are old replicas: members of the ring the plan starts from. */
  private String zoneOf(String node) {
    var member = base.member(node);
    return member == null ? "(unknown zone)" : member.zone();
  }

  /** Task count per kind. */
  public Map<PlannedTask.Kind, Integer> kinds() {
    Map<PlannedTask.Kind, Integer> kinds = new EnumMap<>(PlannedTask.Kind.class);
    plan.tasks().forEach(t -> kinds.merge(t.kind(), 1, Integer::sum));
    return kinds;
  }
}
