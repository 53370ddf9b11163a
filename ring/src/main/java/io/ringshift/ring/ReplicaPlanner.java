package io.ringshift.ring;

import io.ringshift.ring.internal.TokenTable;

/**
 * Computes the replica set of every range once, at build time.
 *
 * <p>The walk for the range ending at token {@code t}: start at {@code t}, go clockwise over the tokens, and
 * take the token's node when it is not taken yet and, while some zone of the ring is not used yet, only when
 * the node's zone is unused. Stop after {@code min(R, nodes)} picks. Because the rule depends only on the picks
 * so far, the first {@code r} replicas of an R-walk are the r-walk: a client asking for fewer replicas takes a
 * prefix.
 */
final class ReplicaPlanner {
  private ReplicaPlanner() {}

  static ReplicaSet[] plan(TokenTable table, Member[] members, int[] memberZone, int zoneCount, int replicas) {
    int n = table.size();
    int[] owners = table.owners;
    int target = Math.min(replicas, members.length);
    UnderReplication.Reason shortfall = null;
    if (members.length < replicas) {
      shortfall = UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS;
    } else if (zoneCount < replicas) {
      shortfall = UnderReplication.Reason.FEWER_ZONES_THAN_REPLICAS;
    }
    ReplicaSet[] sets = new ReplicaSet[n];
    // One flat table for all ranges (stride = target) instead of an int[] per range: fewer objects to build.
    int[] replicaTable = new int[n * target];
    boolean[] zoneUsed = new boolean[zoneCount];
    int[] usedZones = new int[target];
    for (int range = 0; range < n; range++) {
      int base = range * target;
      int count = 0;
      int zonesUsed = 0;
      for (int step = 0; step < n && count < target; step++) {
        int t = range + step;
        if (t >= n) {
          t -= n;
        }
        int m = owners[t];
        if (contains(replicaTable, base, count, m)) {
          continue;
        }
        int z = memberZone[m];
        if (zonesUsed < zoneCount && zoneUsed[z]) {
          continue;
        }
        replicaTable[base + count++] = m;
        if (!zoneUsed[z]) {
          zoneUsed[z] = true;
          usedZones[zonesUsed++] = z;
        }
      }
      for (int i = 0; i < zonesUsed; i++) {
        zoneUsed[usedZones[i]] = false;
      }
      Member[] set = new Member[count];
      for (int i = 0; i < count; i++) {
        set[i] = members[replicaTable[base + i]];
      }
      sets[range] = new ReplicaSet(set, replicaTable, base, shortfall);
    }
    return sets;
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
