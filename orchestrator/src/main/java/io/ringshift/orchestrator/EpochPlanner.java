package io.ringshift.orchestrator;

import io.ringshift.ring.Member;
import io.ringshift.ring.RangeChange;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Plans an epoch: the target ring for a membership, the diff from the active ring, and the range-copy tasks
 * that move exactly the changed ranges. Pure: no Kafka, no clock, no I/O.
 *
 * <p>One task per (changed range, new replica), as the diff reports it; adjacent ranges with the same target,
 * kind and source list are coalesced into one task, so a join at 120 x 256 with R = 3 yields a few hundred
 * tasks rather than thousands. Sources are the old replicas of the range that are still alive, those in the
 * target's zone first (a same-zone copy crosses no zone boundary), then the others in their old preference
 * order. A range that lost a replica to a dead node is a REPAIR: it is never planned as a copy from the dead
 * node.
 */
public final class EpochPlanner {
  private EpochPlanner() {}

  /** The result of planning: the target ring, its diff from the active ring and the tasks. */
  public record Plan(RingSnapshot target, RingDiff diff, int planVersion, List<PlannedTask> tasks) {
    public Plan {
      tasks = List.copyOf(tasks);
    }

    public long estimatedBytes() {
      return tasks.stream().mapToLong(PlannedTask::estimatedBytes).sum();
    }
  }

  /**
   * Plans the move from {@code active} to a ring of {@code targetMembers} at {@code epoch}.
   *
   * @param deadNodes nodes confirmed dead: never a source, and ranges they held become REPAIR tasks
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

    List<PlannedTask> tasks = new ArrayList<>();
    List<Pending> open = new ArrayList<>();
    for (RangeChange change : diff.changes()) {
      boolean lostToDeadNode = change.removed().stream().anyMatch(deadNodes::contains);
      PlannedTask.Kind kind = lostToDeadNode ? PlannedTask.Kind.REPAIR : PlannedTask.Kind.COPY;
      List<Pending> next = new ArrayList<>();
      for (String targetId : change.added()) {
        Member targetMember = targetById.get(targetId);
        List<String> sources = orderSources(change.before(), deadNodes, targetMember.zone(), activeById);
        Pending extended = null;
        for (Pending p : open) {
          if (p.end == change.start() && p.kind == kind && p.target.id().equals(targetId)
              && p.sources.equals(sources)) {
            extended = p;
            break;
          }
        }
        if (extended != null) {
          open.remove(extended);
          extended.end = change.end();
          extended.fraction += change.fraction();
          next.add(extended);
        } else {
          next.add(new Pending(change.start(), change.end(), kind, targetMember, sources, change.fraction()));
        }
      }
      // Whatever was not extended by this range can no longer grow: the ranges are in ring order.
      for (Pending p : open) {
        tasks.add(p.toTask(active.clusterId(), epoch, planVersion, clusterBytes));
      }
      open = next;
    }
    mergeAcrossTheTop(open, tasks, active.clusterId(), epoch, planVersion, clusterBytes);
    return new Plan(target, diff, planVersion, tasks);
  }

  /** The last open tasks may continue the first tasks across the top of the ring. */
  private static void mergeAcrossTheTop(
      List<Pending> open, List<PlannedTask> tasks, String clusterId, long epoch, int planVersion, long clusterBytes) {
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
      tasks.add(p.toTask(clusterId, epoch, planVersion, clusterBytes));
    }
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

    PlannedTask toTask(String clusterId, long epoch, int planVersion, long clusterBytes) {
      double f = Math.min(1.0, fraction);
      return new PlannedTask(
          PlannedTask.idOf(clusterId, epoch, kind, start, end, target.id()),
          kind, start, end, sources, target.id(), target.zone(), f, Math.round(f * clusterBytes));
    }
  }
}
