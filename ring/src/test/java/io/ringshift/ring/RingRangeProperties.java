package io.ringshift.ring;

import static io.ringshift.ring.RingInvariants.check;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RingRange} against a brute-force model on a small ring. Each case draws a few boundary points, mostly
 * near 0, near 2^63 and near 2^64 - 1, where wrapping, the top of the ring and the halves of the whole ring
 * are; the ranges of the case start and end at those points. The points cut the ring into k elementary
 * intervals {@code (p[i-1], p[i]]} (interval 0 wraps: {@code (p[k-1], p[0]]}) that every range of the case holds
 * wholly or not at all, so the model of a range is the set of intervals met by walking from its start's point
 * to its end's point, one index at a time, with no unsigned arithmetic. Positions are checked at the first, the
 * last and a random inner position of each interval. Each property prints its seed; see {@link Seeded} for
 * replaying a run or a single case.
 */
class RingRangeProperties {
  private static final long MID = Long.MIN_VALUE; // 2^63 unsigned
  private static final long MAX = -1L; // 2^64 - 1
  private static final long[] EDGES = {0, 1, 2, MID - 2, MID - 1, MID, MID + 1, MAX - 2, MAX - 1, MAX};
  private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);
  private static final int TRIES = 3000;

  @Test
  void shouldContainExactlyThePositionsOfTheModel() {
    Seeded.forAll("shouldContainExactlyThePositionsOfTheModel", TRIES, RingRangeProperties::randomCase,
        (c, rnd) -> {
          for (RingRange range : c.all()) {
            BitSet model = c.ring.model(range);
            for (int i = 0; i < c.ring.size(); i++) {
              for (long p : c.ring.samples(i, rnd)) {
                int interval = i;
                check(range.contains(p) == model.get(interval), () -> range + " contains "
                    + Long.toUnsignedString(p) + " (interval " + interval + "): " + range.contains(p)
                    + ", the model says " + model.get(interval));
              }
            }
            check(range.isWhole() == (model.cardinality() == c.ring.size()),
                () -> range + " isWhole " + range.isWhole() + ", the model holds " + model);
            double expected = new BigInteger(Long.toUnsignedString(c.ring.positions(model)))
                .doubleValue() / 0x1p64;
            check(Math.abs(range.fraction() - (range.isWhole() ? 1.0 : expected)) < 1e-12,
                () -> range + " fraction " + range.fraction() + ", the model says " + expected);
          }
        });
  }

  @Test
  void shouldIntersectExactlyWhereBothRangesContainAPosition() {
    Seeded.forAll("shouldIntersectExactlyWhereBothRangesContainAPosition", TRIES,
        RingRangeProperties::randomCase, (c, rnd) -> {
          BitSet both = c.ring.model(c.a);
          both.and(c.ring.model(c.b));
          check(c.a.intersects(c.b) == !both.isEmpty() && c.b.intersects(c.a) == !both.isEmpty(),
              () -> "intersects " + c.a.intersects(c.b) + " / " + c.b.intersects(c.a) + ", the model shares "
                  + both);

          List<RingRange> pieces = c.a.intersection(c.b);
          check(pieces.size() <= 2, () -> "intersection in " + pieces.size() + " pieces: " + pieces);
          check(pieces.isEmpty() == both.isEmpty(), () -> "intersection " + pieces + ", the model shares " + both);
          BitSet union = new BitSet();
          List<Integer> walk = c.ring.walk(c.a);
          int previousFirst = -1;
          for (RingRange piece : pieces) {
            BitSet model = c.ring.model(piece);
            check(!union.intersects(model), () -> "pieces " + pieces + " overlap");
            union.or(model);
            int first = walk.indexOf(c.ring.walk(piece).get(0));
            int after = previousFirst;
            check(first > after, () -> "pieces " + pieces + " are not in the walk order of " + c.a);
            previousFirst = first;
          }
          check(union.equals(both), () -> "intersection " + pieces + " holds " + union + ", the model shares "
              + both);
          if (pieces.size() == 2) {
            check(pieces.get(0).end() != pieces.get(1).start() && pieces.get(1).end() != pieces.get(0).start(),
                () -> "pieces " + pieces + " touch: one range would do");
          }
        });
  }

  @Test
  void shouldSplitAtTheWrapIntoIntervalsHoldingTheRangeInWalkOrder() {
    Seeded.forAll("shouldSplitAtTheWrapIntoIntervalsHoldingTheRangeInWalkOrder", TRIES,
        RingRangeProperties::randomCase, (c, rnd) -> {
          for (RingRange range : c.all()) {
            List<RingRange.Interval> split = range.splitAtWrap();
            check(split.size() == 1 || split.size() == 2, () -> range + " split into " + split);
            check(split.get(0).first() == range.start() + 1, () -> range + " split into " + split
                + ", which does not start just after the range's start");
            check(split.get(split.size() - 1).last() == range.end(), () -> range + " split into " + split
                + ", which does not end at the range's end");
            if (split.size() == 2) {
              check(split.get(0).last() == MAX && split.get(1).first() == 0, () -> range + " split into "
                  + split + " somewhere else than at the top of the ring");
            }
            BigInteger count = BigInteger.ZERO;
            for (RingRange.Interval interval : split) {
              count = count.add(unsigned(interval.last() - interval.first())).add(BigInteger.ONE);
            }
            BigInteger expected = range.isWhole() ? TWO_TO_64 : unsigned(range.end() - range.start());
            BigInteger counted = count;
            check(counted.equals(expected), () -> range + " split into " + split + " of " + counted
                + " positions, the range has " + expected);
            BitSet model = c.ring.model(range);
            for (int i = 0; i < c.ring.size(); i++) {
              for (long p : c.ring.samples(i, rnd)) {
                boolean inSplit = split.stream().anyMatch(interval -> interval.contains(p));
                int interval = i;
                check(inSplit == model.get(interval), () -> range + " split into " + split + " holds "
                    + Long.toUnsignedString(p) + ": " + inSplit + ", the model says " + model.get(interval));
              }
            }
          }
        });
  }

  @Test
  void shouldSplitIntoConsecutiveNearlyEqualPiecesHoldingTheRange() {
    Seeded.forAll("shouldSplitIntoConsecutiveNearlyEqualPiecesHoldingTheRange", TRIES,
        RingRangeProperties::randomCase, (c, rnd) -> {
          for (RingRange range : c.all()) {
            int parts = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(1000) : 1 + rnd.nextInt(17);
            List<RingRange> pieces = range.split(parts);
            BigInteger positions = range.isWhole() ? TWO_TO_64 : unsigned(range.end() - range.start());
            int expectedCount = positions.min(BigInteger.valueOf(parts)).intValueExact();
            check(pieces.size() == expectedCount, () -> range + " split in " + parts + " gave " + pieces.size()
                + " pieces, expected " + expectedCount);
            check(pieces.get(0).start() == range.start() && pieces.get(pieces.size() - 1).end() == range.end(),
                () -> range + " split in " + parts + " does not run from its start to its end: " + pieces);
            BigInteger total = BigInteger.ZERO;
            BigInteger shortest = null;
            BigInteger longest = null;
            for (int i = 0; i < pieces.size(); i++) {
              RingRange piece = pieces.get(i);
              if (i > 0) {
                int at = i;
                check(pieces.get(i - 1).end() == piece.start(), () -> range + " split in " + parts
                    + ": piece " + at + " does not start where the one before ends: " + pieces);
              }
              BigInteger length = piece.isWhole() ? TWO_TO_64 : unsigned(piece.end() - piece.start());
              check(!piece.isWhole() || pieces.size() == 1, () -> range + " split in " + parts
                  + " has a whole-ring piece among several: " + pieces);
              total = total.add(length);
              shortest = shortest == null ? length : shortest.min(length);
              longest = longest == null ? length : longest.max(length);
            }
            BigInteger counted = total;
            check(counted.equals(positions), () -> range + " split in " + parts + " holds " + counted
                + " positions, the range " + positions);
            BigInteger spread = longest.subtract(shortest);
            check(spread.compareTo(BigInteger.valueOf(parts)) < 0, () -> range + " split in " + parts
                + ": piece lengths differ by " + spread);
            for (int i = 0; i < c.ring.size(); i++) {
              for (long p : c.ring.samples(i, rnd)) {
                long holding = pieces.stream().filter(piece -> piece.contains(p)).count();
                check(holding == (range.contains(p) ? 1 : 0), () -> range + " split in " + parts + ": "
                    + holding + " pieces hold " + Long.toUnsignedString(p) + ": " + pieces);
              }
            }
          }
        });
  }

  @Test
  void shouldFindTheFirstGapOfTheModel() {
    Seeded.forAll("shouldFindTheFirstGapOfTheModel", TRIES, RingRangeProperties::randomCase, (c, rnd) -> {
      BitSet covered = new BitSet();
      c.cover.forEach(r -> covered.or(c.ring.model(r)));
      OptionalLong expected = OptionalLong.empty();
      for (int i : c.ring.walk(c.a)) {
        if (!covered.get(i)) {
          expected = OptionalLong.of(c.ring.first(i));
          break;
        }
      }
      OptionalLong actual = c.a.firstGap(c.cover);
      OptionalLong model = expected;
      check(actual.equals(model), () -> "first gap of " + c.a + " in " + c.cover + " is " + show(actual)
          + ", the model says " + show(model));
    });
  }

  /**
   * A small ring: k boundary points, sorted unsigned, distinct; interval i is {@code (p[i-1], p[i]]}, interval 0
   * {@code (p[k-1], p[0]]}, which is the whole ring when k is 1.
   */
  record SmallRing(long[] points) {
    int size() {
      return points.length;
    }

    int indexOf(long point) {
      for (int i = 0; i < points.length; i++) {
        if (points[i] == point) {
          return i;
        }
      }
      throw new AssertionError(Long.toUnsignedString(point) + " is not a point of " + this
          + "; a range of this case should start and end at points");
    }

    /** The intervals of {@code range} in its walk order: from the interval after its start's to its end's. */
    List<Integer> walk(RingRange range) {
      int s = indexOf(range.start());
      int e = indexOf(range.end());
      List<Integer> walk = new ArrayList<>();
      int i = s;
      do {
        i = (i + 1) % points.length;
        walk.add(i);
      } while (i != e);
      return walk;
    }

    BitSet model(RingRange range) {
      BitSet set = new BitSet();
      walk(range).forEach(set::set);
      return set;
    }

    long first(int interval) {
      return points[(interval + points.length - 1) % points.length] + 1;
    }

    /** Positions in the interval, mod 2^64: 0 stands for 2^64, the whole ring. */
    long length(int interval) {
      return points[interval] - first(interval) + 1;
    }

    /** Positions in the intervals of {@code model}, mod 2^64. */
    long positions(BitSet model) {
      long total = 0;
      for (int i = model.nextSetBit(0); i >= 0; i = model.nextSetBit(i + 1)) {
        total += length(i);
      }
      return total;
    }

    /** The first, the last and a random position of the interval. */
    long[] samples(int interval, Random rnd) {
      long length = length(interval);
      long inner = length == 0 ? rnd.nextLong() : first(interval) + Long.remainderUnsigned(rnd.nextLong(), length);
      return new long[] {first(interval), points[interval], inner};
    }

    @Override
    public String toString() {
      return Arrays.stream(points).mapToObj(Long::toUnsignedString).toList().toString();
    }
  }

  /** Two ranges and a cover for {@link RingRange#firstGap}, all on the points of one small ring. */
  record Case(SmallRing ring, RingRange a, RingRange b, List<RingRange> cover) {
    List<RingRange> all() {
      List<RingRange> all = new ArrayList<>(cover);
      all.add(a);
      all.add(b);
      return all;
    }

    @Override
    public String toString() {
      return "points " + ring + ", a " + show(a) + ", b " + show(b) + ", cover "
          + cover.stream().map(RingRangeProperties::show).toList();
    }
  }

  static Case randomCase(Random rnd) {
    int edges = 1 + rnd.nextInt(5);
    long[] drawn = new long[edges + 1];
    for (int i = 0; i < edges; i++) {
      drawn[i] = EDGES[rnd.nextInt(EDGES.length)];
    }
    // Now and then a point anywhere, so that the ranges are not all drawn from the same few values.
    drawn[edges] = rnd.nextInt(4) == 0 ? rnd.nextLong() : drawn[0];
    long[] points = Arrays.stream(drawn).boxed().distinct().sorted(Long::compareUnsigned)
        .mapToLong(Long::longValue).toArray();
    SmallRing ring = new SmallRing(points);
    List<RingRange> cover = new ArrayList<>();
    int covers = rnd.nextInt(5);
    for (int i = 0; i < covers; i++) {
      cover.add(randomRange(ring, rnd));
    }
    return new Case(ring, randomRange(ring, rnd), randomRange(ring, rnd), List.copyOf(cover));
  }

  private static RingRange randomRange(SmallRing ring, Random rnd) {
    return RingRange.of(ring.points[rnd.nextInt(ring.size())], ring.points[rnd.nextInt(ring.size())]);
  }

  private static BigInteger unsigned(long value) {
    return new BigInteger(Long.toUnsignedString(value));
  }

  static String show(RingRange range) {
    return "(" + Long.toUnsignedString(range.start()) + ", " + Long.toUnsignedString(range.end()) + "]";
  }

  private static String show(OptionalLong position) {
    return position.isPresent() ? Long.toUnsignedString(position.getAsLong()) : "none";
  }
}
