package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Fence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The fences in force, immutable: a write checks it without a lock on the read path of the fences themselves
 * (the store swaps in a new set under its write lock).
 *
 * <p>Design. A write asks one question: the highest-epoch fence whose range contains the write's position. The set
 * answers it from an index built when the set is built (fences change rarely, writes constantly): every fence's
 * start and end cut the ring into elementary intervals that each fence covers wholly or not at all, and each
 * interval keeps its highest-epoch fence. A check is then one binary search over the boundaries, whatever the
 * number of fences: the write path costs the same with 10 fences or 100,000 (it used to scan them all, under the
 * write mutex). Building costs the sum, over the fences, of the intervals each covers.
 */
final class FenceSet {
  private static final Comparator<Fence> OLDEST_FIRST = Comparator.comparingLong(Fence::position)
      .thenComparingLong(Fence::epoch)
      .thenComparing(f -> f.range().start(), Long::compareUnsigned)
      .thenComparing(f -> f.range().end(), Long::compareUnsigned);

  static final FenceSet EMPTY = new FenceSet(List.of());

  private final List<Fence> fences;
  /** Interval boundaries, unsigned order, stored with the sign bit flipped so that signed order sorts them. */
  private final long[] bounds;
  /** The highest-epoch fence covering interval i = (bounds[i-1], bounds[i]] (interval 0 wraps); null for none. */
  private final Fence[] highest;

  private FenceSet(List<Fence> fences) {
    this.fences = fences;
    long[] points = new long[fences.size() * 2];
    int n = 0;
    for (Fence f : fences) {
      points[n++] = f.range().start() ^ Long.MIN_VALUE;
      points[n++] = f.range().end() ^ Long.MIN_VALUE;
    }
    this.bounds = Arrays.stream(points).sorted().distinct().toArray();
    this.highest = new Fence[bounds.length];
    for (Fence f : fences) {
      int from = index(f.range().start());
      int count = f.range().isWhole() ? bounds.length : Math.floorMod(index(f.range().end()) - from, bounds.length);
      for (int k = 1; k <= count; k++) {
        int i = (from + k) % bounds.length;
        if (highest[i] == null || f.epoch() > highest[i].epoch()) {
          highest[i] = f;
        }
      }
    }
  }

  static FenceSet of(List<Fence> fences) {
    List<Fence> sorted = new ArrayList<>(fences);
    sorted.sort(OLDEST_FIRST);
    return new FenceSet(List.copyOf(sorted));
  }

  List<Fence> all() {
    return fences;
  }

  /** The fence that refuses a write at {@code position} for {@code epoch}: the highest-epoch one, or null. */
  Fence refusing(long position, long epoch) {
    if (bounds.length == 0) {
      return null;
    }
    // The interval holding the position: the first boundary at or after it, else (past the last) interval 0.
    int i = Arrays.binarySearch(bounds, position ^ Long.MIN_VALUE);
    if (i < 0) {
      i = -i - 1;
      if (i == bounds.length) {
        i = 0;
      }
    }
    Fence f = highest[i];
    return f != null && f.epoch() > epoch ? f : null;
  }

  Fence find(RingRange range, long epoch) {
    for (Fence f : fences) {
      if (f.range().equals(range) && f.epoch() == epoch) {
        return f;
      }
    }
    return null;
  }

  FenceSet with(Fence fence) {
    List<Fence> next = new ArrayList<>(fences);
    next.add(fence);
    return of(next);
  }

  FenceSet without(Fence fence) {
    List<Fence> next = new ArrayList<>(fences);
    next.remove(fence);
    return of(next);
  }

  private int index(long boundary) {
    return Arrays.binarySearch(bounds, boundary ^ Long.MIN_VALUE);
  }
}
