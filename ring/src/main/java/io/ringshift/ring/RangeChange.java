package io.ringshift.ring;

import java.util.ArrayList;
import java.util.List;

/**
 * One ring range {@code (start, end]} whose replica set differs between two snapshots. Positions are unsigned
 * 64-bit values; a range with {@code Long.compareUnsigned(start, end) >= 0} wraps past the top of the ring,
 * and {@code start == end} covers the whole ring.
 *
 * @param start exclusive start position
 * @param end inclusive end position
 * @param before replica ids in preference order in the old snapshot
 * @param after replica ids in preference order in the new snapshot
 */
public record RangeChange(long start, long end, List<String> before, List<String> after) {
  private static final double TWO_TO_64 = 0x1p64;

  public RangeChange {
    before = List.copyOf(before);
    after = List.copyOf(after);
    if (before.equals(after)) {
      throw RingException.of("range (%s, %s] has the same replicas %s before and after; it is not a change",
          Long.toUnsignedString(start), Long.toUnsignedString(end), before);
    }
  }

  /** The fraction of the whole keyspace this range covers, in (0, 1]. */
  public double fraction() {
    return fraction(start, end);
  }

  /** Nodes that hold the range afterwards but not before: the copy targets. */
  public List<String> added() {
    List<String> added = new ArrayList<>(after);
    added.removeAll(before);
    return added;
  }

  /** Nodes that held the range before but not afterwards: cleanup candidates. */
  public List<String> removed() {
    List<String> removed = new ArrayList<>(before);
    removed.removeAll(after);
    return removed;
  }

  /** True when the primary owner changed. */
  public boolean primaryChanged() {
    String oldPrimary = before.isEmpty() ? null : before.get(0);
    String newPrimary = after.isEmpty() ? null : after.get(0);
    return oldPrimary == null ? newPrimary != null : !oldPrimary.equals(newPrimary);
  }

  /** True when {@code position} lies in this range. */
  public boolean contains(long position) {
    return contains(start, end, position);
  }

  /** The fraction of the keyspace covered by {@code (start, end]}; a range with start == end is the ring. */
  public static double fraction(long start, long end) {
    long length = end - start;
    if (length == 0) {
      return 1.0;
    }
    return unsignedToDouble(length) / TWO_TO_64;
  }

  /** True when {@code position} lies in {@code (start, end]}, wrapping past the top of the ring. */
  public static boolean contains(long start, long end, long position) {
    if (start == end) {
      return true;
    }
    // Shift so that start becomes 0; then (start, end] is (0, end - start] in unsigned order.
    long offset = position - start;
    return offset != 0 && Long.compareUnsigned(offset, end - start) <= 0;
  }

  static double unsignedToDouble(long value) {
    double d = (double) (value >>> 1) * 2.0;
    return d + (value & 1L);
  }

  @Override
  public String toString() {
    return "(" + Long.toUnsignedString(start) + ", " + Long.toUnsignedString(end) + "] " + before + " -> " + after;
  }
}
