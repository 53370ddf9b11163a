package io.ringshift.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.client.TestSnapshots;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FillingIndexTest {
  private static final RingSnapshot RING = TestSnapshots.ring(TestSnapshots.CLUSTER, 1, 6);

  /** The definition: two arcs (a, b] and (c, d] of the ring overlap when one contains the other's end. */
  private static boolean overlaps(RingSnapshot ring, int r, FillingRange mark) {
    long start = ring.rangeStart(r);
    long end = ring.rangeEnd(r);
    if (start == end && r != 0) {
      return false;
    }
    return RingRange.of(start, end).contains(mark.end()) || mark.contains(end);
  }

  private static BitSet expected(RingSnapshot ring, List<FillingRange> marks) {
    BitSet expected = new BitSet();
    for (FillingRange mark : marks) {
      for (int r = 0; r < ring.tokenCount(); r++) {
        if (overlaps(ring, r, mark)) {
          expected.set(r);
        }
      }
    }
    return expected;
  }

  @Test
  void shouldMarkEveryRangeAMarkOverlapsAndNoOther() {
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < 2_000; i++) {
      List<FillingRange> marks = new ArrayList<>();
      for (int m = 0, count = 1 + random.nextInt(3); m < count; m++) {
        marks.add(randomMark(random));
      }
      BitSet actual = FillingIndex.rangesByNode(RING, marks).getOrDefault("node-01", new BitSet());
      assertThat(actual).as("seed %d, case %d, marks %s", seed, i, marks).isEqualTo(expected(RING, marks));
    }
  }

  private static FillingRange randomMark(SplittableRandom random) {
    int r = random.nextInt(RING.tokenCount());
    switch (random.nextInt(5)) {
      case 0: // exactly one ring range
        return new FillingRange(RING.rangeStart(r), RING.rangeEnd(r), "node-01");
      case 1: // a sliver inside a range, or on its boundary
        long start = RING.rangeStart(r) + random.nextInt(3);
        return new FillingRange(start, start + 1 + random.nextInt(2), "node-01");
      case 2: // the whole ring
        long at = random.nextLong();
        return new FillingRange(at, at, "node-01");
      case 3: // nearly the whole ring: it starts and ends in the same range, going round
        long end = RING.rangeEnd(r) - 1;
        return new FillingRange(end, end - 1, "node-01");
      default: // anywhere
        return new FillingRange(random.nextLong(), random.nextLong(), "node-01");
    }
  }

  @Test
  void shouldMarkEachNodeSeparately() {
    List<FillingRange> marks = List.of(
        new FillingRange(RING.rangeStart(3), RING.rangeEnd(3), "node-01"),
        new FillingRange(RING.rangeStart(7), RING.rangeEnd(8), "node-02"));

    Map<String, BitSet> byNode = FillingIndex.rangesByNode(RING, marks);

    assertThat(byNode.get("node-01").stream().toArray()).containsExactly(3);
    assertThat(byNode.get("node-02").stream().toArray()).containsExactly(7, 8);
  }

  @Test
  void shouldMarkNothingWithoutMarks() {
    assertThat(FillingIndex.rangesByNode(RING, List.of())).isEmpty();
  }
}
