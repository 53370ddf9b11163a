package io.ringshift.orchestrator;

import io.ringshift.ring.Member;
import io.ringshift.ring.RangeChange;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Plans an epoch: the target ring for a membership, the diff from the active ring, the range-copy tasks that
 * move exactly the changed ranges, and the cleanup tasks that delete them from the nodes that lose them. Pure:
 * no Kafka, no clock, no I/O.
 *
 * <p>One copy task per (changed range, new replica), as the diff reports it; adjacent ranges with the same
 * target, kind and source list are coalesced into one task, so a join at 120 x 256 with R = 3 yields a few
 * hundred tasks rather than thousands. Sources are the old replicas of the range that are still alive, those in
 * the target's zone first (a same-zone copy crosses no zone boundary), then the others in their old preference
 * order. A range that lost a replica to a dead node is a REPAIR: it is never planned as a copy from the dead
 * node.
 *
 * <p>One cleanup task per (changed range, old replica that is not a new one and is not dead), coalesced by the
 * same rule: its target is the node to delete from and its sources are the range's new replicas in order, all
 * of which must be VERIFIED and healthy before the delete. A dead node gets none (there is nothing to reach).
 */
public final class EpochPlanner {
  private EpochPlanner() {}

  /**
   * The result of planning.
   *
   * @param target the target ring
   * @param diff its diff from the active ring
   * @param tasks the COPY and REPAIR tasks: the epoch is READY when all of them are VERIFIED
   * @param cleanupTasks the CLEANUP tasks, emitted once the epoch is READY; never counted for READY
   */
  public record Plan(RingSnapshot target, RingDiff diff, int planVersion, List<PlannedTask> tasks,
      List<PlannedTask> cleanupTasks) {
    public Plan {
      tasks = List.copyOf(tasks);
      cleanupTasks = List.copyOf(cleanupTasks);
    }

    /** Estimated bytes of the COPY and REPAIR tasks (what the epoch moves). */
    public long estimatedBytes() {
      return tasks.stream().mapToLong(PlannedTask::estimatedBytes).sum();
    }
  }

  /**
   * Whether {@code active} without the {@code dead} nodes still spans at least R zones. Only then may a failure be
   * published before its repair (docs/orchestrator.md): with at least R zones, removing a node never takes another
   * survivor out of a range's replicas (docs/placement.md section 7), so every survivor that replicated a range in
   * the active ring still does, kept receiving its writes, and is complete. With fewer zones a survivor can leave a
   * range in the failure epoch, miss writes there, and come back later looking complete. Derived from the
   * members' zones: no ring is built.
   */
  public static boolean keepsReplicaZones(RingSnapshot active, Collection<String> dead) {
    Set<String> zones = new HashSet<>();
    for (Member m : active.members()) {
      if (!dead.contains(m.id())) {
        zones.add(m.zone());
      }
    }
    return zones.size() >= active.replicas();
  }

  /**
   * Plans the move from {@code active} to a ring of {@code targetMembers} at {@code epoch}.
   *
   * @param deadNodes nodes confirmed dead: never a source, ranges they held become REPAIR tasks, and they get no
   *     cleanup task
   * @param clusterBytes the cluster's logical data size, to estimate each task's bytes as keyspace fraction x
   *     size; 0 when unknown (estimates are then 0)
   * @throws io.ringshift.ring.RingException when the target membership is invalid
   */
  public static Plan plan(
      RingSnapshot active,
      Collection<Member> targetMembers,
      long epoch,
      int planVersion,
      Set<String> deadNodes,
      long clusterBytes) {
    RingSnapshot target = active.toBuilder().epoch(epoch).members(targetMembers).build();
    RingDiff diff = active.diffTo(target);
    Map<String, Member> targetById =
        target.members().stream().collect(Collectors.toMap(Member::id, Function.identity()));
    Map<String, Member> activeById =
        active.members().stream().collect(Collectors.toMap(Member::id, Function.identity()));
    Coalescer copies = new Coalescer(active.clusterId(), epoch, clusterBytes);
    Coalescer cleanups = new Coalescer(active.clusterId(), epoch, clusterBytes);
    for (RangeChange change : diff.changes()) {
      boolean lostToDeadNode = change.removed().stream().anyMatch(deadNodes::contains);
      PlannedTask.Kind kind = lostToDeadNode ? PlannedTask.Kind.REPAIR : PlannedTask.Kind.COPY;
      List<Wanted> copy = new ArrayList<>();
      for (String targetId : change.added()) {
        Member targetMember = targetById.get(targetId);
        copy.add(new Wanted(kind, targetMember,
            orderSources(change.before(), deadNodes, targetMember.zone(), activeById)));
      }
      copies.add(change, copy);
      List<Wanted> cleanup = new ArrayList<>();
      for (String oldId : change.removed()) {
        if (!deadNodes.contains(oldId)) {
          cleanup.add(new Wanted(PlannedTask.Kind.CLEANUP, activeById.get(oldId), change.after()));
        }
      }
      cleanups.add(change, cleanup);
    }
    return new Plan(target, diff, planVersion, copies.finish(), cleanups.finish());
  }

