package io.ringshift.ring;

import java.util.ArrayList;
import java.util.List;

/**
 * One ring range {@code (start, end]} whose replica set differs between two snapshots: {@link #range()}, with the
 * convention of {@link RingRange} (unsigned positions, wrapping past the top of the ring when {@code end <=
 * start}, {@code start == end} the whole ring).
 *
 * @param start exclusive start position
 * @param end inclusive end position
 * @param before replica ids in preference order in the old snapshot
 * @param after replica ids in preference order in the new snapshot
 */
public record RangeChange(long start, long end, List<String> before, List<String> after) {
  public RangeChange {
    before = List.copyOf(before);
    after = List.copyOf(after);
    if (before.equals(after)) {
      throw RingException.of("range (%s, %s] has the same replicas %s before and after; it is not a change",
          Long.toUnsignedString(start), Long.toUnsignedString(end), before);
    }
  }

  /** The changed range. */
  public RingRange range() {
    return RingRange.of(start, end);
  }

  /** The fraction of the whole keyspace this range covers, in (0, 1]. */
  public double fraction() {
    return range().fraction();
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
    return range().contains(position);
  }

  @Override
  public String toString() {
    return "(" + Long.toUnsignedString(start) + ", " + Long.toUnsignedString(end) + "] " + before + " -> " + after;
  }
}
