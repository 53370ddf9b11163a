package io.ringshift.storage.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Fence;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Property: the indexed check answers as a scan of every fence does (the highest-epoch fence whose range holds the
 * position, if its epoch is above the write's), for random fence sets: wrapping ranges, whole-ring fences, ranges
 * sharing boundaries, equal epochs. Positions are drawn at and next to every boundary and at random. The seed is
 * printed; {@code -Dringshift.seed=N} replays it.
 */
class FenceSetTest {
  private static final long[] EDGES = {0, 1, -1, -2, Long.MIN_VALUE, Long.MAX_VALUE};

  @Test
  void shouldRefuseExactlyAsAScanOfEveryFenceDoes() {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    System.out.printf("FenceSetTest: seed %d (replay: -Dringshift.seed=%d)%n", seed, seed);
    Random random = new Random(seed);
    for (int round = 0; round < 2000; round++) {
      List<Long> points = new ArrayList<>();
      for (int i = 0; i < 1 + random.nextInt(6); i++) {
        points.add(random.nextInt(3) == 0 ? EDGES[random.nextInt(EDGES.length)] : random.nextLong());
      }
      List<Fence> fences = new ArrayList<>();
      for (int i = 0; i < random.nextInt(12); i++) {
        long start = points.get(random.nextInt(points.size()));
        long end = random.nextInt(8) == 0 ? start : points.get(random.nextInt(points.size()));
        fences.add(new Fence(RingRange.of(start, end), 1 + random.nextInt(6), i));
      }
      FenceSet set = FenceSet.of(fences);
      List<Long> probes = new ArrayList<>();
      for (long p : points) {
        probes.add(p);
        probes.add(p + 1);
        probes.add(p - 1);
      }
      for (int i = 0; i < 20; i++) {
        probes.add(random.nextLong());
      }
      for (long position : probes) {
        long epoch = random.nextInt(8);
        Fence expected = scan(fences, position, epoch);
        Fence actual = set.refusing(position, epoch);
        int r = round;
        assertThat(actual == null ? null : actual.epoch()).as("round %d (seed %d): fences %s, position %s, epoch %d",
            r, seed, fences, Long.toUnsignedString(position), epoch)
            .isEqualTo(expected == null ? null : expected.epoch());
        if (actual != null) {
          assertThat(actual.range().contains(position)).isTrue();
        }
      }
    }
  }

  /** The rule as it was: a scan of every fence for the highest-epoch one that refuses. */
  private static Fence scan(List<Fence> fences, long position, long epoch) {
    Fence refusing = null;
    for (Fence f : fences) {
      if (f.epoch() > epoch && f.range().contains(position) && (refusing == null || f.epoch() > refusing.epoch())) {
        refusing = f;
      }
    }
    return refusing;
  }
}
