package io.ringshift.ring;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * A ring range {@code (start, end]}: the unsigned 64-bit ring positions after {@code start} up to and including
 * {@code end}, carried in a long's bits. It wraps past the top of the ring (2^64 - 1, then 0) when {@code end <=
 * start} unsigned, and {@code start == end} is the whole ring. This is the convention of docs/placement.md
 * section 6, of {@link RangeChange}, of copy tasks and of filling marks; every ringshift module does its range
 * arithmetic here.
 *
 * <p>No range is empty: the empty range between two equal tokens of a ring (placement.md section 6) has no
 * {@code RingRange}, since {@code (t, t]} is the whole ring; range arithmetic over a ring's ranges leaves those
 * out (no lookup lands in one).
 *
 * <p>Design note: positions are compared after a shift by {@code start}. Subtracting {@code start} (mod 2^64)
 * from every position turns the range into {@code (0, end - start]}, an interval that no longer wraps, so one
 * subtraction and one unsigned comparison decide {@link #contains}, with no case for wrapping ranges and none
 * for a range that ends at or starts from the top of the ring. Comparing {@code start} and {@code end} directly
 * instead needs one rule for plain ranges and another for wrapping ones, and each of the copies this type
 * replaced had its own, in a different way. The same shift gives the range's length, {@code end - start} (the
 * count of its positions, but 0 for the whole ring's 2^64), which {@link #fraction} and {@link #firstGap}
 * use, and it puts the other range of {@link #intersection} into this range's walk order, where the two can
 * meet in at most two pieces. The whole ring is the one case the shift cannot express, as its length does not
 * fit 64 bits: every operation that shifts handles it first.
 *
 * <p>{@link #toString()} is the storage node's form, {@code (%016x, %016x]}, as in its messages and task ids;
 * a message that names ranges in unsigned decimal formats them itself.
 *
 * @param start exclusive start position (unsigned)
 * @param end inclusive end position (unsigned)
 */
public record RingRange(long start, long end) {
  private static final long MAX = -1L;
  private static final double TWO_TO_64 = 0x1p64;

  /**
   * A closed interval {@code [first, last]} of unsigned positions, {@code first <= last}: one piece of a range
   * cut where the ring wraps.
   *
   * @param first the first position (inclusive)
   * @param last the last position (inclusive)
   */
  public record Interval(long first, long last) {
    public Interval {
      if (Long.compareUnsigned(first, last) > 0) {
        throw new IllegalArgumentException(String.format(Locale.ROOT,
            "interval [%s, %s]: first is above last; an interval runs from first up to last (unsigned)",
            Long.toUnsignedString(first), Long.toUnsignedString(last)));
      }
    }

    /** Whether {@code first <= position <= last} (unsigned). */
    public boolean contains(long position) {
      return Long.compareUnsigned(position, first) >= 0 && Long.compareUnsigned(position, last) <= 0;
    }
  }

  public static RingRange of(long start, long end) {
    return new RingRange(start, end);
  }

  /** The whole ring, {@code (0, 0]}. */
  public static RingRange whole() {
    return new RingRange(0, 0);
  }

  /** Whether this is the whole ring ({@code start == end}). */
  public boolean isWhole() {
    return start == end;
  }

  /**
   * Whether the range runs past the top of the ring: {@code end < start} (unsigned). The whole ring does not
   * count as wrapping, though its walk from {@code start} crosses the top too (see {@link #splitAtWrap}).
   */
  public boolean wraps() {
    return Long.compareUnsigned(start, end) > 0;
  }

  /** Whether {@code position} lies in {@code (start, end]}. */
  public boolean contains(long position) {
    if (isWhole()) {
      return true;
    }
    long offset = position - start;
    return offset != 0 && Long.compareUnsigned(offset, end - start) <= 0;
  }

  /** Whether the two ranges share a position. */
  public boolean intersects(RingRange other) {
    // Walking forward from a shared position, the first end reached is in both ranges: each piece of an
    // intersection ends at the end of one of them.
    return contains(other.end) || other.contains(end);
  }

  /**
   * The positions both ranges contain, as the fewest ranges: none, one, or two (ranges that between them go
   * round the ring more than once meet in two pieces: {@code (0, 10]} and {@code (8, 2]} share {@code (0, 2]}
   * and {@code (8, 10]}), in the order this range's walk from its start reaches them.
   */
  public List<RingRange> intersection(RingRange other) {
    if (other.isWhole()) {
      return List.of(this);
    }
    if (isWhole()) {
      return List.of(other);
    }
    // Shifted by start, this range is (0, length] and the other is (from, to].
    long length = end - start;
    long from = other.start - start;
    long to = other.end - start;
    if (Long.compareUnsigned(from, to) < 0) {
      long last = minUnsigned(to, length);
      return Long.compareUnsigned(from, last) < 0 ? List.of(shifted(from, last)) : List.of();
    }
    // The other range holds this one's start (offset 0) or ends there: its positions are [1, to] and (from, MAX].
    List<RingRange> pieces = new ArrayList<>(2);
    long firstLast = minUnsigned(to, length);
    if (firstLast != 0) {
      pieces.add(shifted(0, firstLast));
    }
    if (Long.compareUnsigned(from, length) < 0) {
      pieces.add(shifted(from, length));
    }
    return List.copyOf(pieces);
  }

  /**
   * The range as closed unsigned intervals in walk order: {@code (s, e]} with {@code s < e} is {@code [s+1, e]};
   * a wrapping range and the whole ring are {@code [s+1, MAX]} (left out when {@code s} is MAX) then
   * {@code [0, e]}. So the whole ring {@code (x, x]} starts just after {@code x} and ends at {@code x}.
   */
  public List<Interval> splitAtWrap() {
    if (Long.compareUnsigned(start, end) < 0) {
      return List.of(new Interval(start + 1, end));
    }
    if (start == MAX) {
      return List.of(new Interval(0, end));
    }
    return List.of(new Interval(start + 1, MAX), new Interval(0, end));
  }

  /**
   * The share of the keyspace the range covers, in (0, 1]: {@code ((end - start) mod 2^64) / 2^64}, or 1 for the
   * whole ring (placement.md section 8).
   */
  public double fraction() {
    long length = end - start;
    if (length == 0) {
      return 1.0;
    }
    return unsignedToDouble(length) / TWO_TO_64;
  }

  /**
   * The first position of this range, walking from its start, that no range of {@code cover} contains; empty
   * when the union of {@code cover} contains the whole range. Ranges of {@code cover} may overlap, and their
   * boundaries need not line up with this range's: what is compared is sets of positions.
   */
  public OptionalLong firstGap(Collection<RingRange> cover) {
    if (isWhole()) {
      // 2^64 positions do not fit an unsigned long count: check the two halves.
      long middle = start + Long.MIN_VALUE;
      OptionalLong gap = of(start, middle).firstGap(cover);
      return gap.isPresent() ? gap : of(middle, start).firstGap(cover);
    }
    long total = end - start; // positions in the range, 1 .. 2^64 - 1, unsigned
    long covered = 0; // positions start + 1 .. start + covered are covered
    while (Long.compareUnsigned(covered, total) < 0) {
      long position = start + covered + 1;
      boolean found = false;
      long furthest = 0; // positions after `position` that the best range of the cover also contains
      for (RingRange range : cover) {
        if (!range.contains(position)) {
          continue;
        }
        if (range.isWhole()) {
          return OptionalLong.empty();
        }
        long beyond = range.end - position;
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

  /**
   * The range cut into at most {@code parts} consecutive ranges of nearly equal length, in walk order from its
   * start; together they hold exactly its positions, each once. Fewer pieces when the range has fewer positions
   * than {@code parts}; one piece (this range) when {@code parts} is 1.
   *
   * @throws IllegalArgumentException when {@code parts} is below 1
   */
  public List<RingRange> split(int parts) {
    if (parts < 1) {
      throw new IllegalArgumentException("a range is split into " + parts + " parts; it must be at least 1");
    }
    if (parts == 1) {
      return List.of(this);
    }
    // The whole ring's 2^64 positions: each piece gets floor(2^64 / parts), the last one the remainder too.
    long length = end - start;
    long step = isWhole() ? Long.divideUnsigned(MAX, parts) + (Long.remainderUnsigned(MAX, parts) == parts - 1 ? 1 : 0)
        : Long.divideUnsigned(length, parts);
    if (step == 0) {
      List<RingRange> pieces = new ArrayList<>();
      for (long offset = 0; offset != length; offset++) {
        pieces.add(shifted(offset, offset + 1));
      }
      return List.copyOf(pieces);
    }
    List<RingRange> pieces = new ArrayList<>(parts);
    for (int i = 0; i < parts; i++) {
      long from = step * i;
      long to = i == parts - 1 ? length : step * (i + 1);
      pieces.add(shifted(from, to));
    }
    return List.copyOf(pieces);
  }

  /** The range {@code (from, to]} of offsets from {@code start}, back in ring positions. */
  private RingRange shifted(long from, long to) {
    return new RingRange(start + from, start + to);
  }

  private static long minUnsigned(long a, long b) {
    return Long.compareUnsigned(a, b) <= 0 ? a : b;
  }

  private static double unsignedToDouble(long value) {
    double d = (double) (value >>> 1) * 2.0;
    return d + (value & 1L);
  }

  @Override
  public String toString() {
    return String.format("(%016x, %016x]", start, end);
  }
}
