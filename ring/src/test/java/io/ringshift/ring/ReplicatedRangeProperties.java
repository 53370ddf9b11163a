package io.ringshift.ring;

import static io.ringshift.ring.RingInvariants.check;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RingSnapshot#firstReplicatedRange} against a scan of every range of the ring, on small random rings (some
 * with many equal tokens, so empty ranges between them) and ranges that start and end at tokens, next to tokens, at
 * random positions and at the edges of the ring (0, 2^63, 2^64 - 1), wrapping or whole. The scan is the model: a
 * member replicates part of the range when some non-empty ring range that overlaps it has the member among its
 * replicas. Prints its seed; see {@link Seeded} for replaying a run or a case.
 */
class ReplicatedRangeProperties {
  private static final long MID = Long.MIN_VALUE;
  private static final long[] EDGES = {0, 1, MID - 1, MID, -2L, -1L};
  private static final int TRIES = 2000;

  private record Case(RingSnapshot ring, List<RingRange> ranges) {
    @Override
    public String toString() {
      return ring.tokenCount() + " tokens of " + ring.memberIds() + ", R=" + ring.replicas() + ", hash "
          + ring.hashId() + ", " + ranges.size() + " ranges";
    }
  }

  @Test
  void shouldFindAReplicatedRangeExactlyWhenAScanOfTheWholeRingDoes() {
    Seeded.forAll("shouldFindAReplicatedRangeExactlyWhenAScanOfTheWholeRingDoes", TRIES,
        ReplicatedRangeProperties::randomCase, (c, rnd) -> {
          for (RingRange range : c.ranges) {
            for (Member m : c.ring.members()) {
              String id = m.id();
              int found = c.ring.firstReplicatedRange(range, id);
              boolean expected = scan(c.ring, range, id);
              check((found >= 0) == expected, () -> "member " + id + ", range " + range + ": found range "
                  + found + ", but a scan of every range says " + (expected ? "it replicates part of it" : "none"));
              if (found >= 0) {
                check(overlapsNonEmpty(c.ring, found, range) && c.ring.replicasOfRange(found).contains(id),
                    () -> "member " + id + ", range " + range + ": range " + found + " (" + c.ring.rangeStart(found)
                        + ", " + c.ring.rangeEnd(found) + "] does not overlap it, is empty or is not replicated by "
                        + "the member");
              }
            }
            check(c.ring.firstReplicatedRange(range, "not-a-member") < 0,
                () -> "a member that is not in the ring replicates part of " + range);
          }
        });
  }

  private static boolean scan(RingSnapshot ring, RingRange range, String id) {
    for (int r = 0; r < ring.tokenCount(); r++) {
      if (overlapsNonEmpty(ring, r, range) && ring.replicasOfRange(r).contains(id)) {
        return true;
      }
    }
    return false;
  }

  private static boolean overlapsNonEmpty(RingSnapshot ring, int r, RingRange range) {
    boolean empty = ring.rangeStart(r) == ring.rangeEnd(r) && ring.tokenCount() > 1;
    return !empty && RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)).intersects(range);
  }

  private static Case randomCase(Random rnd) {
    TestRings.RingSpec spec = TestRings.randomRing(rnd);
    RingBuilder builder = RingSnapshot.builder().vnodes(spec.vnodes()).replicas(spec.replicas())
        .members(spec.members());
    if (rnd.nextInt(3) == 0) {
      builder.hash(new TestRings.FewValuesHash(1 + rnd.nextInt(6)));
    }
    RingSnapshot ring = builder.build();
    List<Long> points = new ArrayList<>();
    for (long e : EDGES) {
      points.add(e);
    }
    for (int i = 0; i < 6; i++) {
      long token = ring.token(rnd.nextInt(ring.tokenCount()));
      points.add(token + rnd.nextInt(3) - 1); // at a token, or one position either side
      points.add(rnd.nextLong());
    }
    List<RingRange> ranges = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      long start = points.get(rnd.nextInt(points.size()));
      long end = rnd.nextInt(10) == 0 ? start : points.get(rnd.nextInt(points.size()));
      ranges.add(RingRange.of(start, end));
    }
    return new Case(ring, ranges);
  }
}
