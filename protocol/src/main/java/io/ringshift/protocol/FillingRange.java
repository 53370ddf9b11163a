package io.ringshift.protocol;

import io.ringshift.ring.RangeChange;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A ring range {@code (start, end]} (unsigned tokens, wrapping through 0 when {@code end <= start}; {@code start ==
 * end} is the whole ring) on which replica {@code node} is placed but not complete yet: a failure epoch's repair
 * target. Clients send it writes but do not read from it until an epoch without the mark is published.
 */
public record FillingRange(long start, long end, String node) {
  /** Order of {@link RingSnapshot} filling lists: start (unsigned), then node id. */
  public static final Comparator<FillingRange> ORDER = Comparator
      .comparing(FillingRange::start, Long::compareUnsigned)
      .thenComparing(FillingRange::node);

  public FillingRange {
    Objects.requireNonNull(node, "node");
    if (node.isBlank()) {
      throw new IllegalArgumentException("filling range (" + Long.toUnsignedString(start) + ", "
          + Long.toUnsignedString(end) + "]: node id is blank; it must name a member of the snapshot");
    }
  }

  /** The marked range. */
  public RingRange range() {
    return RingRange.of(start, end);
  }

  /** Whether the range contains the ring position (unsigned, wrapping). */
  public boolean contains(long position) {
    return range().contains(position);
  }

  /**
   * The filling marks of {@code next} relative to {@code complete}, the last ring whose replicas all hold their
   * data: every (range, node) where {@code next} places a replica that {@code complete} did not. Only the nodes
   * that the change added are incomplete, because a node that was a replica of the range in the complete ring
   * kept receiving its writes. Sorted by {@link #ORDER}, adjacent ranges of one node coalesced; deterministic, so
   * the orchestrator, the publisher and audit compute the same list.
   */
  public static List<FillingRange> between(RingSnapshot complete, RingSnapshot next) {
    List<FillingRange> marks = new ArrayList<>();
    for (RangeChange change : RingDiff.between(complete, next).changes()) {
      for (String added : change.added()) {
        marks.add(new FillingRange(change.start(), change.end(), added));
      }
    }
    marks.sort(ORDER);
    return coalesce(marks);
  }

  /** Merges ranges of one node that touch ({@code a.end == b.start}); the input is sorted by {@link #ORDER}. */
  private static List<FillingRange> coalesce(List<FillingRange> sorted) {
    Map<String, List<FillingRange>> byNode = new TreeMap<>();
    for (FillingRange r : sorted) {
      List<FillingRange> ranges = byNode.computeIfAbsent(r.node, n -> new ArrayList<>());
      FillingRange last = ranges.isEmpty() ? null : ranges.get(ranges.size() - 1);
      if (last != null && last.end == r.start && last.start != last.end && r.start != r.end) {
        ranges.set(ranges.size() - 1, new FillingRange(last.start, r.end, r.node));
      } else {
        ranges.add(r);
      }
    }
    List<FillingRange> out = new ArrayList<>(sorted.size());
    byNode.values().forEach(out::addAll);
    out.sort(ORDER);
    return List.copyOf(out);
  }

  @Override
  public String toString() {
    return "(" + Long.toUnsignedString(start) + ", " + Long.toUnsignedString(end) + "] " + node;
  }
}
