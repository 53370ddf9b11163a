package io.ringshift.simulator.placement;

import io.ringshift.ring.RingSnapshot;
import java.util.Arrays;
import java.util.Comparator;
import java.util.function.ToLongFunction;

/**
 * Fixed logical partitions (as Kafka, Couchbase vBuckets or Riak do): a key's partition is fixed forever by its
 * hash ({@code P} equal slices of the hash space), and an explicit table assigns each partition R replica
 * slots on nodes.
 *
 * <p>Design: the initial table is filled greedily, partition by partition, giving each slot to the least
 * loaded eligible node (load = slots / weight; primary slots balanced separately). Eligible means not already
 * in the partition and, while the partition has not used every occupied zone, in an unused zone: the ring's
 * rule. A membership change is applied minimally: slots of departed nodes go to the least loaded eligible node,
 * then single slots move from a more loaded to a less loaded node while that strictly lowers
 * {@code sum(slots^2 / weight)} (minimal at slots proportional to weight, so the loop ends) without narrowing
 * a partition's zone spread. The table is state every client must hold.
 */
public final class PartitionPlacement extends MemberListPlacement {
  private final int partitions;
  private final int replicas;
  /** Node number of slot {@code j} of partition {@code p} at {@code p * replicas + j}; slot 0 is the primary. */
  private final int[] table;

  private PartitionPlacement(Fleet fleet, int partitions, int replicas, int[] table) {
    super(fleet, replicas, "partitions", true, partitions + "x" + replicas + " table + members");
    this.partitions = partitions;
    this.replicas = replicas;
    this.table = table;
  }

