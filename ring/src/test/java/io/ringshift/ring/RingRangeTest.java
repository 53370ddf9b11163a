package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange.Interval;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Examples of {@link RingRange}, including the cases of the publisher's and the worker's range helpers it
 * replaced; {@link RingRangeProperties} checks it against a model.
 */
class RingRangeTest {
  private static final long TOP = -1L; // 2^64 - 1, the last position before the ring wraps to 0
  private static final long MID = Long.MIN_VALUE; // 2^63

  @Test
  void shouldTreatStartEqualToEndAsTheWholeRing() {
    RingRange ring = RingRange.of(7, 7);

    assertThat(ring.isWhole()).isTrue();
    assertThat(ring.wraps()).as("the whole ring is not said to wrap").isFalse();
    assertThat(ring.contains(7)).isTrue();
    assertThat(ring.contains(TOP)).isTrue();
    assertThat(ring.fraction()).isEqualTo(1.0);
    assertThat(RingRange.whole()).isEqualTo(RingRange.of(0, 0));
  }

  @Test
  void shouldExcludeTheStartAndIncludeTheEndAcrossTheTopOfTheRing() {
    RingRange range = RingRange.of(TOP - 1, 1);

    assertThat(range.wraps()).isTrue();
    assertThat(range.contains(TOP - 1)).as("start").isFalse();
    assertThat(range.contains(TOP)).isTrue();
    assertThat(range.contains(0)).isTrue();
    assertThat(range.contains(1)).as("end").isTrue();
    assertThat(range.contains(2)).isFalse();
    assertThat(RingRange.of(TOP, 0).contains(0)).as("(MAX, 0] is the single position 0").isTrue();
    assertThat(RingRange.of(TOP, 0).contains(TOP)).isFalse();
  }

  @Test
  void shouldSplitAtTheTopOfTheRingInWalkOrder() {
    assertThat(RingRange.of(5, 10).splitAtWrap()).containsExactly(new Interval(6, 10));
    assertThat(RingRange.of(TOP - 5, 10).splitAtWrap()).containsExactly(new Interval(TOP - 4, TOP),
        new Interval(0, 10));
    assertThat(RingRange.of(TOP, 10).splitAtWrap()).as("nothing above MAX").containsExactly(new Interval(0, 10));
    assertThat(RingRange.of(5, TOP).splitAtWrap()).containsExactly(new Interval(6, TOP));
    assertThat(RingRange.of(5, 5).splitAtWrap()).as("the whole ring starts after 5 and ends at 5")
        .containsExactly(new Interval(6, TOP), new Interval(0, 5));
    assertThat(RingRange.of(TOP, TOP).splitAtWrap()).containsExactly(new Interval(0, TOP));
  }

