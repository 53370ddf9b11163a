package io.ringshift.ring.internal;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The balanced token allocator (docs/placement.md, section 12): chooses the tokens of the members of a ring under
 * the balanced policy, given the tokens they already hold.
 *
 * <p>Model: with as many zones as replicas, the replica of a position in zone {@code z} is the owner of the first
 * token of a zone-{@code z} member at or after it, so a member's replica load is the sum of the arcs between each
 * of its tokens and the previous token of its zone: each zone is a ring of its own. The allocator balances every
 * zone's ring: a zone whose members hold no token yet gets evenly spaced tokens, dealt to its members in
 * proportion to their token counts; a member that needs more tokens (a join, a weight increase) takes each one
 * from the most loaded member of its zone, cutting that member's largest arc so that the joiner reaches its share
 * in equal bites. A member that needs fewer tokens (a weight decrease) keeps its first ones. Existing tokens never
 * move, so a join moves data only to the joiner and a removal only away from the removed member.
 *
 * <p>Everything is integer arithmetic, so that any language reproduces the tokens bit for bit: loads are in units
 * of {@value #UNIT} positions ({@code floor(arc / 256)} per arc), and products are exact.
 */
public final class BalancedTokens {
  /** Loads are counted in units of 2^8 = 256 positions, so that a zone's whole ring (2^56 units) fits a long. */
  static final int UNIT_SHIFT = 8;

  static final int UNIT = 1 << UNIT_SHIFT;
  private static final long WHOLE_RING_UNITS = 1L << (64 - UNIT_SHIFT);

  private BalancedTokens() {}

  /** Thrown when a zone's ring is too dense to cut an arc in two (arcs shorter than 512 positions). */
  public static final class TooDenseException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooDenseException(String message) {
      super(message);
    }
  }

  /**
   * The tokens of every member.
   *
   * @param counts each member's token count, members in canonical order, each &gt;= 1
   * @param memberZone each member's zone index (zones in canonical order)
   * @param zoneCount number of zones
   * @param given the tokens each member already holds, in index order, or null; only the first {@code counts[m]}
   *     are kept. Tokens of one zone must be distinct.
   * @return {@code counts[m]} tokens for each member, in index order: the kept ones first
   */
  public static long[][] allocate(int[] counts, int[] memberZone, int zoneCount, long[][] given) {
    int n = counts.length;
    long[][] out = new long[n][];
    List<List<Integer>> zoneMembers = new ArrayList<>();
    for (int z = 0; z < zoneCount; z++) {
      zoneMembers.add(new ArrayList<>());
    }
    for (int m = 0; m < n; m++) {
      long[] had = given[m] == null ? new long[0] : given[m];
      out[m] = Arrays.copyOf(had, Math.min(had.length, counts[m]));
      zoneMembers.get(memberZone[m]).add(m);
    }
    for (int z = 0; z < zoneCount; z++) {
      List<Integer> members = zoneMembers.get(z);
      boolean anyKept = members.stream().anyMatch(m -> out[m].length > 0);
      if (anyKept) {
        new ZoneRing(members, counts, out).extend();
      } else {
        spread(members, counts, z, zoneCount, out);
      }
    }
    return out;
  }

  /**
   * A zone with no token yet: S = the sum of its members' counts evenly spaced tokens, token k at {@code offset +
   * floor(k * 2^64 / S)} with {@code offset = floor(z * 2^64 / (Z * S))}, dealt by smooth weighted round robin.
   */
  private static void spread(List<Integer> members, int[] counts, int zone, int zoneCount, long[][] out) {
    int size = members.size();
    long total = 0;
    for (int m : members) {
      total += counts[m];
    }
    BigInteger s = BigInteger.valueOf(total);
    long offset = BigInteger.valueOf(zone).shiftLeft(64).divide(s.multiply(BigInteger.valueOf(zoneCount)))
        .longValue();
    long[] current = new long[size];
    int[] filled = new int[size];
    long[][] tokens = new long[size][];
    for (int i = 0; i < size; i++) {
      tokens[i] = new long[counts[members.get(i)]];
    }
    for (long k = 0; k < total; k++) {
      int best = 0;
      for (int i = 0; i < size; i++) {
        current[i] += counts[members.get(i)];
        if (current[i] > current[best]) {
          best = i;
        }
      }
      current[best] -= total;
      long position = offset + BigInteger.valueOf(k).shiftLeft(64).divide(s).longValue();
      tokens[best][filled[best]++] = position;
    }
    for (int i = 0; i < size; i++) {
      out[members.get(i)] = tokens[i];
    }
  }

  /** The ring of one zone's tokens, with each member's load, extended member by member. */
  private static final class ZoneRing {
    private final List<Integer> members;
    private final int[] counts;
    private final long[][] out;
    /** Tokens of the zone (keys with the sign bit flipped, so that signed order is unsigned order) to member. */
    private final TreeMap<Long, Integer> ring = new TreeMap<>();
    private final Map<Integer, Long> load = new HashMap<>();
    private final Map<Integer, List<Long>> tokensOf = new HashMap<>();
    private long totalCount;

    ZoneRing(List<Integer> members, int[] counts, long[][] out) {
      this.members = members;
      this.counts = counts;
      this.out = out;
      for (int m : members) {
        totalCount += counts[m];
        load.put(m, 0L);
        tokensOf.put(m, new ArrayList<>());
        for (long t : out[m]) {
          if (ring.put(t ^ Long.MIN_VALUE, m) != null) {
            throw new IllegalArgumentException(String.format("token %016x appears twice in one zone", t));
          }
          tokensOf.get(m).add(t);
        }
      }
      for (Map.Entry<Long, Integer> e : ring.entrySet()) {
        load.merge(e.getValue(), arc(e.getKey()).units, Long::sum);
      }
    }

    void extend() {
      long zoneUnits = 0;
      for (long l : load.values()) {
        zoneUnits += l;
      }
      for (int m : members) {
        for (int j = out[m].length; j < counts[m]; j++) {
          place(m, j, zoneUnits);
        }
        out[m] = tokensOf.get(m).stream().mapToLong(Long::longValue).toArray();
      }
    }

    private void place(int m, int j, long zoneUnits) {
      long target = BigInteger.valueOf(zoneUnits).multiply(BigInteger.valueOf(counts[m]))
          .divide(BigInteger.valueOf(totalCount)).longValue();
      long need = target - load.get(m);
      long remaining = counts[m] - j;
      long bite = need > 0 ? (need + remaining - 1) / remaining : 1;
      int donor = -1;
      for (int y : members) {
        if (y == m || tokensOf.get(y).isEmpty()) {
          continue;
        }
        if (donor < 0 || compareProducts(load.get(y), counts[donor], load.get(donor), counts[y]) > 0) {
          donor = y;
        }
      }
      boolean alone = donor < 0;
      if (alone) {
        donor = m; // the only member of the zone that holds tokens: it cuts its own largest arc in half
      }
      Arc largest = null;
      for (long t : tokensOf.get(donor)) {
        Arc a = arc(t ^ Long.MIN_VALUE);
        if (largest == null || a.units > largest.units
            || (a.units == largest.units && Long.compareUnsigned(a.end, largest.end) < 0)) {
          largest = a;
        }
      }
      long take = alone ? largest.units / 2 : Math.min(bite, largest.units - 1);
      if (take < 1) {
        throw new TooDenseException(String.format(
            "the zone's largest arc of its most loaded member is %d positions; the balanced allocator needs at "
                + "least %d to cut it (too many tokens in one zone)", largest.units << UNIT_SHIFT, 2 * UNIT));
      }
      long position = largest.start + (take << UNIT_SHIFT);
      ring.put(position ^ Long.MIN_VALUE, m);
      tokensOf.get(m).add(position);
      load.merge(donor, -take, Long::sum);
      load.merge(m, take, Long::sum);
    }

    /** The arc (previous token of the zone, token], in units. */
    private Arc arc(long key) {
      Map.Entry<Long, Integer> before = ring.lowerEntry(key);
      if (before == null) {
        before = ring.lastEntry();
      }
      long end = key ^ Long.MIN_VALUE;
      long start = before.getKey() ^ Long.MIN_VALUE;
      long units = start == end ? WHOLE_RING_UNITS : (end - start) >>> UNIT_SHIFT;
      return new Arc(start, end, units);
    }
  }

  private record Arc(long start, long end, long units) {}

  /** Compares {@code a * b} with {@code c * d}, exactly, for non-negative longs. */
  static int compareProducts(long a, long b, long c, long d) {
    long highLeft = Math.multiplyHigh(a, b);
    long highRight = Math.multiplyHigh(c, d);
    if (highLeft != highRight) {
      return Long.compare(highLeft, highRight);
    }
    return Long.compareUnsigned(a * b, c * d);
  }
}