  /**
   * The initial table of {@code partitions} partitions over {@code fleet}, {@code min(replicas, nodes)} slots each.
   *
   * @throws IllegalArgumentException when the fleet is empty, or {@code partitions} or {@code replicas} is below 1
   */
  public static PartitionPlacement of(Fleet fleet, int partitions, int replicas) {
    requirePlaceable(fleet, replicas);
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions was " + partitions + "; a partition table needs at least 1");
    }
    int r = Math.min(replicas, fleet.size());
    Fleet.Node[] nodes = fleet.byNumberIndex();
    Loads loads = new Loads(nodes);
    int targetZones = Math.min(r, fleet.occupiedZones());
    int[] table = new int[partitions * r];
    for (int p = 0; p < partitions; p++) {
      int base = p * r;
      for (int j = 0; j < r; j++) {
        int used = distinctZones(nodes, table, base, j, -1, 0);
        int best = -1;
        double bestKey = Double.POSITIVE_INFINITY;
        double bestTie = Double.POSITIVE_INFINITY;
        for (int k = 0; k < fleet.size(); k++) {
          // Start the scan at a partition-dependent node so that ties do not always favour the same nodes.
          Fleet.Node n = fleet.get((k + p) % fleet.size());
          if (contains(table, base, j, n.number())) {
            continue;
          }
          if (used < targetZones && distinctWith(nodes, table, base, j, n) == used) {
            continue;
          }
          double key = j == 0 ? loads.primaryLoad(n) : loads.load(n);
          double tie = loads.load(n);
          if (key < bestKey || (key == bestKey && tie < bestTie)) {
            best = n.number();
            bestKey = key;
            bestTie = tie;
          }
        }
        table[base + j] = best;
        loads.add(best, j == 0, +1);
      }
    }
    return new PartitionPlacement(fleet, partitions, r, table);
  }

  @Override
  public long clientStateBytes(ToLongFunction<RingSnapshot> snapshotWireBytes) {
    return super.clientStateBytes(snapshotWireBytes) + 2L * partitions * replicas();
  }

  @Override
  public PartitionPlacement changeTo(Fleet next) {
    if (next.size() < replicas) {
      throw new IllegalArgumentException("a partition table of " + replicas + " replicas needs at least "
          + replicas + " nodes; the new fleet has " + next.size());
    }
    int[] t = table.clone();
    Fleet.Node[] nodes = next.byNumberIndex();
    Loads loads = new Loads(nodes);
    for (int s = 0; s < t.length; s++) {
      if (isMember(nodes, t[s])) {
        loads.add(t[s], s % replicas == 0, +1);
      }
    }
    int targetZones = Math.min(replicas, next.occupiedZones());
    // 1. Slots of departed nodes go to the least loaded node that keeps the partition's zone spread.
    for (int s = 0; s < t.length; s++) {
      if (isMember(nodes, t[s])) {
        continue;
      }
      int base = s - s % replicas;
      int j = s % replicas;
      int best = -1;
      int bestZones = -1;
      double bestKey = Double.POSITIVE_INFINITY;
      for (Fleet.Node n : next.nodes()) {
        if (contains(t, base, replicas, n.number())) {
          continue;
        }
        int zones = Math.min(targetZones, distinctZones(nodes, t, base, replicas, j, n.zone()));
        double key = j == 0 ? loads.primaryLoad(n) : loads.load(n);
        if (zones > bestZones || (zones == bestZones && key < bestKey)) {
          best = n.number();
          bestZones = zones;
          bestKey = key;
        }
      }
      t[s] = best;
      loads.add(best, j == 0, +1);
    }
    // 2. Rebalance one slot at a time, trying the least loaded receivers first.
    Fleet.Node[] receivers = next.nodes().toArray(Fleet.Node[]::new);
    boolean moved = true;
    while (moved) {
      moved = false;
      Arrays.sort(receivers, Comparator.comparingDouble(loads::load));
      for (Fleet.Node receiver : receivers) {
        int slot = bestDonorSlot(nodes, t, loads, receiver, targetZones);
        if (slot >= 0) {
          boolean primary = slot % replicas == 0;
          loads.add(t[slot], primary, -1);
          t[slot] = receiver.number();
          loads.add(receiver.number(), primary, +1);
          moved = true;
          break;
        }
      }
    }
    return new PartitionPlacement(next, partitions, replicas, t);
  }

  /**
   * The slot whose move to {@code receiver} lowers {@code sum(slots^2 / weight)} the most, preferring moves that
   * also even out primaries; -1 when no move lowers it.
   */
  private int bestDonorSlot(Fleet.Node[] nodes, int[] t, Loads loads, Fleet.Node receiver, int targetZones) {
    double receiverCost = (2.0 * loads.count(receiver.number()) + 1) / receiver.weight();
    int bestSlot = -1;
    double bestGain = 1e-9;
    boolean bestHelpsPrimary = false;
    for (int s = 0; s < t.length; s++) {
      Fleet.Node donor = nodes[t[s]];
      double gain = (2.0 * loads.count(donor.number()) - 1) / donor.weight() - receiverCost;
      if (gain < bestGain || (gain == bestGain && bestHelpsPrimary)) {
        continue;
      }
      int base = s - s % replicas;
      int j = s % replicas;
      if (contains(t, base, replicas, receiver.number())) {
        continue;
      }
      int spreadNow = Math.min(targetZones, distinctZones(nodes, t, base, replicas, -1, 0));
      if (distinctZones(nodes, t, base, replicas, j, receiver.zone()) < spreadNow) {
        continue;
      }
      boolean helpsPrimary = j == 0
          ? loads.primaryLoad(receiver) + 1 / receiver.weight() <= loads.primaryLoad(donor)
          : loads.primaryLoad(receiver) >= loads.primaryLoad(donor);
      if (gain > bestGain || (helpsPrimary && !bestHelpsPrimary) || bestSlot < 0) {
        bestSlot = s;
        bestGain = gain;
        bestHelpsPrimary = helpsPrimary;
      }
    }
    return bestSlot;
  }

  /** Replica slots per node number, {@code 0} for a number not in the fleet. */
  public int[] slotCounts() {
    int[] counts = new int[fleet().maxNumber() + 1];
    for (int number : table) {
      counts[number]++;
    }
    return counts;
  }

  @Override
  public Lookup lookup() {
    int r = replicas;
    int p = partitions;
    int[] slots = table;
    return (keyHash, out) -> {
      // The top 32 bits of the hash scaled to [0, P): P equal slices of the hash space.
      int partition = (int) (((keyHash >>> 32) * p) >>> 32);
      System.arraycopy(slots, partition * r, out, 0, r);
      return r;
    };
  }

  private static boolean isMember(Fleet.Node[] nodes, int number) {
    return number < nodes.length && nodes[number] != null;
  }

  private static boolean contains(int[] values, int from, int count, int value) {
    for (int i = from; i < from + count; i++) {
      if (values[i] == value) {
        return true;
      }
    }
    return false;
  }

  private static int distinctWith(Fleet.Node[] nodes, int[] t, int base, int count, Fleet.Node extra) {
    int[] zones = new int[count + 1];
    int distinct = 0;
    for (int i = 0; i <= count; i++) {
      int z = i == count ? extra.zone() : zoneOf(nodes, t[base + i]);
      distinct = addZone(zones, distinct, z);
    }
    return distinct;
  }

  /**
   * Distinct zones among the first {@code count} slots of a partition, with slot {@code replaced} (if >= 0)
   * taken to be in {@code zone}. A departed node not yet replaced counts as a zone of its own.
   */
  private static int distinctZones(Fleet.Node[] nodes, int[] t, int base, int count, int replaced, int zone) {
    int[] zones = new int[Math.max(1, count)];
    int distinct = 0;
    for (int i = 0; i < count; i++) {
      int z = i == replaced ? zone : zoneOf(nodes, t[base + i]);
      distinct = addZone(zones, distinct, z);
    }
    return distinct;
  }

  private static int addZone(int[] zones, int distinct, int z) {
    for (int k = 0; k < distinct; k++) {
      if (zones[k] == z) {
        return distinct;
      }
    }
    zones[distinct] = z;
    return distinct + 1;
  }

  private static int zoneOf(Fleet.Node[] nodes, int number) {
    return isMember(nodes, number) ? nodes[number].zone() : -1 - number;
  }

  /** Slots and primary slots per node number, divided by weight. */
  private static final class Loads {
    private final int[] count;
    private final int[] primary;
    private final Fleet.Node[] nodes;

    Loads(Fleet.Node[] nodes) {
      this.nodes = nodes;
      count = new int[nodes.length];
      primary = new int[nodes.length];
    }

    void add(int number, boolean isPrimary, int delta) {
      count[number] += delta;
      if (isPrimary) {
        primary[number] += delta;
      }
    }

    int count(int number) {
      return count[number];
    }

    double load(Fleet.Node n) {
      return count[n.number()] / nodes[n.number()].weight();
    }

    double primaryLoad(Fleet.Node n) {
      return primary[n.number()] / nodes[n.number()].weight();
    }
  }
}
