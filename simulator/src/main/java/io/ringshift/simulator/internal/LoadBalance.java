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
