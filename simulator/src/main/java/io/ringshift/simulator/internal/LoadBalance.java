package io.ringshift.simulator.internal;

import io.ringshift.simulator.SimulationResult.BalanceRow;
import io.ringshift.simulator.placement.Fleet;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-node load of one assignment: keys, bytes and request rate, counted at the primary only and at every
 * replica (each replica stores the key; reads are spread evenly, so each serves 1/R of its requests).
 */
final class LoadBalance {
  /** Loads indexed by node number: [level][measure][node]. */
  final double[][][] load;
  final Fleet fleet;
  private final int replicas;
  private final double[] sumSquares;

  private LoadBalance(Fleet fleet, int replicas, double[][][] load, double[] sumSquares) {
    this.fleet = fleet;
    this.replicas = replicas;
    this.load = load;
    this.sumSquares = sumSquares;
  }

  static LoadBalance of(Workload w, Assignment a) {
    int size = a.placement.fleet().maxNumber() + 1;
    double[][][] load = new double[2][3][size];
    int r = a.stride;
    int[] nodes = a.nodes;
    double squaresBytes = 0;
    double squaresQps = 0;
    for (int k = 0; k < w.count; k++) {
      int base = k * r;
      int bytes = w.valueBytes[k];
      double qps = w.qps[k];
      squaresBytes += (double) bytes * bytes;
      squaresQps += qps * qps;
      int primary = nodes[base];
      load[0][0][primary] += 1;
      load[0][1][primary] += bytes;
      load[0][2][primary] += qps;
      int count = 0;
      for (int j = 0; j < r && nodes[base + j] >= 0; j++) {
        count++;
      }
      for (int j = 0; j < count; j++) {
        int n = nodes[base + j];
        load[1][0][n] += 1;
        load[1][1][n] += bytes;
        load[1][2][n] += qps / count;
      }
    }
    return new LoadBalance(a.placement.fleet(), r, load, new double[] {w.count, squaresBytes, squaresQps});
  }

  /** Bounded-load reads ({@link #boundedReads}) at this factor: Envoy's hash_balance_factor of 125. */
  static final double READ_BALANCE_FACTOR = 1.25;

  /**
   * Per-node request rate when reads use bounded load, as {@code RingClient.readReplica} with {@code
   * boundedLoadReads(factor)} does: each key's requests go to the first of its replicas whose load is under {@code
   * factor} times its fair share (weight / total weight of all requests), the rest overflowing to the next, and
   * what no replica has room for to the least loaded one. A steady-state, fluid model (requests of all keys
   * interleave; the order keys are taken in is the workload's, which is random by popularity): a node ends at most
   * {@code factor} times its share unless one key alone needs more than all its replicas' room. Returned as a
   * balance row of level {@link BalanceRow#BOUNDED_READS}.
   */
  static BalanceRow boundedReads(Workload w, Assignment a, double factor) {
    Fleet fleet = a.placement.fleet();
    int size = fleet.maxNumber() + 1;
    double[] cap = new double[size];
    for (Fleet.Node n : fleet.nodes()) {
      cap[n.number()] = factor * w.totalQps * n.weight() / fleet.totalWeight();
    }
    double[] load = new double[size];
    int r = a.stride;
    double squares = 0;
    for (int k = 0; k < w.count; k++) {
      double left = w.qps[k];
      squares += left * left;
      int base = k * r;
      int count = 0;
      while (count < r && a.nodes[base + count] >= 0) {
        count++;
      }
      for (int j = 0; j < count && left > 0; j++) {
        int n = a.nodes[base + j];
        double room = cap[n] - load[n];
        if (room > 0) {
          double take = Math.min(room, left);
          load[n] += take;
          left -= take;
        }
      }
      if (left > 0) {
        waterFill(load, cap, a.nodes, base, count, left);
      }
    }
    double[][][] loads = new double[1][3][];
    loads[0][0] = new double[size];
    loads[0][1] = new double[size];
    loads[0][2] = load;
    return new LoadBalance(fleet, r, loads, new double[] {0, 0, squares}).row(BalanceRow.BOUNDED_READS,
        BalanceRow.QPS, 0, 2);
  }

