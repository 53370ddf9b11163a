package io.ringshift.client.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which ring ranges each filling mark touches, so that a lookup, which resolves a key to a ring range only,
 * can tell the replicas still being filled without a second search.
 *
 * <p>Design: marks are computed by {@link FillingRange#between} on the elementary intervals of two rings, so a
 * mark's ends can be tokens of the previous ring that fall inside a range of this one. A node is therefore
 * marked on every ring range its marks <em>overlap</em>: for keys of such a range outside the mark that
 * excludes a replica that holds the data, never the other way round, so a read never reaches a replica that
 * is still being filled. Each mark is walked from the range holding its first position to the range holding
 * its last, O(ranges it touches).
 */
public final class FillingIndex {
  private FillingIndex() {}

  /** For each node id named by a mark, the ring ranges (by index) on which it is filling. */
  public static Map<String, BitSet> rangesByNode(RingSnapshot ring, List<FillingRange> marks) {
    Map<String, BitSet> byNode = new HashMap<>();
    int n = ring.tokenCount();
    for (FillingRange mark : marks) {
      BitSet ranges = byNode.computeIfAbsent(mark.node(), node -> new BitSet(n));
      RingRange marked = mark.range();
      if (marked.isWhole()) {
        ranges.set(0, n);
        continue;
      }
      long first = marked.start() + 1;
      int r = ring.rangeOf(first);
      for (int steps = 0; steps < n; steps++) {
        ranges.set(r);
        if (endsIn(ring, r, first, marked.end(), steps == 0)) {
          break;
        }
        r = r + 1 == n ? 0 : r + 1;
      }
    }
    return byNode;
  }

  /**
   * Whether the mark whose positions run from {@code first} to {@code last} ends in range {@code r}. In the
   * range where the walk starts, {@code last} can lie in the same range but behind {@code first}: the mark
   * then goes all the way round the ring.
   */
  private static boolean endsIn(RingSnapshot ring, int r, long first, long last, boolean startRange) {
    long start = ring.rangeStart(r);
    long end = ring.rangeEnd(r);
    if (start == end && r != 0) {
      return false; // two equal tokens: an empty range holds no position
    }
    if (!RingRange.of(start, end).contains(last)) {
      return false;
    }
    // In the start range, the mark ends here unless its last position lies behind its first one.
    return !startRange || RingRange.of(start, last).contains(first);
  }
}
