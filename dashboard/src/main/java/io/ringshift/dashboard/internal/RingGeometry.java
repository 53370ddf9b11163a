package io.ringshift.dashboard.internal;

import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A ring as the page draws it: its members, and its ranges in token order, each as the fraction of the circle where
 * it ends (a range runs from the previous range's end, the first one from the last one's, through 0) and the index of
 * its primary owner. With a base ring, each range also says whether its replica set differs there: what the epoch
 * in flight moves. Pure.
 */
public final class RingGeometry {
  private static final double TWO_TO_MINUS_64 = 0x1.0p-64;

  private RingGeometry() {}

  /** The fraction of the circle of an unsigned 64-bit token, in [0, 1). */
  static double fraction(long token) {
    // Unsigned: the top bit is worth 2^63.
    double value = (token >>> 1) * 2.0 + (token & 1);
    return value * TWO_TO_MINUS_64;
  }

  /** {@code ring} as a tree of plain values for JSON; {@code base} marks the ranges whose replicas differ from it. */
  public static Map<String, Object> of(RingSnapshot ring, RingSnapshot base) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("epoch", ring.epoch());
    out.put("checksum", ring.checksumHex());
    out.put("vnodes", ring.vnodes());
    out.put("replicas", ring.replicas());
    List<Map<String, Object>> members = new ArrayList<>();
    for (Member m : ring.members()) {
      Map<String, Object> member = new LinkedHashMap<>();
      member.put("id", m.id());
      member.put("zone", m.zone());
      member.put("weight", m.weight());
      members.add(member);
    }
    out.put("members", members);
    int ranges = ring.tokenCount();
    double[] ends = new double[ranges];
    int[] owners = new int[ranges];
    int changedCount = 0;
    boolean[] changed = base == null ? null : new boolean[ranges];
    for (int r = 0; r < ranges; r++) {
      ends[r] = Math.round(fraction(ring.rangeEnd(r)) * 1e7) / 1e7;
      owners[r] = ring.replicasOfRange(r).memberIndex(0);
      if (base != null) {
        changed[r] = !ring.replicasOfRange(r).sameIds(base.replicasAt(ring.rangeEnd(r)));
        changedCount += changed[r] ? 1 : 0;
      }
    }
    out.put("ends", ends);
    out.put("owners", owners);
    if (changed != null) {
      out.put("changed", changed);
      out.put("changedRanges", changedCount);
    }
    return out;
  }
}
