package io.ringshift.publisher.internal;

import io.ringshift.ring.RangeChange;
import java.util.Collection;
import java.util.OptionalLong;

/**
 * A ring range {@code (start, end]} of unsigned 64-bit positions, wrapping past the top of the ring when {@code end
 * <= start}; {@code start == end} is the whole ring (the convention of {@link RangeChange}, tasks and filling
 * marks).
 *
 * <p>Why a helper of its own: the publisher compares ranges drawn from different sources (a diff, coalesced tasks,
 * coalesced filling marks), whose boundaries need not line up, so it asks questions of position sets (is this
 * range inside the union of those?) rather than comparing ranges for equality.
 */
record Arc(long start, long end) {
  boolean wholeRing() {
    return start == end;
  }

  boolean contains(long position) {
    return RangeChange.contains(start, end, position);
  }

  /**
   * Whether the two ranges share a position. Two arcs meet exactly when one contains the other's end: each piece
   * of their intersection ends at the end of one of them.
   */
  boolean intersects(Arc other) {
    return contains(other.end) || other.contains(end);
  }

  /**
   * The first position of this range, walking from its start, that none of {@code cover} contains; empty when the
   * union of {@code cover} contains the whole range.
   */
  OptionalLong firstGap(Collection<Arc> cover) {
    if (wholeRing()) {
      // 2^64 positions do not fit an unsigned long count: check the two halves.
      long middle = start + Long.MIN_VALUE;
      OptionalLong gap = new Arc(start, middle).firstGap(cover);
      return gap.isPresent() ? gap : new Arc(middle, start).firstGap(cover);
    }
    long total = end - start; // positions in the range, 1 .. 2^64 - 1, unsigned
    long covered = 0; // positions start + 1 .. start + covered are covered
    while (Long.compareUnsigned(covered, total) < 0) {
      long position = start + covered + 1;
      boolean found = false;
      long furthest = 0; // positions after `position` that the best arc also covers
      for (Arc arc : cover) {
        if (!arc.contains(position)) {
          continue;
        }
        if (arc.wholeRing()) {
          return OptionalLong.empty();
        }
        long beyond = arc.end - position;
        if (!found || Long.compareUnsigned(beyond, furthest) > 0) {
          furthest = beyond;
          found = true;
        }
      }
      if (!found) {
        return OptionalLong.of(position);
      }
      long remaining = total - covered;
      if (Long.compareUnsigned(furthest, remaining - 1) >= 0) {
        return OptionalLong.empty();
      }
      covered += 1 + furthest;
    }
    return OptionalLong.empty();
  }

  @Override
  public String toString() {
    return "(" + Long.toUnsignedString(start) + ", " + Long.toUnsignedString(end) + "]";
  }
}
