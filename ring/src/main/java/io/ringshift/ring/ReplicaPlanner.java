package io.ringshift.ring;

import io.ringshift.ring.internal.TokenTable;
import java.util.Arrays;

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
 *
 * <p>Cost: on a balanced ring each walk looks at a handful of tokens. Two exact shortcuts keep skewed rings
 * from turning the build quadratic, without changing any pick: (1) after looking at a token the walk jumps
 * past the rest of its node's run of consecutive tokens (those tokens would all be skipped: same node, same
 * state), so a heavy node's long runs cost one step each; (2) when a walk has taken many steps while some zone
 * is still unused (a zone with few tokens), it jumps straight to the next token of any unused zone, found by
 * binary search in per-zone token lists, since every token in between belongs to a used zone and is skipped.
 */
final class ReplicaPlanner {
  /** Steps a walk takes one by one before it starts jumping to unused zones. */
  private static final int LINEAR_STEPS = 32;

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
    int[] nextRun = nextRunStarts(owners);
    int[][] zoneTokens = null; // built on first need: balanced rings never need it
    ReplicaSet[] sets = new ReplicaSet[n];
    // One flat table for all ranges (stride = target) instead of an int[] per range: fewer objects to build.
    int[] replicaTable = new int[n * target];
    boolean[] zoneUsed = new boolean[zoneCount];
    int[] usedZones = new int[target];
    long laps = 2L * n;
    for (int range = 0; range < n; range++) {
      int base = range * target;
      int count = 0;
      int zonesUsed = 0;
      int t = range;
      long travelled = 0;
      int steps = 0;
      while (count < target && travelled < laps) {
        if (zonesUsed < zoneCount && steps >= LINEAR_STEPS) {
          if (zoneTokens == null) {
            zoneTokens = tokensByZone(owners, memberZone, zoneCount);
          }
          int next = nextTokenOfUnusedZone(zoneTokens, zoneUsed, t, n);
          travelled += forwardDistance(t, next, n);
          if (travelled >= laps) {
            break;
          }
          t = next;
        }
        int m = owners[t];
        int z = memberZone[m];
        if (!contains(replicaTable, base, count, m) && !(zonesUsed < zoneCount && zoneUsed[z])) {
          replicaTable[base + count++] = m;
          if (!zoneUsed[z]) {
            zoneUsed[z] = true;
            usedZones[zonesUsed++] = z;
          }
        }
        int next = nextRun[t];
        travelled += distance(t, next, n);
        t = next;
        steps++;
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

  /**
   * For each token, the index of the next token (clockwise, wrapping) owned by another node; a token whose
   * node owns the whole ring points one step ahead, so the walk still advances and ends by its lap bound.
   */
  static int[] nextRunStarts(int[] owners) {
    int n = owners.length;
    int[] next = new int[n];
    // The first run start of the table is where a walk from the last token's run continues (wrapping).
    int firstChange = -1;
    for (int i = 0; i < n && firstChange < 0; i++) {
      if (owners[i] != owners[(i + n - 1) % n]) {
        firstChange = i;
      }
    }
    if (firstChange < 0) {
      for (int i = 0; i < n; i++) {
        next[i] = (i + 1) % n;
      }
      return next;
    }
    int following = firstChange;
    for (int i = n - 1; i >= 0; i--) {
      next[i] = following;
      if (owners[i] != owners[(i + n - 1) % n]) {
        following = i;
      }
    }
    return next;
  }

  private static int[][] tokensByZone(int[] owners, int[] memberZone, int zoneCount) {
    int[] counts = new int[zoneCount];
    for (int owner : owners) {
      counts[memberZone[owner]]++;
    }
    int[][] byZone = new int[zoneCount][];
    for (int z = 0; z < zoneCount; z++) {
      byZone[z] = new int[counts[z]];
    }
    Arrays.fill(counts, 0);
    for (int t = 0; t < owners.length; t++) {
      int z = memberZone[owners[t]];
      byZone[z][counts[z]++] = t;
    }
    return byZone;
  }

  /** The nearest token at or after {@code t} (clockwise) whose node is in a zone not used yet. */
  private static int nextTokenOfUnusedZone(int[][] zoneTokens, boolean[] zoneUsed, int t, int n) {
    int best = -1;
    int bestDistance = Integer.MAX_VALUE;
    for (int z = 0; z < zoneTokens.length; z++) {
      if (zoneUsed[z]) {
        continue;
      }
      int[] tokens = zoneTokens[z];
      int i = Arrays.binarySearch(tokens, t);
      if (i < 0) {
        i = -i - 1;
      }
      int candidate = i < tokens.length ? tokens[i] : tokens[0];
      int d = forwardDistance(t, candidate, n);
      if (d < bestDistance) {
        bestDistance = d;
        best = candidate;
      }
    }
    return best;
  }

  /** Clockwise distance in tokens from {@code from} to {@code to}; a full lap when they are equal. */
  private static int distance(int from, int to, int n) {
    return to > from ? to - from : to + n - from;
  }

  /** Clockwise distance in tokens from {@code from} to {@code to}; 0 when they are equal. */
  private static int forwardDistance(int from, int to, int n) {
    return to >= from ? to - from : to + n - from;
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
