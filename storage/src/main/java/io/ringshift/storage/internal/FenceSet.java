package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Fence;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The fences in force, immutable: a write checks it without a lock on the read path of the fences themselves
 * (the store swaps in a new set under its write lock). A check is a linear pass, which is fast for the few
 * hundred fences one migration puts on a node.
 */
final class FenceSet {
  private static final Comparator<Fence> OLDEST_FIRST = Comparator.comparingLong(Fence::position)
      .thenComparingLong(Fence::epoch)
      .thenComparing(f -> f.range().start(), Long::compareUnsigned)
      .thenComparing(f -> f.range().end(), Long::compareUnsigned);

  static final FenceSet EMPTY = new FenceSet(List.of());

  private final List<Fence> fences;

  private FenceSet(List<Fence> fences) {
    this.fences = fences;
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
    Fence refusing = null;
    for (Fence f : fences) {
      if (f.epoch() > epoch && f.range().contains(position) && (refusing == null || f.epoch() > refusing.epoch())) {
        refusing = f;
      }
    }
    return refusing;
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
}
