package io.ringshift.ring;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ranges whose replica set differs between two snapshots, and what that means per node.
 *
 * <p>Design: the union of both token tables splits the ring into elementary intervals; within one interval
 * both snapshots are constant, so one comparison per interval is exact. The two tables are merged in one
 * ordered pass (O(n + m)); adjacent changed intervals with the same before and after sets are coalesced,
 * across the top of the ring too.
 *
 * <p>"Replica set changed" means the ordered list of replicas changed; {@link RangeChange#added()} gives the
 * nodes that must receive a copy.
 */
public final class RingDiff {
  private final long fromEpoch;
  private final long toEpoch;
  private final List<RangeChange> changes;
  private final Map<String, NodeMovement> perNode;
  private final double changedFraction;
  private final double movedReplicaFraction;
  private final double primaryMovedFraction;
  private final double idealMovedFraction;

  private RingDiff(
      long fromEpoch,
      long toEpoch,
      List<RangeChange> changes,
      Map<String, NodeMovement> perNode,
      double changedFraction,
      double movedReplicaFraction,
      double primaryMovedFraction,
      double idealMovedFraction) {
    this.fromEpoch = fromEpoch;
    this.toEpoch = toEpoch;
    this.changes = changes;
    this.perNode = perNode;
    this.changedFraction = changedFraction;
    this.movedReplicaFraction = movedReplicaFraction;
    this.primaryMovedFraction = primaryMovedFraction;
    this.idealMovedFraction = idealMovedFraction;
  }

  /**
   * Computes the diff from {@code from} to {@code to}.
   *
   * @throws RingException when the snapshots belong to different clusters or use different hashes (their
   *     positions would not be comparable)
   */
  public static RingDiff between(RingSnapshot from, RingSnapshot to) {
    if (!from.clusterId().equals(to.clusterId())) {
      throw RingException.of("cannot diff cluster \"%s\" against cluster \"%s\"; a diff compares one cluster",
          from.clusterId(), to.clusterId());
    }
    if (!from.hashId().equals(to.hashId())) {
      throw RingException.of("cannot diff hash %s against hash %s; changing the hash moves every key",
          from.hashId(), to.hashId());
    }
    List<Member> toMembers = to.members();
    List<Member> fromMembers = from.members();
    Map<String, Integer> toIndex = new HashMap<>();
    for (int i = 0; i < toMembers.size(); i++) {
      toIndex.put(toMembers.get(i).id(), i);
    }
    int[] fromToTo = new int[fromMembers.size()];
    for (int i = 0; i < fromToTo.length; i++) {
      fromToTo[i] = toIndex.getOrDefault(fromMembers.get(i).id(), -1);
    }

    Accumulator acc = new Accumulator();
    int n = from.tokenCount();
    int m = to.tokenCount();
    // Merge the two token tables in unsigned order; each distinct boundary b closes the interval (prev, b].
    int i = 0;
    int j = 0;
    long last = Long.compareUnsigned(from.token(n - 1), to.token(m - 1)) >= 0 ? from.token(n - 1) : to.token(m - 1);
    long previous = last;
    while (i < n || j < m) {
      long b;
      if (j >= m || (i < n && Long.compareUnsigned(from.token(i), to.token(j)) <= 0)) {
        b = from.token(i);
      } else {
        b = to.token(j);
      }
      // The range of each snapshot containing b: the first token >= b, wrapping to 0.
      int fromRange = i < n ? i : 0;
      int toRange = j < m ? j : 0;
      ReplicaSet before = from.replicasOfRange(fromRange);
      ReplicaSet after = to.replicasOfRange(toRange);
      if (!sameMembers(before, after, fromToTo)) {
        acc.add(previous, b, before, after);
      }
      previous = b;
      while (i < n && from.token(i) == b) {
        i++;
      }
      while (j < m && to.token(j) == b) {
        j++;
      }
    }
    return acc.finish(from, to);
  }

  private static boolean sameMembers(ReplicaSet before, ReplicaSet after, int[] fromToTo) {
    if (before.size() != after.size()) {
      return false;
    }
    for (int k = 0; k < before.size(); k++) {
      if (fromToTo[before.memberIndex(k)] != after.memberIndex(k)) {
        return false;
      }
    }
    return true;
  }

  /** Epoch of the old snapshot. */
  public long fromEpoch() {
    return fromEpoch;
  }

  /** Epoch of the new snapshot. */
  public long toEpoch() {
    return toEpoch;
  }

  /** Changed ranges in ring order (a wrapping range, if any, comes first). */
  public List<RangeChange> changes() {
    return changes;
  }

  /** Movement per node id (sorted by id), for every node that gains or loses something. */
  public Map<String, NodeMovement> perNode() {
    return perNode;
  }

  /** Fraction of the keyspace whose replica list changed at all. */
  public double changedFraction() {
    return changedFraction;
  }

  /**
   * Fraction of all replica data that must be copied: the sum over changed ranges of
   * {@code fraction * added replicas}, divided by the replicas each key has in the new snapshot
   * ({@code min(R, nodes)}).
   */
  public double movedReplicaFraction() {
    return movedReplicaFraction;
  }

  /** Fraction of the keyspace whose primary owner changed. */
  public double primaryMovedFraction() {
    return primaryMovedFraction;
  }

  /**
   * The data a perfectly weight-proportional placement would move for this membership change, as a fraction
   * of all data: {@code sum over nodes of max(0, newShare - oldShare)}, with shares proportional to weight.
   * It ignores zones and token noise: a real ring realises shares that differ a little from the weights, so the
   * ratio {@code movedReplicaFraction / idealMovedFraction} can fall a little above or below 1.
   */
  public double idealMovedFraction() {
    return idealMovedFraction;
  }

  /**
   * Replica data moved against the ideal ({@code movedReplicaFraction / idealMovedFraction}), or null when the ideal
   * is 0: nothing needs to move, so no ratio is meaningful.
   */
  public Double movedToIdeal() {
    return idealMovedFraction > 0 ? movedReplicaFraction() / idealMovedFraction : null;
  }

  /** True when no range changed. */
  public boolean isEmpty() {
    return changes.isEmpty();
  }

  private static final class Accumulator {
    private final List<long[]> bounds = new ArrayList<>();
    private final List<ReplicaSet[]> sets = new ArrayList<>();

    void add(long start, long end, ReplicaSet before, ReplicaSet after) {
      int last = bounds.size() - 1;
      if (last >= 0 && bounds.get(last)[1] == start && sameIds(sets.get(last), before, after)) {
        bounds.get(last)[1] = end;
        return;
      }
      bounds.add(new long[] {start, end});
      sets.add(new ReplicaSet[] {before, after});
    }

    private static boolean sameIds(ReplicaSet[] pair, ReplicaSet before, ReplicaSet after) {
      return (pair[0] == before || pair[0].sameIds(before)) && (pair[1] == after || pair[1].sameIds(after));
    }

    RingDiff finish(RingSnapshot from, RingSnapshot to) {
      int count = bounds.size();
      // Coalesce the last interval with the first when they meet at the top of the ring.
      if (count > 1) {
        long[] firstBounds = bounds.get(0);
        long[] lastBounds = bounds.get(count - 1);
        if (lastBounds[1] == firstBounds[0] && sameIds(sets.get(count - 1), sets.get(0)[0], sets.get(0)[1])) {
          firstBounds[0] = lastBounds[0];
          bounds.remove(count - 1);
          sets.remove(count - 1);
          count--;
        }
      }
      List<RangeChange> changes = new ArrayList<>(count);
      Map<String, double[]> movement = new TreeMap<>();
      double changed = 0;
      double replicaMoved = 0;
      double primaryMoved = 0;
      for (int k = 0; k < count; k++) {
        long[] b = bounds.get(k);
        ReplicaSet before = sets.get(k)[0];
        ReplicaSet after = sets.get(k)[1];
        RangeChange change = new RangeChange(b[0], b[1], before.ids(), after.ids());
        changes.add(change);
        double f = change.fraction();
        changed += f;
        List<String> added = change.added();
        replicaMoved += f * added.size();
        for (String id : added) {
          movement.computeIfAbsent(id, x -> new double[4])[0] += f;
        }
        for (String id : change.removed()) {
          movement.computeIfAbsent(id, x -> new double[4])[1] += f;
        }
        if (change.primaryChanged()) {
          primaryMoved += f;
          movement.computeIfAbsent(after.primary().id(), x -> new double[4])[2] += f;
          movement.computeIfAbsent(before.primary().id(), x -> new double[4])[3] += f;
        }
      }
      Map<String, double[]> held = idealHeld(from, to);
      held.forEach((id, h) -> {
        double[] v = movement.computeIfAbsent(id, x -> new double[4]);
        if (h[1] == h[0] && v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0) {
          movement.remove(id); // neither moves nor should move
        }
      });
      Map<String, NodeMovement> perNode = new TreeMap<>();
      movement.forEach((id, v) -> {
        double[] h = held.getOrDefault(id, new double[2]);
        perNode.put(id, new NodeMovement(id, v[0], v[1], v[2], v[3], Math.max(0, h[1] - h[0]),
            Math.max(0, h[0] - h[1])));
      });
      return new RingDiff(
          from.epoch(),
          to.epoch(),
          Collections.unmodifiableList(changes),
          Collections.unmodifiableMap(perNode),
          Math.min(1.0, changed),
          replicaMoved / Math.min(to.replicas(), to.memberCount()),
          Math.min(1.0, primaryMoved),
          idealMovedFraction(from, to));
    }
  }

  /**
   * Per node id, the keyspace fraction it would hold a replica of in each snapshot if it held exactly its
   * weight share: {@code min(1, min(R, nodes) * weight / totalWeight)}.
   */
  static Map<String, double[]> idealHeld(RingSnapshot from, RingSnapshot to) {
    Map<String, double[]> held = new HashMap<>();
    addHeld(held, from, 0);
    addHeld(held, to, 1);
    return held;
  }

  private static void addHeld(Map<String, double[]> held, RingSnapshot snapshot, int slot) {
    double total = snapshot.members().stream().mapToDouble(Member::weight).sum();
    int copies = Math.min(snapshot.replicas(), snapshot.memberCount());
    for (Member m : snapshot.members()) {
      held.computeIfAbsent(m.id(), x -> new double[2])[slot] = Math.min(1.0, copies * m.weight() / total);
    }
  }

  /** {@code sum max(0, newShare - oldShare)} over all node ids, shares proportional to weight. */
  static double idealMovedFraction(RingSnapshot from, RingSnapshot to) {
    Map<String, double[]> shares = new HashMap<>();
    double fromTotal = from.members().stream().mapToDouble(Member::weight).sum();
    double toTotal = to.members().stream().mapToDouble(Member::weight).sum();
    for (Member m : from.members()) {
      shares.computeIfAbsent(m.id(), x -> new double[2])[0] = m.weight() / fromTotal;
    }
    for (Member m : to.members()) {
      shares.computeIfAbsent(m.id(), x -> new double[2])[1] = m.weight() / toTotal;
    }
    double moved = 0;
    for (double[] s : shares.values()) {
      moved += Math.max(0, s[1] - s[0]);
    }
    return moved;
  }

  @Override
  public String toString() {
    return "RingDiff{" + fromEpoch + " -> " + toEpoch + ", ranges=" + changes.size()
        + ", changed=" + changedFraction + ", moved=" + movedReplicaFraction + ", ideal=" + idealMovedFraction + "}";
  }
}
