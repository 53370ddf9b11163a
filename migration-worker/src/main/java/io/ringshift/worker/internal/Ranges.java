package io.ringshift.worker.internal;

import io.ringshift.storage.RingRange;
import java.util.ArrayList;
import java.util.List;

/** Ring-range arithmetic the worker needs: whether two wrapping ranges {@code (start, end]} share a position. */
final class Ranges {
  private Ranges() {}

  static boolean overlap(RingRange a, RingRange b) {
    if (a.isWhole() || b.isWhole()) {
      return true;
    }
    for (long[] x : closedPieces(a)) {
      for (long[] y : closedPieces(b)) {
        if (Long.compareUnsigned(x[0], y[1]) <= 0 && Long.compareUnsigned(y[0], x[1]) <= 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** A range as closed unsigned intervals [lo, hi]: one piece, or two when it wraps. */
  private static List<long[]> closedPieces(RingRange r) {
    List<long[]> pieces = new ArrayList<>(2);
    if (!r.wraps()) {
      pieces.add(new long[] {r.start() + 1, r.end()});
    } else {
      if (r.start() != -1L) {
        pieces.add(new long[] {r.start() + 1, -1L});
      }
      pieces.add(new long[] {0L, r.end()});
    }
    return pieces;
  }
}
