package io.ringshift.worker.internal;

import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * This worker's share of its group's byte budgets ({@code ring.worker-budgets}; docs/worker.md, "Group budgets").
 *
 * <p>A budget holds for the whole group: all workers together read at most {@code B} bytes per second from one
 * source node, and copy at most {@code L} from one zone to another. Each worker takes an equal share of a budget
 * among the workers copying over it right now: {@code B / n}, where {@code n} counts the workers whose latest
 * status of some task from that source (or over that link) is COPYING and at most {@link #FRESH_MILLIS} old, plus
 * this worker while it sends from there. Statuses are on {@code ring.task-status}, which every worker reads, so
 * every worker of the group computes the same {@code n} within about one status interval, without a protocol of its
 * own; the shares follow the group as it changes (a worker that joins and copies counts from its first status, one
 * that stops or dies stops counting once its task is taken over or its last status grows stale). Dividing among the
 * workers that copy, not among all live ones, gives a source's whole budget to a single worker that copies from it.
 *
 * <p>While the counts settle (a worker just started copying and the others have not read its status yet) the
 * group can exceed a budget for about one status interval (2 s by default); a worker that died mid-copy keeps
 * counting for {@link #FRESH_MILLIS}, during which the others stay below the budget, never above. Only snapshot
 * copies (COPYING) count: a task that finished its copy and follows the source's change feed (CAUGHT_UP), or
 * drains it at its fence, sends through its own worker's share but is not counted by the others, so the group may
 * exceed a source's budget by that feed traffic, which is at most the rate of new writes to those ranges.
 */
public final class GroupShares {
  /** A status older than this no longer counts its worker as copying. */
  static final long FRESH_MILLIS = 10_000;

  private final String groupId;
  private final String workerId;
  private final ControlState state;
  private final Clock clock;
  private volatile Copying copying = new Copying(Map.of(), Map.of());

  /** Who copies from where: source node id, or zone link, to the ids of the workers copying over it. */
  private record Copying(Map<String, Set<String>> bySource, Map<String, Set<String>> byLink) {}

  /** A worker's share of one budget, and what it is made of (for status messages and metrics). */
  public record Share(long bytesPerSecond, long budget, int workers) {
    /** No budget: unlimited. */
    static final Share NONE = new Share(0, 0, 0);

    public boolean limited() {
      return bytesPerSecond > 0;
    }
  }

  public GroupShares(String groupId, String workerId, ControlState state, Clock clock) {
    this.groupId = groupId;
    this.workerId = workerId;
    this.state = state;
    this.clock = clock;
  }

  /** The link key of a copy from {@code fromZone} to {@code toZone}, as in {@code zoneLinkBytesPerSecond}. */
  public static String link(String fromZone, String toZone) {
    return fromZone + ">" + toZone;
  }

  /** Recounts the workers copying from each source and over each link, from the latest task statuses. */
  public void refresh() {
    if (state.budgets(groupId).isEmpty()) {
      copying = new Copying(Map.of(), Map.of());
      return;
    }
    long now = clock.millis();
    // Node ids are unique only per cluster, and ring.task-status is shared by every cluster: another cluster's
    // node-03 is not this worker's. Where this worker has a status of its own from a source, only statuses of the
    // clusters it copies from there count (before it has one, all do: at worst its share is smaller, never larger).
    Map<String, Set<String>> ownClusters = new HashMap<>();
    for (TaskStatus status : state.statuses()) {
      if (workerId.equals(status.getWorkerId()) && status.getSource() != null && status.getClusterId() != null) {
        ownClusters.computeIfAbsent(status.getSource(), s -> new HashSet<>()).add(status.getClusterId());
      }
    }
    Map<String, Set<String>> bySource = new HashMap<>();
    Map<String, Set<String>> byLink = new HashMap<>();
    for (TaskStatus status : state.statuses()) {
      // Freshness by when this worker read the status, not by the writer's clock, which may be skewed.
      long readAt = state.statusReadAt(status.getTaskId());
      if (status.getState() != TaskState.COPYING || status.getSource() == null || status.getWorkerId() == null
          || readAt == Long.MIN_VALUE || now - readAt > FRESH_MILLIS) {
        continue;
      }
      String source = status.getSource();
      Set<String> clusters = ownClusters.get(source);
      if (clusters != null && !clusters.contains(status.getClusterId())) {
        continue;
      }
      String worker = status.getWorkerId();
      bySource.computeIfAbsent(source, s -> new HashSet<>()).add(worker);
      Optional<RangeCopyTask> task = state.lastRecord(status.getTaskId());
      if (task.isPresent() && task.get().getTargetZone() != null) {
        linkOf(task.get().getClusterId(), source, task.get().getTargetZone())
            .ifPresent(l -> byLink.computeIfAbsent(l, k -> new HashSet<>()).add(worker));
      }
    }
    copying = new Copying(bySource, byLink);
  }

  /** The zone link of a copy of {@code clusterId} from {@code source} to a target in {@code targetZone}. */
  public Optional<String> linkOf(String clusterId, String source, String targetZone) {
    return state.zoneOf(clusterId, source).map(z -> link(z, targetZone));
  }

  /** This worker's share of {@code source}'s budget; {@code active}: this worker sends from it now. */
  public Share sourceShare(String source, boolean active) {
    return state.budgets(groupId).map(b -> share(lookup(b.getSourceBytesPerSecond(), source,
        b.getPerSourceBytesPerSecond()), copying.bySource().get(source), active)).orElse(Share.NONE);
  }

  /** This worker's share of {@code link}'s budget; {@code active}: this worker copies over it now. */
  public Share linkShare(String link, boolean active) {
    return state.budgets(groupId).map(b -> share(lookup(b.getZoneLinkBytesPerSecond(), link,
        b.getPerZoneLinkBytesPerSecond()), copying.byLink().get(link), active)).orElse(Share.NONE);
  }

  private Share share(long budget, Set<String> workers, boolean active) {
    if (budget <= 0) {
      return Share.NONE;
    }
    Set<String> counted = workers == null ? new HashSet<>() : new HashSet<>(workers);
    if (active) {
      counted.add(workerId);
    }
    int n = Math.max(1, counted.size());
    return new Share(Math.max(1, budget / n), budget, n);
  }

  /** The value for {@code key} in an Avro map (whose keys may be Utf8), else {@code fallback}. */
  private static long lookup(Map<? extends CharSequence, Long> overrides, String key, long fallback) {
    if (overrides != null) {
      for (Map.Entry<? extends CharSequence, Long> e : overrides.entrySet()) {
        if (e.getKey().toString().equals(key)) {
          return e.getValue();
        }
      }
    }
    return fallback;
  }
}
