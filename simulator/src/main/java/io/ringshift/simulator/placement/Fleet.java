package io.ringshift.simulator.placement;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The physical nodes of one membership, in the order a positional scheme (modulo) numbers them.
 *
 * <p>Every node carries a {@link Node#number() number} that is stable across memberships: the base fleet has
 * numbers {@code 0..n-1}, a joining node gets {@code n}. Placements report node numbers, so assignments of two
 * memberships compare directly. Immutable.
 *
 * @param nodes the members, in positional order
 * @param zoneCount zones of the scenario (a zone may be empty in a small fleet)
 */
public record Fleet(List<Node> nodes, int zoneCount) {

  /**
   * A physical node.
   *
   * @param number stable number, also the index into per-node arrays
   * @param id node id on the ring, {@code node-007}
   * @param zone zone index, {@code 0..zoneCount-1}
   * @param weight relative capacity
   */
  public record Node(int number, String id, int zone, double weight) {
    /** The zone's name on the ring: {@code az-1} for zone 0. */
    public String zoneName() {
      return zoneName(zone);
    }

    static String zoneName(int zone) {
      return "az-" + (zone + 1);
    }

    /** The id of node number {@code number}: {@code node-007}. */
    public static String idOf(int number) {
      return String.format(Locale.ROOT, "node-%03d", number);
    }
  }

  /**
   * A fleet of these nodes.
   *
   * @throws IllegalArgumentException when {@code zoneCount} is below 1, a node's zone is outside
   *     {@code 0..zoneCount-1}, its weight is not positive and finite, or two nodes share a number
   */
  public Fleet {
    nodes = List.copyOf(nodes);
    if (zoneCount < 1) {
      throw new IllegalArgumentException("zoneCount was " + zoneCount + "; a fleet needs at least 1 zone");
    }
    Set<Integer> numbers = new HashSet<>();
    for (Node n : nodes) {
      if (n.zone() < 0 || n.zone() >= zoneCount || !(n.weight() > 0) || Double.isInfinite(n.weight())
          || n.number() < 0 || !numbers.add(n.number())) {
        throw new IllegalArgumentException("node " + n + " does not fit a fleet of " + zoneCount + " zones: "
            + "zones are 0.." + (zoneCount - 1) + ", weights positive and finite, numbers distinct and >= 0");
      }
    }
  }

  /**
   * {@code count} nodes of weight 1, node {@code i} in zone {@code i mod zones}.
   *
   * @throws IllegalArgumentException when {@code zones} is below 1
   */
  public static Fleet uniform(int count, int zones) {
    if (zones < 1) {
      throw new IllegalArgumentException("zones was " + zones + "; a fleet needs at least 1 zone");
    }
    List<Node> nodes = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      nodes.add(new Node(i, Node.idOf(i), i % zones, 1.0));
    }
    return new Fleet(nodes, zones);
  }

  /**
   * The same nodes with weights cycling through {@code weights} within every zone (the {@code k}-th node of
   * zone {@code z} gets {@code weights[(k + z) mod length]}), so that every zone holds the same mix and every
   * weight appears as soon as there are enough nodes.
   */
  public Fleet withWeightCycle(double... weights) {
    List<Node> out = new ArrayList<>(nodes.size());
    for (Node n : nodes) {
      double w = weights[(n.number() / zoneCount + n.zone()) % weights.length];
      out.add(new Node(n.number(), n.id(), n.zone(), w));
    }
    return new Fleet(out, zoneCount);
  }

  /** This fleet plus a new node numbered after every existing one, in the zone its number falls in. */
  public Fleet plusNewNode() {
    int number = maxNumber() + 1;
    List<Node> out = new ArrayList<>(nodes);
    out.add(new Node(number, Node.idOf(number), number % zoneCount, 1.0));
    return new Fleet(out, zoneCount);
  }

  /** This fleet without the node numbered {@code number} (the same fleet when there is none). */
  public Fleet minus(int number) {
    List<Node> out = new ArrayList<>(nodes);
    out.removeIf(n -> n.number() == number);
    return new Fleet(out, zoneCount);
  }

  /** This fleet with node {@code number} at {@code weight}. */
  public Fleet withWeight(int number, double weight) {
    List<Node> out = new ArrayList<>(nodes.size());
    for (Node n : nodes) {
      out.add(n.number() == number ? new Node(n.number(), n.id(), n.zone(), weight) : n);
    }
    return new Fleet(out, zoneCount);
  }

  /** Nodes in the fleet. */
  public int size() {
    return nodes.size();
  }

  /** The node at {@code position} in positional order. */
  public Node get(int position) {
    return nodes.get(position);
  }

  /** The node with that number, or {@code null}. */
  public Node byNumber(int number) {
    for (Node n : nodes) {
      if (n.number() == number) {
        return n;
      }
    }
    return null;
  }

  /** Nodes indexed by number ({@code null} where a number is not in this fleet), for hot loops. */
  Node[] byNumberIndex() {
    Node[] index = new Node[maxNumber() + 1];
    for (Node n : nodes) {
      index[n.number()] = n;
    }
    return index;
  }

  /** The highest node number, {@code -1} for an empty fleet: per-node arrays have {@code maxNumber() + 1} slots. */
  public int maxNumber() {
    int max = -1;
    for (Node n : nodes) {
      max = Math.max(max, n.number());
    }
    return max;
  }

  /** The sum of the nodes' weights. */
  public double totalWeight() {
    double total = 0;
    for (Node n : nodes) {
      total += n.weight();
    }
    return total;
  }

  /** Zones that hold at least one node. */
  int occupiedZones() {
    boolean[] seen = new boolean[zoneCount];
    int count = 0;
    for (Node n : nodes) {
      if (!seen[n.zone()]) {
        seen[n.zone()] = true;
        count++;
      }
    }
    return count;
  }

  /**
   * What a perfectly weight-proportional placement moves to go from this fleet to {@code next}, as a fraction
   * of all data: the sum over nodes of the share they gain, shares proportional to weight (the same rule as
   * {@code RingDiff.idealMovedFraction}). Zone spread can make the realisable minimum slightly lower when zones
   * hold unequal weight.
   */
  public double idealMovedFractionTo(Fleet next) {
    int size = Math.max(maxNumber(), next.maxNumber()) + 1;
    double[] before = new double[size];
    double[] after = new double[size];
    double w0 = totalWeight();
    double w1 = next.totalWeight();
    for (Node n : nodes) {
      before[n.number()] = n.weight() / w0;
    }
    for (Node n : next.nodes) {
      after[n.number()] = n.weight() / w1;
    }
    double moved = 0;
    for (int i = 0; i < size; i++) {
      moved += Math.max(0, after[i] - before[i]);
    }
    return moved;
  }
}