  /**
   * Data that may sit on {@code node} in ring range {@code (start, end]} although no ring keeps it there: what a
   * COPY or REPAIR task copied before a re-plan or a rollback cancelled it.
   *
   * @param zone the node's zone, for the cleanup task's {@code targetZone}
   */
  public record StrayCopy(String node, String zone, long start, long end) {
    public RingRange range() {
      return RingRange.of(start, end);
    }
  }

  /**
   * CLEANUP tasks of {@code target}'s epoch for data that no plan deletes: what cancelled COPY and REPAIR tasks
   * copied ({@code strays}), and what clients wrote to the filling replicas of the failure epochs published since
   * {@code active} (replicas of {@code lastReady}, the last of them, that {@code active} did not have). One task per
   * such node and range where neither {@code target} nor {@code active} places the node (an old replica of the
   * active ring gets its cleanup from {@link #plan}), coalesced by the same rule as {@link #plan}'s; its sources are
   * the range's replicas in {@code target}. Dead nodes get none. Empty, without building anything, when there are no
   * strays and no failure epoch.
   */
  public static List<PlannedTask> strayCleanups(RingSnapshot active, RingSnapshot lastReady, RingSnapshot target,
      Collection<StrayCopy> strays, Set<String> deadNodes, long clusterBytes) {
    if (strays.isEmpty() && lastReady.equals(active)) {
      return List.of();
    }
    java.util.TreeSet<Long> bounds = new java.util.TreeSet<>(Long::compareUnsigned);
    for (RingSnapshot ring : List.of(active, lastReady, target)) {
      for (int i = 0; i < ring.tokenCount(); i++) {
        bounds.add(ring.token(i));
      }
    }
    for (StrayCopy stray : strays) {
      bounds.add(stray.start());
      bounds.add(stray.end());
    }
    Map<String, Member> members = new java.util.HashMap<>();
    for (StrayCopy stray : strays) {
      members.putIfAbsent(stray.node(), Member.of(stray.node(), stray.zone()));
    }
    for (RingSnapshot ring : List.of(target, lastReady, active)) {
      ring.members().forEach(m -> members.put(m.id(), m));
    }
    long[] ends = bounds.stream().mapToLong(Long::longValue).toArray();
    Coalescer cleanups = new Coalescer(active.clusterId(), target.epoch(), clusterBytes);
    for (int i = 0; i < ends.length; i++) {
      long start = ends[i == 0 ? ends.length - 1 : i - 1];
      long end = ends[i];
      // Every ring places the same replicas throughout (start, end]: its end tells which.
      List<String> now = target.replicasAt(end).ids();
      List<String> before = active.replicasAt(end).ids();
      java.util.LinkedHashSet<String> left = new java.util.LinkedHashSet<>(lastReady.replicasAt(end).ids());
      for (StrayCopy stray : strays) {
        if (stray.range().contains(end)) {
          left.add(stray.node());
        }
      }
      left.removeAll(now);
      left.removeAll(before);
      left.removeAll(deadNodes);
      List<Wanted> wanted = new ArrayList<>();
      for (String node : left) {
        wanted.add(new Wanted(PlannedTask.Kind.CLEANUP, members.get(node), now));
      }
      cleanups.add(start, end, ends.length == 1 ? 1.0 : RingRange.of(start, end).fraction(), wanted);
    }
    return cleanups.finish();
  }

