package io.ringshift.orchestrator.admin;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * One cluster as the topics describe it: its audit log, the active epoch, the epoch in flight with its tasks and
 * their latest states, and the latest rejected requests. Pure: built from records already read.
 *
 * <p>All epoch records of a cluster share one key (the cluster id) and so one partition: log order is the order
 * they were written, which is what "latest" means here. Tasks and statuses come as the current value of each
 * task id ({@link ControlPlaneAdmin#latestPerKey}): a re-plan keeps the ids of the tasks it keeps and deletes
 * the others, so the tasks of the epoch in flight are exactly the live tasks of that epoch.
 *
 * @param history every epoch record of the cluster, in log order
 * @param active the latest READY (or PUBLISHED) epoch record, or null
 * @param inFlight the latest PLANNED record of an epoch newer than the active one, or null
 * @param superseded the SUPERSEDED records of the in-flight epoch (abandoned plans), in log order
 * @param tasks the live COPY and REPAIR tasks of the epoch in flight, ordered by range start then target
 * @param cleanups the live CLEANUP tasks of the active epoch, and those of older epochs that are not VERIFIED yet,
 *     ordered by epoch, range start and target
 * @param rejected the latest rejected requests of the cluster, oldest first
 * @param rejectedTotal how many rejected requests of the cluster the topic holds
 */
public record ClusterView(
    String clusterId,
    List<EpochRecord> history,
    EpochRecord active,
    EpochRecord inFlight,
    List<EpochRecord> superseded,
    List<TaskView> tasks,
    List<TaskView> cleanups,
    List<RejectedEvent> rejected,
    int rejectedTotal) {

  /**
   * A task of the in-flight plan and its latest reported state.
   *
   * @param status the latest status a worker reported, or null when none has yet (shown as PENDING)
   */
  public record TaskView(RangeCopyTask task, TaskStatus status) {
    public TaskState state() {
      return status == null ? TaskState.PENDING : status.getState();
    }
  }

  public ClusterView {
    history = List.copyOf(history);
    superseded = List.copyOf(superseded);
    tasks = List.copyOf(tasks);
    cleanups = List.copyOf(cleanups);
    rejected = List.copyOf(rejected);
  }

  /** The view of {@code clusterId} from what {@link ControlPlaneAdmin#read} read (parts not read are empty). */
  public static ClusterView of(String clusterId, ControlPlaneAdmin.Contents contents, int rejectedLimit) {
    return of(clusterId, contents.epochs(), contents.tasks(), contents.statuses(), contents.rejected(),
        rejectedLimit);
  }

  /**
   * The view of {@code clusterId}.
   *
   * @param liveTasks the current task of each task id, tombstoned ones removed
   * @param statuses the current status of each task id
   */
  public static ClusterView of(String clusterId, List<EpochRecord> epochs, List<RangeCopyTask> liveTasks,
      List<TaskStatus> statuses, List<RejectedEvent> allRejected, int rejectedLimit) {
    List<EpochRecord> history = epochs.stream().filter(e -> clusterId.equals(e.getClusterId())).toList();
    EpochRecord active = null;
    for (EpochRecord e : history) {
      if (isActiveState(e.getState()) && (active == null || e.getEpoch() >= active.getEpoch())
          && !rejectedIn(history, e)) {
        active = e;
      }
    }
    long activeEpoch = active == null ? 0 : active.getEpoch();
    EpochRecord inFlight = null;
    for (EpochRecord e : history) {
      if (e.getState() == EpochState.PLANNED && e.getEpoch() > activeEpoch) {
        inFlight = e; // a re-plan of the same epoch comes later in the log and replaces the first plan
      }
    }
    // An epoch that is READY is no longer in flight, even if a PLANNED record of it comes later; nor is one whose last
    // record is SUPERSEDED with no later plan (a rollback after a rejection, docs/orchestrator.md) or CANCELLED.
    if (inFlight != null) {
      long epoch = inFlight.getEpoch();
      EpochRecord last = null;
      for (EpochRecord e : history) {
        // The publisher's transition records (STAGED, CONVERGED, FENCE_CUTOVER, REVERTED) say how the plan is cut
        // over, not whether it is still in flight: the orchestrator's own last word decides.
        if (e.getEpoch() == epoch && !isTransitionState(e.getState())) {
          last = e;
        }
      }
      if (history.stream().anyMatch(e -> e.getEpoch() == epoch && isActiveState(e.getState())
          && !rejectedIn(history, e)) || (last != null && (last.getState() == EpochState.SUPERSEDED
          || last.getState() == EpochState.CANCELLED))) {
        inFlight = null;
      }
    }
    List<EpochRecord> superseded = new ArrayList<>();
    List<TaskView> tasks = new ArrayList<>();
    if (inFlight != null) {
      long epoch = inFlight.getEpoch();
      history.stream().filter(e -> e.getEpoch() == epoch && e.getState() == EpochState.SUPERSEDED)
          .forEach(superseded::add);
      tasks = tasksOf(clusterId, t -> t.getEpoch() == epoch && t.getKind() != TaskKind.CLEANUP, liveTasks,
          statuses);
    }
    long activeEpochNumber = activeEpoch;
    List<TaskView> cleanups = tasksOf(clusterId, t -> t.getKind() == TaskKind.CLEANUP
        && t.getEpoch() <= activeEpochNumber, liveTasks, statuses).stream()
        .filter(v -> v.task().getEpoch() == activeEpochNumber || v.state() != TaskState.VERIFIED)
        .sorted(Comparator.comparingLong(v -> v.task().getEpoch()))
        .toList();
    List<RejectedEvent> rejected = allRejected.stream()
        .filter(r -> clusterId.equals(r.getClusterId()))
        .sorted(Comparator.comparingLong(RejectedEvent::getTimestampMillis))
        .toList();
    int total = rejected.size();
    List<RejectedEvent> latest = rejected.subList(Math.max(0, total - Math.max(0, rejectedLimit)), total);
    return new ClusterView(clusterId, history, active, inFlight, superseded, tasks, cleanups, latest, total);
  }

  /** Whether {@code state} is one of the publisher's transition records (EpochRecord v5). */
  public static boolean isTransitionState(EpochState state) {
    return state == EpochState.STAGED || state == EpochState.CONVERGED || state == EpochState.FENCE_CUTOVER
        || state == EpochState.REVERTED;
  }

  /**
   * The publisher's last transition record (STAGED, CONVERGED, FENCE_CUTOVER or REVERTED, docs/protocol.md) of an
   * epoch at or after the published one: where the latest change's cutover stands. Null when there is none.
   */
  public EpochRecord cutover() {
    EpochRecord p = published();
    long from = p == null ? Long.MIN_VALUE : p.getEpoch();
    EpochRecord last = null;
    for (EpochRecord e : history) {
      if (isTransitionState(e.getState()) && e.getEpoch() >= from) {
        last = e;
      }
    }
    return last;
  }

  /** The latest PUBLISHED epoch record: what clients route by. Null when the publisher published nothing yet. */
  public EpochRecord published() {
    EpochRecord published = null;
    for (EpochRecord e : history) {
      if (e.getState() == EpochState.PUBLISHED && (published == null || e.getEpoch() > published.getEpoch())) {
        published = e;
      }
    }
    return published;
  }

  /**
   * The publisher's latest refusal of an epoch it did not publish afterwards (a REJECTED record of an epoch newer
   * than the latest PUBLISHED one), or null. Clients stay on the published epoch; the orchestrator rolls the rejected
   * epoch back and plans again ({@link #replannedAfter}).
   */
  public EpochRecord publisherRejection() {
    EpochRecord published = published();
    long publishedEpoch = published == null ? 0 : published.getEpoch();
    EpochRecord rejection = null;
    for (EpochRecord e : history) {
      if (e.getState() == EpochState.REJECTED && e.getEpoch() > publishedEpoch) {
        rejection = e;
      }
    }
    return rejection;
  }

  /**
   * The first PLANNED record after {@code rejection} that names it as the epoch it replaces (the orchestrator's re-plan
   * after rolling back), or null when there is none (yet, or the changes were withdrawn).
   */
  public EpochRecord replannedAfter(EpochRecord rejection) {
    int at = history.indexOf(rejection);
    for (int i = at + 1; i < history.size(); i++) {
      EpochRecord e = history.get(i);
      if (e.getState() == EpochState.PLANNED && e.getEpoch() > rejection.getEpoch()
          && Long.valueOf(rejection.getEpoch()).equals(e.getSupersedes())) {
        return e;
      }
    }
    return null;
  }

  /**
   * The orchestrator's active ring, which it plans every change from: the latest READY (or PUBLISHED) epoch that
   * is not a failure epoch. A failure epoch is published at once but its filling replicas are not complete, so the
   * orchestrator keeps planning from the ring before it; it is recognised by the plan that follows it, which names
   * the same FAIL request as its cause (docs/orchestrator.md). Null when no epoch is READY.
   */
  public EpochRecord planningBase() {
    EpochRecord base = null;
    for (EpochRecord e : history) {
      if (isActiveState(e.getState()) && (base == null || e.getEpoch() > base.getEpoch()) && !isFailureEpoch(e)
          && !rejectedIn(history, e)) {
        base = e;
      }
    }
    return base;
  }

  /** Whether a READY record is a failure epoch: a PLANNED record of the next epoch names the same FAIL request. */
  private boolean isFailureEpoch(EpochRecord ready) {
    if (ready.getCause() == null || ready.getCause().getAction() != io.ringshift.schemas.avro.MembershipAction.FAIL) {
      return false;
    }
    String request = ready.getCause().getRequestId();
    return history.stream().anyMatch(e -> e.getEpoch() == ready.getEpoch() + 1
        && e.getState() == EpochState.PLANNED && e.getCause() != null
        && request.equals(e.getCause().getRequestId()));
  }

  /**
   * Whether the publisher rejected {@code ready}: the orchestrator rolled it back (docs/orchestrator.md), so it is
   * neither active nor a base to plan from.
   */
  static boolean rejectedIn(List<EpochRecord> history, EpochRecord ready) {
    return ready.getState() == EpochState.READY && history.stream().anyMatch(e -> e.getState() == EpochState.REJECTED
        && e.getEpoch() == ready.getEpoch() && java.util.Objects.equals(e.getTargetChecksum(),
            ready.getTargetChecksum()));
  }

  public static boolean isActiveState(EpochState state) {
    return state == EpochState.READY || state == EpochState.PUBLISHED;
  }

  /** The live tasks of the cluster that {@code wanted} accepts, each with its current status. */
  private static List<TaskView> tasksOf(String clusterId, Predicate<RangeCopyTask> wanted,
      List<RangeCopyTask> liveTasks, List<TaskStatus> statuses) {
    Map<String, TaskStatus> statusById = new LinkedHashMap<>();
    statuses.forEach(s -> statusById.put(s.getTaskId(), s));
    List<TaskView> tasks = new ArrayList<>();
    for (RangeCopyTask t : liveTasks) {
      if (clusterId.equals(t.getClusterId()) && wanted.test(t)) {
        tasks.add(new TaskView(t, statusById.get(t.getTaskId())));
      }
    }
    tasks.sort(Comparator.<TaskView, Long>comparing(v -> v.task().getRangeStart(), Long::compareUnsigned)
        .thenComparing(v -> v.task().getTarget()));
    return tasks;
  }

  /** Tasks of the epoch in flight per state, in the states' declared order; states with no task are left out. */
  public Map<TaskState, Integer> countsByState() {
    Map<TaskState, Integer> counts = new EnumMap<>(TaskState.class);
    tasks.forEach(t -> counts.merge(t.state(), 1, Integer::sum));
    return counts;
  }

  public boolean exists() {
    return !history.isEmpty();
  }
}
