package io.ringshift.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Space-Saving's guarantees, on random streams (the seed is printed). */
class HotKeySketchTest {
  private static final long SEED = Long.getLong("ringshift.seed", System.nanoTime());

  @Test
  void shouldKeepEveryFrequentKeyWithACountAtMostItsErrorTooHigh() {
    System.out.println("HotKeySketchTest: seed " + SEED + " (replay with -Dringshift.seed=" + SEED + ")");
    Random random = new Random(SEED);
    HotKeySketch sketch = new HotKeySketch(32, Long.MAX_VALUE);
    Map<Long, Long> truth = new HashMap<>();
    int n = 200_000;
    for (int i = 0; i < n; i++) {
      // A few heavy keys over a long uniform tail.
      long key = random.nextDouble() < 0.4 ? random.nextInt(8) : 1000 + random.nextInt(100_000);
      truth.merge(key, 1L, Long::sum);
      sketch.offer(key, bytes(key));
    }
    List<HotKeySketch.Entry> top = sketch.top(32);
    assertThat(top).hasSize(32);
    for (HotKeySketch.Entry e : top) {
      long real = truth.getOrDefault(e.position(), 0L);
      assertThat(e.count()).as("count of %d", e.position()).isGreaterThanOrEqualTo(real);
      assertThat(e.count() - e.error()).as("count minus error of %d", e.position()).isLessThanOrEqualTo(real);
      assertThat(new String(e.key(), StandardCharsets.UTF_8)).isEqualTo("k" + e.position());
    }
    // Every key above n / capacity is in the sketch: here the eight heavy ones (5% each).
    assertThat(top.subList(0, 8)).extracting(HotKeySketch.Entry::position)
        .containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
    assertThat(sketch.total()).isEqualTo(n);
  }

  @Test
  void shouldHalveItsCountsSoANewHotKeyTakesOver() {
    HotKeySketch sketch = new HotKeySketch(4, 1000);
    for (int i = 0; i < 900; i++) {
      sketch.offer(1, bytes(1));
    }
    for (int i = 0; i < 3000; i++) {
      sketch.offer(2, bytes(2));
    }
    assertThat(sketch.top(1).get(0).position()).isEqualTo(2);
    assertThat(sketch.total()).as("halved whenever it reached 1,000").isLessThan(1000);
    assertThat(sketch.top(2).get(1).count()).as("the old key decayed").isLessThan(100);
  }

  @Test
  void shouldRefuseABadCapacity() {
    assertThatThrownBy(() -> new HotKeySketch(0, 10)).hasMessage("capacity was 0; a sketch needs at least 1 counter");
  }

  private static byte[] bytes(long key) {
    return ("k" + key).getBytes(StandardCharsets.UTF_8);
  }
}