  /** Live old replicas, those in the target's zone first, otherwise in their old preference order. */
  static List<String> orderSources(
      List<String> before, Set<String> deadNodes, String targetZone, Map<String, Member> activeById) {
    List<String> sameZone = new ArrayList<>();
    List<String> otherZones = new ArrayList<>();
    for (String id : before) {
      if (deadNodes.contains(id)) {
        continue;
      }
      Member m = activeById.get(id);
      (m != null && m.zone().equals(targetZone) ? sameZone : otherZones).add(id);
    }
    sameZone.addAll(otherZones);
    return sameZone;
  }

  /** What one changed range needs: a task of {@code kind} for {@code target} with these {@code sources}. */
  private record Wanted(PlannedTask.Kind kind, Member target, List<String> sources) {
    boolean continues(Pending p, long start) {
      return p.end == start && p.kind == kind && p.target.id().equals(target.id()) && p.sources.equals(sources);
    }
  }

  /**
   * Turns the tasks each changed range needs, fed in ring order, into coalesced tasks: a task grows while the
   * next range is adjacent and needs the same kind, target and sources, and the last open tasks may continue
   * the first ones across the top of the ring.
   */
  private static final class Coalescer {
    private final String clusterId;
    private final long epoch;
    private final long clusterBytes;
    private final List<PlannedTask> tasks = new ArrayList<>();
    private List<Pending> open = new ArrayList<>();

    Coalescer(String clusterId, long epoch, long clusterBytes) {
      this.clusterId = clusterId;
      this.epoch = epoch;
      this.clusterBytes = clusterBytes;
    }

    void add(RangeChange change, List<Wanted> wanted) {
      add(change.start(), change.end(), change.fraction(), wanted);
    }

    /** What range {@code (start, end]}, a fraction {@code fraction} of the keyspace, needs. */
    void add(long start, long end, double fraction, List<Wanted> wanted) {
      List<Pending> next = new ArrayList<>();
      for (Wanted w : wanted) {
        Pending extended = null;
        for (Pending p : open) {
          if (w.continues(p, start)) {
            extended = p;
            break;
          }
        }
        if (extended != null) {
          open.remove(extended);
          extended.end = end;
          extended.fraction += fraction;
          next.add(extended);
        } else {
          next.add(new Pending(start, end, w.kind(), w.target(), w.sources(), fraction));
        }
      }
      // Whatever was not extended by this range can no longer grow: the ranges come in ring order.
      for (Pending p : open) {
        tasks.add(p.toTask(clusterId, epoch, clusterBytes));
      }
      open = next;
    }

    /** The tasks, after joining the last open ones to the first ones across the top of the ring. */
    List<PlannedTask> finish() {
      for (Pending p : open) {
        PlannedTask first = null;
        for (PlannedTask t : tasks) {
          if (t.rangeStart() == p.end && t.kind() == p.kind && t.target().equals(p.target.id())
              && t.sources().equals(p.sources)) {
            first = t;
            break;
          }
        }
        if (first != null) {
          tasks.remove(first);
          p.end = first.rangeEnd();
          p.fraction += first.keyspaceFraction();
        }
        tasks.add(p.toTask(clusterId, epoch, clusterBytes));
      }
      open = List.of();
      return tasks;
    }
  }

  private static final class Pending {
    final long start;
    long end;
    final PlannedTask.Kind kind;
    final Member target;
    final List<String> sources;
    double fraction;

    Pending(long start, long end, PlannedTask.Kind kind, Member target, List<String> sources, double fraction) {
      this.start = start;
      this.end = end;
      this.kind = kind;
      this.target = target;
      this.sources = sources;
      this.fraction = fraction;
    }

    PlannedTask toTask(String clusterId, long epoch, long clusterBytes) {
      double f = Math.min(1.0, fraction);
      return new PlannedTask(
          PlannedTask.idOf(clusterId, epoch, kind, start, end, target.id()),
          kind, start, end, sources, target.id(), target.zone(), f, Math.round(f * clusterBytes));
    }
  }
}