  /**
   * Adds {@code amount} over the {@code count} replicas at {@code nodes[base..]} so that the fullest of them ends as
   * low as it can (relative to its cap): the least loaded take it first, up to a common level. That is where reads
   * that always go to the least loaded replica settle when all of them are over the bound.
   */
  private static void waterFill(double[] load, double[] cap, int[] nodes, int base, int count, double amount) {
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (int j = 0; j < count; j++) {
      int n = nodes[base + j];
      lo = Math.min(lo, load[n] / cap[n]);
      hi = Math.max(hi, (load[n] + amount) / cap[n]);
    }
    for (int step = 0; step < 100; step++) {
      double level = (lo + hi) / 2;
      double needed = 0;
      for (int j = 0; j < count; j++) {
        int n = nodes[base + j];
        needed += Math.max(0, level * cap[n] - load[n]);
      }
      if (needed < amount) {
        lo = level;
      } else {
        hi = level;
      }
    }
    double placed = 0;
    for (int j = 0; j < count; j++) {
      int n = nodes[base + j];
      double add = Math.max(0, hi * cap[n] - load[n]);
      load[n] += add;
      placed += add;
    }
    // Rounding: whatever the bisection left over goes to the first replica.
    load[nodes[base]] += amount - placed;
  }

  /** The six rows: primary and replica level, keys, bytes and QPS. */
  List<BalanceRow> rows() {
    List<BalanceRow> rows = new ArrayList<>(6);
    String[] levels = {BalanceRow.PRIMARY, BalanceRow.REPLICA};
    String[] measures = {BalanceRow.KEYS, BalanceRow.BYTES, BalanceRow.QPS};
    for (int l = 0; l < 2; l++) {
      for (int m = 0; m < 3; m++) {
        rows.add(row(levels[l], measures[m], l, m));
      }
    }
    return rows;
  }

  BalanceRow row(String level, String measure, int l, int m) {
    double[] relative = relative(load[l][m]);
    Stats s = Stats.of(relative);
    List<Double> perNode = new ArrayList<>(relative.length);
    for (double v : relative) {
      perNode.add(v);
    }
    return new BalanceRow(level, measure, s.max, s.min, s.cv, randomFloorCv(l, m), List.copyOf(perNode));
  }

  /** Each fleet node's load over its fair share (weight / total weight) of the total, in fleet order. */
  double[] relative(double[] values) {
    double total = 0;
    for (Fleet.Node n : fleet.nodes()) {
      total += values[n.number()];
    }
    double weight = fleet.totalWeight();
    double[] out = new double[fleet.size()];
    for (int i = 0; i < out.length; i++) {
      Fleet.Node n = fleet.get(i);
      double fair = total * n.weight() / weight;
      out[i] = fair > 0 ? values[n.number()] / fair : 0;
    }
    return out;
  }

  /**
   * The CV that a uniformly random assignment of the same keys would show on equal nodes. A node's load is
   * a sum of independent per-key terms, present with probability p = 1/n (primary) or R/n (replica):
   * {@code CV = sqrt((1/p - 1) * sum x^2) / sum x}. It is the workload's own noise floor.
   */
  private double randomFloorCv(int level, int measure) {
    double total = 0;
    for (Fleet.Node n : fleet.nodes()) {
      total += load[0][measure][n.number()];
    }
    double p = level == 0 ? 1.0 / fleet.size() : Math.min(1.0, (double) replicas / fleet.size());
    return total > 0 ? Math.sqrt((1 / p - 1) * sumSquares[measure]) / total : 0;
  }

  /** Max, min and CV of values whose mean is normalised to 1. */
  record Stats(double max, double min, double mean, double cv) {
    static Stats of(double[] values) {
      double sum = 0;
      double max = Double.NEGATIVE_INFINITY;
      double min = Double.POSITIVE_INFINITY;
      for (double v : values) {
        sum += v;
        max = Math.max(max, v);
        min = Math.min(min, v);
      }
      double mean = sum / values.length;
      double squares = 0;
      for (double v : values) {
        squares += (v - mean) * (v - mean);
      }
      double sd = Math.sqrt(squares / values.length);
      return mean > 0 ? new Stats(max / mean, min / mean, mean, sd / mean) : new Stats(0, 0, 0, 0);
    }
  }
}
