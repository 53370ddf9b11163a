package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The ring positions of a list of ranges, as sorted, disjoint intervals (overlapping and adjacent ones merged), so
 * that a change feed of many ranges tests a position with one binary search instead of one test per range.
 */
final class PositionSet {
  /** First positions of the intervals, ascending (unsigned). */
  private final long[] firsts;
  /** Last positions of the intervals, in the same order. */
  private final long[] lasts;

  private PositionSet(long[] firsts, long[] lasts) {
    this.firsts = firsts;
    this.lasts = lasts;
  }

  static PositionSet of(List<RingRange> ranges) {
    List<RingRange.Interval> intervals = new ArrayList<>();
    for (RingRange range : ranges) {
      intervals.addAll(range.splitAtWrap());
    }
    intervals.sort(Comparator.comparing(RingRange.Interval::first, Long::compareUnsigned));
    long[] firsts = new long[intervals.size()];
    long[] lasts = new long[intervals.size()];
    int n = 0;
    for (RingRange.Interval i : intervals) {
      // Merge with the previous interval when it overlaps or touches it (its last + 1 >= this first, no overflow).
      if (n > 0 && (lasts[n - 1] == -1L || Long.compareUnsigned(lasts[n - 1] + 1, i.first()) >= 0)) {
        if (Long.compareUnsigned(i.last(), lasts[n - 1]) > 0) {
          lasts[n - 1] = i.last();
        }
        continue;
      }
      firsts[n] = i.first();
      lasts[n] = i.last();
      n++;
    }
    return new PositionSet(Arrays.copyOf(firsts, n), Arrays.copyOf(lasts, n));
  }

  boolean contains(long position) {
    // The last interval whose first is <= position.
    int low = 0;
    int high = firsts.length - 1;
    int found = -1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (Long.compareUnsigned(firsts[mid], position) <= 0) {
        found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return found >= 0 && Long.compareUnsigned(position, lasts[found]) <= 0;
  }

  /** How many disjoint intervals the ranges came to. */
  int intervals() {
    return firsts.length;
  }
}
