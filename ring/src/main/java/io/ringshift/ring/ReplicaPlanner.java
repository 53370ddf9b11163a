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
 *
 * <p>The walk may go round the ring twice. With fewer zones than R, a node passed over in the first lap
 * because its zone was already used becomes eligible once every zone is used; only a second lap reaches it
 * again, so without it a ring of nodes {a1, a2} in one zone and {b1} in another could give a range only two
 * of its three nodes. The first lap always uses every zone or fills the set, so the second lap only ever
 * runs on rings with fewer zones than R.
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
    int[] picked = new int[target];
    boolean[] zoneUsed = new boolean[zoneCount];
    for (int range = 0; range < n; range++) {
      int count = 0;
      int zonesUsed = 0;
      java.util.Arrays.fill(zoneUsed, false);
      for (int step = 0; step < 2 * n && count < target; step++) {
        int t = (range + step) % n;
        int m = owners[t];
        if (contains(picked, count, m)) {
          continue;
        }
        int z = memberZone[m];
        if (zonesUsed < zoneCount && zoneUsed[z]) {
          continue;
        }
        picked[count++] = m;
        if (!zoneUsed[z]) {
          zoneUsed[z] = true;
          zonesUsed++;
        }
      }
      int[] indexes = java.util.Arrays.copyOf(picked, count);
      Member[] set = new Member[count];
      for (int i = 0; i < count; i++) {
        set[i] = members[indexes[i]];
      }
      sets[range] = new ReplicaSet(set, indexes, shortfall);
    }
    return sets;
  }

  private static boolean contains(int[] values, int count, int value) {
    for (int i = 0; i < count; i++) {
      if (values[i] == value) {
        return true;
      }
    }
    return false;
  }
}
