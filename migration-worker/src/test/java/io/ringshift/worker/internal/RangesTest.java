package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.storage.RingRange;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RangesTest {

  @Test
  void shouldTellOverlapOfPlainWrappingAndWholeRanges() {
    assertThat(Ranges.overlap(RingRange.of(0, 10), RingRange.of(10, 20))).as("(0,10] (10,20]").isFalse();
    assertThat(Ranges.overlap(RingRange.of(0, 10), RingRange.of(9, 20))).as("share 10").isTrue();
    assertThat(Ranges.overlap(RingRange.of(-10, 5), RingRange.of(3, 4))).as("wrapping holds (3,4]").isTrue();
    assertThat(Ranges.overlap(RingRange.of(-10, 5), RingRange.of(5, -10))).as("complements").isFalse();
    assertThat(Ranges.overlap(RingRange.of(-10, 5), RingRange.of(-20, -9))).as("share -9").isTrue();
    assertThat(Ranges.overlap(RingRange.of(-1, 5), RingRange.of(-2, -1))).as("(MAX,5] and (MAX-1,MAX]").isFalse();
    assertThat(Ranges.overlap(RingRange.whole(), RingRange.of(1, 2))).isTrue();
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
        assertThat(Ranges.overlap(a, b)).as("%s and %s", a, b).isEqualTo(expected);
      }
    }
  }
}
