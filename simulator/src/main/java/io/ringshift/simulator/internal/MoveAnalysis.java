package io.ringshift.simulator.internal;

import io.ringshift.simulator.SimulationResult.CopySources;
import io.ringshift.simulator.SimulationResult.Moved;
import io.ringshift.simulator.placement.Fleet;
import java.util.ArrayList;
import java.util.List;

/**
 * Compares two assignments of the same keys key by key: what must be copied, what changes primary, and where
 * the copies are read from.
 */
final class MoveAnalysis {
  private final Moved moved;
  private final CopySources sources;
  /** Variance of (new replicas of a key / R) over keys, for the standard error of {@code keysFraction}. */
  private final double replicaVariance;

  private MoveAnalysis(Moved moved, CopySources sources, double replicaVariance) {
    this.moved = moved;
    this.sources = sources;
    this.replicaVariance = replicaVariance;
  }

  Moved moved() {
    return moved;
  }

  CopySources sources() {
    return sources;
  }

  /** Standard error of the simulated replica-level moved fraction, as an estimate of the keyspace fraction. */
  double replicaStandardError(int keys) {
    return Math.sqrt(replicaVariance / keys);
  }

  /**
   * Compares {@code before} with {@code after}.
   *
   * @param down a node that is down during the change (its copies must come from elsewhere), or -1
   */
  static MoveAnalysis between(Workload w, Assignment before, Assignment after, int down) {
    Fleet.Node[] nodes = union(before.placement.fleet(), after.placement.fleet());
    int r0 = before.stride;
    int r1 = after.stride;
    int[] a = before.nodes;
    int[] b = after.nodes;
    long[] sourceBytes = new long[nodes.length];
    long[] targetBytes = new long[nodes.length];
    long copies = 0;
    long bytes = 0;
    double qps = 0;
    double sumSquares = 0;
    long primaryKeys = 0;
    long primaryBytes = 0;
    double primaryQps = 0;
    long sameZoneBytes = 0;
    long degraded = 0;
    long withoutSurvivor = 0;
    for (int k = 0; k < w.count; k++) {
      int oldBase = k * r0;
      int newBase = k * r1;
      int size = w.valueBytes[k];
      if (a[oldBase] != b[newBase]) {
        primaryKeys++;
        primaryBytes += size;
        primaryQps += w.qps[k];
      }
      if (down >= 0 && contains(a, oldBase, r0, down)) {
        degraded++;
      }
      int added = 0;
      for (int j = 0; j < r1; j++) {
        int target = b[newBase + j];
        if (target < 0 || contains(a, oldBase, r0, target)) {
          continue;
        }
        added++;
        int source = chooseSource(nodes, a, oldBase, r0, target, down);
        if (source < 0) {
          withoutSurvivor++;
          continue;
        }
        sourceBytes[source] += size;
        targetBytes[target] += size;
        if (nodes[source].zone() == nodes[target].zone()) {
          sameZoneBytes += size;
        }
      }
      if (added > 0) {
        copies += added;
        bytes += (long) added * size;
        qps += added * w.qps[k] / r1;
        double x = (double) added / r1;
        sumSquares += x * x;
      }
    }
    double keysFraction = (double) copies / ((double) w.count * r1);
    double ideal = before.placement.fleet().idealMovedFractionTo(after.placement.fleet());
    double bytesFraction = (double) bytes / ((double) w.totalBytes * r1);
    double qpsFraction = qps / w.totalQps;
    double primaryFraction = (double) primaryKeys / w.count;
    Moved moved = new Moved(
        copies,
        keysFraction,
        bytes,
        bytesFraction,
        qps,
        qpsFraction,
        primaryKeys,
        primaryFraction,
        (double) primaryBytes / w.totalBytes,
        primaryQps / w.totalQps,
        ideal,
        ratio(keysFraction, ideal),
        ratio(bytesFraction, ideal),
        ratio(qpsFraction, ideal),
        ratio(primaryFraction, ideal));
    double variance = Math.max(0, sumSquares / w.count - keysFraction * keysFraction);
    return new MoveAnalysis(moved, sources(nodes, sourceBytes, targetBytes, bytes, sameZoneBytes,
        down >= 0 ? (double) degraded / w.count : 0, withoutSurvivor), variance);
  }

  /**
   * Among the key's old replicas that are up: one in the target's zone (a copy that stays inside the zone),
   * else the first in preference order; -1 when none is up.
   */
  private static int chooseSource(Fleet.Node[] nodes, int[] a, int base, int r, int target, int down) {
    int first = -1;
    for (int j = 0; j < r; j++) {
      int candidate = a[base + j];
      if (candidate < 0 || candidate == down) {
        continue;
      }
      if (nodes[candidate].zone() == nodes[target].zone()) {
        return candidate;
      }
      if (first < 0) {
        first = candidate;
      }
    }
    return first;
  }

  private static CopySources sources(Fleet.Node[] nodes, long[] sourceBytes, long[] targetBytes, long total,
      long sameZone, double degradedFraction, long withoutSurvivor) {
    int sourceCount = 0;
    int busiestSource = -1;
    int targetCount = 0;
    int busiestTarget = -1;
    List<Long> descending = new ArrayList<>();
    for (int i = 0; i < nodes.length; i++) {
      if (sourceBytes[i] > 0) {
        sourceCount++;
        descending.add(sourceBytes[i]);
        if (busiestSource < 0 || sourceBytes[i] > sourceBytes[busiestSource]) {
          busiestSource = i;
        }
      }
      if (targetBytes[i] > 0) {
        targetCount++;
        if (busiestTarget < 0 || targetBytes[i] > targetBytes[busiestTarget]) {
          busiestTarget = i;
        }
      }
    }
    descending.sort((x, y) -> Long.compare(y, x));
    double denominator = Math.max(1, total);
    return new CopySources(
        sourceCount,
        busiestSource < 0 ? null : nodes[busiestSource].id(),
        busiestSource < 0 ? 0 : sourceBytes[busiestSource] / denominator,
        total == 0 ? 0 : sameZone / denominator,
        targetCount,
        busiestTarget < 0 ? null : nodes[busiestTarget].id(),
        busiestTarget < 0 ? 0 : targetBytes[busiestTarget] / denominator,
        degradedFraction,
        withoutSurvivor,
        List.copyOf(descending));
  }

  static Double ratio(double value, double ideal) {
    return ideal > 0 ? value / ideal : null;
  }

  /** Nodes of both fleets by number (a node in both has the same zone in both). */
  private static Fleet.Node[] union(Fleet x, Fleet y) {
    Fleet.Node[] out = new Fleet.Node[Math.max(x.maxNumber(), y.maxNumber()) + 1];
    for (Fleet.Node n : x.nodes()) {
      out[n.number()] = n;
    }
    for (Fleet.Node n : y.nodes()) {
      out[n.number()] = n;
    }
    return out;
  }

  private static boolean contains(int[] values, int from, int count, int value) {
    for (int i = from; i < from + count; i++) {
      if (values[i] == value) {
        return true;
      }
    }
    return false;
  }
}
