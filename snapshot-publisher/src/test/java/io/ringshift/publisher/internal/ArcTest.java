package io.ringshift.publisher.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ArcTest {
  private static final long TOP = -1L; // 2^64 - 1, the last position before the ring wraps to 0

  @Test
  void findsNoGapWhenArcsThatOverlapCoverARangeAcrossTheTopOfTheRing() {
    Arc range = new Arc(TOP - 100, 100);
    List<Arc> cover = List.of(new Arc(50, 200), new Arc(TOP - 150, TOP - 10), new Arc(TOP - 20, 60));

    assertThat(range.firstGap(cover)).isEmpty();
  }

  @Test
  void findsTheFirstPositionNoArcCovers() {
    Arc range = new Arc(0, 1000);
    List<Arc> cover = List.of(new Arc(0, 400), new Arc(401, 1000));

    assertThat(range.firstGap(cover)).isEqualTo(OptionalLong.of(401));
    assertThat(range.firstGap(List.of())).isEqualTo(OptionalLong.of(1));
    assertThat(new Arc(10, 20).firstGap(List.of(new Arc(0, 19)))).isEqualTo(OptionalLong.of(20));
  }

  @Test
  void coversTheWholeRingOnlyWithArcsThatJoinUp() {
    Arc ring = new Arc(7, 7);

    assertThat(ring.firstGap(List.of(new Arc(7, 1L << 40), new Arc(1L << 40, 7)))).isEmpty();
    assertThat(ring.firstGap(List.of(new Arc(3, 3)))).isEmpty();
    assertThat(ring.firstGap(List.of(new Arc(7, 1L << 40), new Arc(1L << 40, 6)))).isEqualTo(OptionalLong.of(7));
  }

  @Test
  void aRangeIsCoveredByAWholeRingArc() {
    assertThat(new Arc(TOP - 5, 5).firstGap(List.of(new Arc(0, 0)))).isEmpty();
  }

  @Test
  void intersectsOnlyWhenTheRangesShareAPosition() {
    assertThat(new Arc(0, 10).intersects(new Arc(10, 20))).as("touching ends").isFalse();
    assertThat(new Arc(0, 10).intersects(new Arc(9, 20))).isTrue();
    assertThat(new Arc(TOP - 5, 5).intersects(new Arc(3, 4))).as("inside a wrapping range").isTrue();
    assertThat(new Arc(3, 4).intersects(new Arc(TOP - 5, 5))).isTrue();
    assertThat(new Arc(TOP - 5, 5).intersects(new Arc(5, TOP - 5))).as("the rest of the ring").isFalse();
    assertThat(new Arc(1, 1).intersects(new Arc(100, 200))).as("the whole ring").isTrue();
  }
}