  @Test
  void shouldRefuseAnIntervalThatRunsBackwards() {
    assertThatThrownBy(() -> new Interval(TOP, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("interval [18446744073709551615, 0]: first is above last; an interval runs from first up to "
            + "last (unsigned)");
  }

  @Test
  void shouldMeetInTwoPiecesWhenTheRangesTogetherGoRoundTheRing() {
    assertThat(RingRange.of(0, 10).intersection(RingRange.of(8, 2)))
        .containsExactly(RingRange.of(0, 2), RingRange.of(8, 10));
    assertThat(RingRange.of(8, 2).intersection(RingRange.of(0, 10))).as("in the walk order of (8, 2]")
        .containsExactly(RingRange.of(8, 10), RingRange.of(0, 2));
    assertThat(RingRange.of(TOP - 10, 10).intersection(RingRange.of(5, TOP - 5)))
        .containsExactly(RingRange.of(TOP - 10, TOP - 5), RingRange.of(5, 10));
  }

  @Test
  void shouldIntersectInOnePieceOrNone() {
    assertThat(RingRange.of(0, 10).intersection(RingRange.of(5, 20))).containsExactly(RingRange.of(5, 10));
    assertThat(RingRange.of(0, 10).intersection(RingRange.of(10, 20))).as("touching ends").isEmpty();
    assertThat(RingRange.of(TOP - 5, 5).intersection(RingRange.of(TOP - 10, 0)))
        .containsExactly(RingRange.of(TOP - 5, 0));
    assertThat(RingRange.of(3, 4).intersection(RingRange.whole())).containsExactly(RingRange.of(3, 4));
    assertThat(RingRange.whole().intersection(RingRange.of(3, 4))).containsExactly(RingRange.of(3, 4));
  }

  @Test
  void shouldGiveTheShareOfTheKeyspace() {
    assertThat(RingRange.of(0, MID).fraction()).isEqualTo(0.5);
    assertThat(RingRange.of(MID, 0).fraction()).as("wrapping").isEqualTo(0.5);
    assertThat(RingRange.of(TOP, 0).fraction()).isEqualTo(0x1p-64);
  }

  @Test
  void shouldPrintLikeTheStorageNode() {
    assertThat(RingRange.of(TOP - 1, 10)).hasToString("(fffffffffffffffe, 000000000000000a]");
  }

  // The publisher's Arc: the first uncovered position of a range, and whether ranges share a position.

  @Test
  void shouldFindNoGapWhenOverlappingRangesCoverARangeAcrossTheTopOfTheRing() {
    RingRange range = RingRange.of(TOP - 100, 100);
    List<RingRange> cover = List.of(RingRange.of(50, 200), RingRange.of(TOP - 150, TOP - 10),
        RingRange.of(TOP - 20, 60));

    assertThat(range.firstGap(cover)).isEmpty();
  }

  @Test
  void shouldFindTheFirstPositionNoRangeCovers() {
    RingRange range = RingRange.of(0, 1000);
    List<RingRange> cover = List.of(RingRange.of(0, 400), RingRange.of(401, 1000));

    assertThat(range.firstGap(cover)).isEqualTo(OptionalLong.of(401));
    assertThat(range.firstGap(List.of())).isEqualTo(OptionalLong.of(1));
    assertThat(RingRange.of(10, 20).firstGap(List.of(RingRange.of(0, 19)))).isEqualTo(OptionalLong.of(20));
  }

  @Test
  void shouldCoverTheWholeRingOnlyWithRangesThatJoinUp() {
    RingRange ring = RingRange.of(7, 7);

    assertThat(ring.firstGap(List.of(RingRange.of(7, 1L << 40), RingRange.of(1L << 40, 7)))).isEmpty();
    assertThat(ring.firstGap(List.of(RingRange.of(3, 3)))).isEmpty();
    assertThat(ring.firstGap(List.of(RingRange.of(7, 1L << 40), RingRange.of(1L << 40, 6))))
        .isEqualTo(OptionalLong.of(7));
  }

  @Test
  void shouldCoverARangeWithAWholeRingRange() {
    assertThat(RingRange.of(TOP - 5, 5).firstGap(List.of(RingRange.of(0, 0)))).isEmpty();
  }

  @Test
  void shouldIntersectOnlyWhenTheRangesShareAPosition() {
    assertThat(RingRange.of(0, 10).intersects(RingRange.of(10, 20))).as("touching ends").isFalse();
    assertThat(RingRange.of(0, 10).intersects(RingRange.of(9, 20))).isTrue();
    assertThat(RingRange.of(TOP - 5, 5).intersects(RingRange.of(3, 4))).as("inside a wrapping range").isTrue();
    assertThat(RingRange.of(3, 4).intersects(RingRange.of(TOP - 5, 5))).isTrue();
    assertThat(RingRange.of(TOP - 5, 5).intersects(RingRange.of(5, TOP - 5))).as("the rest of the ring").isFalse();
    assertThat(RingRange.of(1, 1).intersects(RingRange.of(100, 200))).as("the whole ring").isTrue();
  }

  // The worker's Ranges.overlap.

  @Test
  void shouldTellOverlapOfPlainWrappingAndWholeRanges() {
    assertThat(RingRange.of(0, 10).intersects(RingRange.of(10, 20))).as("(0,10] (10,20]").isFalse();
    assertThat(RingRange.of(0, 10).intersects(RingRange.of(9, 20))).as("share 10").isTrue();
    assertThat(RingRange.of(-10, 5).intersects(RingRange.of(3, 4))).as("wrapping holds (3,4]").isTrue();
    assertThat(RingRange.of(-10, 5).intersects(RingRange.of(5, -10))).as("complements").isFalse();
    assertThat(RingRange.of(-10, 5).intersects(RingRange.of(-20, -9))).as("share -9").isTrue();
    assertThat(RingRange.of(-1, 5).intersects(RingRange.of(-2, -1))).as("(MAX,5] and (MAX-1,MAX]").isFalse();
    assertThat(RingRange.whole().intersects(RingRange.of(1, 2))).isTrue();
  }

  @Test
  void shouldAgreeWithContainsOnRandomSmallRings() {
    Random random = new Random(7);
    for (int i = 0; i < 2000; i++) {
      // Positions near 0 and near the top, where wrapping happens.
      long[] points = {-3, -2, -1, 0, 1, 2, 3};
      RingRange a = RingRange.of(points[random.nextInt(7)], points[random.nextInt(7)]);
      RingRange b = RingRange.of(points[random.nextInt(7)], points[random.nextInt(7)]);
      boolean expected = false;
      for (long p : points) {
        expected |= a.contains(p) && b.contains(p);
      }
      if (!a.isWhole() && !b.isWhole()) {
        assertThat(a.intersects(b)).as("%s and %s", a, b).isEqualTo(expected);
      }
    }
  }
}
