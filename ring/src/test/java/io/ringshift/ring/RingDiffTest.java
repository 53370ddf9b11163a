package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The diff between two snapshots: exact ranges, coalesced, with fractions per node and against the ideal. */
class RingDiffTest {

  private static RingSnapshot threeZones(int replicas, String... ids) {
    RingBuilder builder = RingSnapshot.builder().vnodes(64).replicas(replicas);
    for (int i = 0; i < ids.length; i++) {
      builder.addMember(ids[i], TestRings.zone(i % 3));
    }
    return builder.build();
  }

  @Test
  void shouldReportAnEmptyDiffForIdenticalSnapshots() {
    RingSnapshot ring = threeZones(3, "n1", "n2", "n3", "n4");
    RingSnapshot nextEpoch = ring.toBuilder().epoch(1).build();

    for (RingDiff diff : List.of(ring.diffTo(ring), ring.diffTo(nextEpoch))) {
      assertThat(diff.isEmpty()).isTrue();
      assertThat(diff.changes()).isEmpty();
      assertThat(diff.perNode()).isEmpty();
      assertThat(diff.changedFraction()).isZero();
      assertThat(diff.movedReplicaFraction()).isZero();
      assertThat(diff.primaryMovedFraction()).isZero();
      assertThat(diff.idealMovedFraction()).isZero();
    }
    assertThat(ring.diffTo(nextEpoch).fromEpoch()).isZero();
    assertThat(ring.diffTo(nextEpoch).toEpoch()).isEqualTo(1);
  }

  @Test
  void shouldCoalesceAChangeThatCrossesTheTopOfTheRing() {
    // a, b, c own one token each; d joins with tokens just below and just above the top of the ring (2^64).
    // Both new ranges were a's and become d's, and they meet at d's top token: one change, not two.
    TestRings.TableHash hash = new TestRings.TableHash("test/top", Map.of(
        "a#0", 100L, "b#0", 1L << 62, "c#0", Long.MIN_VALUE, "d#0", -50L, "d#1", 50L));
    RingBuilder builder = RingSnapshot.builder().hash(hash).vnodes(2).replicas(1)
        .addMember("a", "az-1", 0.5).addMember("b", "az-2", 0.5).addMember("c", "az-3", 0.5);
    RingSnapshot from = builder.build();
    RingSnapshot to = builder.addMember("d", "az-1", 1.0).epoch(1).build();

    RingDiff diff = from.diffTo(to);

    assertThat(diff.changes()).singleElement().satisfies(change -> {
      assertThat(change.start()).isEqualTo(Long.MIN_VALUE);
      assertThat(change.end()).isEqualTo(50L);
      assertThat(change.before()).containsExactly("a");
      assertThat(change.after()).containsExactly("d");
      assertThat(change.contains(-1L)).isTrue();
      assertThat(change.contains(0L)).isTrue();
      assertThat(change.contains(51L)).isFalse();
      assertThat(change.fraction()).isCloseTo(0.5, within(1e-15));
    });
    assertThat(diff.perNode().get("d").primaryGained()).isCloseTo(0.5, within(1e-15));
    assertThat(diff.perNode().get("a").primaryLost()).isCloseTo(0.5, within(1e-15));
    RingInvariants.checkDiff(from, to, diff, new Random(3));
  }

  @Test
  void shouldReportTheWholeRingAsOneRangeWhenEveryReplicaChanges() {
    RingSnapshot from = RingSnapshot.builder().vnodes(4).replicas(1).addMember("a", "az-1").build();
    RingSnapshot to = RingSnapshot.builder().vnodes(4).replicas(1).addMember("b", "az-1").build();

    RingDiff diff = from.diffTo(to);

    // (x, x] is the whole ring.
    assertThat(diff.changes()).singleElement().satisfies(change -> {
      assertThat(change.start()).isEqualTo(change.end());
      assertThat(change.fraction()).isEqualTo(1.0);
      assertThat(change.contains(change.end())).isTrue();
      assertThat(change.contains(change.end() + 1)).isTrue();
    });
    assertThat(diff.changedFraction()).isEqualTo(1.0);
    assertThat(diff.primaryMovedFraction()).isEqualTo(1.0);
    assertThat(diff.idealMovedFraction()).isEqualTo(1.0);
    assertThat(diff.perNode().get("b").gained()).isEqualTo(1.0);
    assertThat(diff.perNode().get("a").lost()).isEqualTo(1.0);
  }

  @Test
  void shouldRefuseToDiffSnapshotsOfDifferentClusters() {
    RingSnapshot east = RingSnapshot.builder().clusterId("east").addMember("n1", "az-1").build();
    RingSnapshot west = RingSnapshot.builder().clusterId("west").addMember("n1", "az-1").build();

    assertThatThrownBy(() -> east.diffTo(west))
        .isInstanceOf(RingException.class)
        .hasMessage("cannot diff cluster \"east\" against cluster \"west\"; a diff compares one cluster");
  }

  @Test
  void shouldRefuseToDiffSnapshotsWithDifferentHashes() {
    RingSnapshot xxh3 = RingSnapshot.builder().addMember("n1", "az-1").build();
    RingSnapshot other = RingSnapshot.builder().hash(new TestRings.FewValuesHash(4)).addMember("n1", "az-1")
        .build();

    assertThatThrownBy(() -> xxh3.diffTo(other))
        .isInstanceOf(RingException.class)
        .hasMessage("cannot diff hash xxh3-64/seed=0/utf-8 against hash test/xxh3-mod-4; changing the hash moves "
            + "every key");
  }

  @Test
  void shouldMoveAboutTheIdealShareOnAJoinAndOnlyToTheJoiningNode() {
    RingSnapshot from = threeZones(3, "n1", "n2", "n3", "n4", "n5", "n6");
    RingSnapshot to = threeZones(3, "n1", "n2", "n3", "n4", "n5", "n6", "n7");

    RingDiff diff = from.diffTo(to);

    assertThat(diff.idealMovedFraction()).isCloseTo(1 / 7.0, within(1e-12));
    // Hashing places tokens, not an optimiser: the moved share is near the ideal, and every byte goes to n7.
    assertThat(diff.primaryMovedFraction()).isCloseTo(1 / 7.0, within(0.05));
    assertThat(diff.movedReplicaFraction()).isCloseTo(1 / 7.0, within(0.05));
    assertThat(diff.perNode().get("n7").primaryGained()).isEqualTo(diff.primaryMovedFraction());
    assertThat(diff.perNode().get("n7").gained() / to.replicas()).isCloseTo(diff.movedReplicaFraction(),
        within(1e-12));
    assertThat(diff.perNode()).allSatisfy((id, m) -> {
      if (!id.equals("n7")) {
        assertThat(m.gained()).as(id).isZero();
        assertThat(m.primaryGained()).as(id).isZero();
      }
    });
    RingInvariants.checkDiff(from, to, diff, new Random(4));
  }

  @Test
  void shouldChangeEveryRangeWhenTheReplicationFactorGrows() {
    RingSnapshot from = threeZones(2, "n1", "n2", "n3", "n4", "n5", "n6");
    RingSnapshot to = from.toBuilder().replicas(3).epoch(1).build();

    RingDiff diff = from.diffTo(to);

    assertThat(diff.changedFraction()).isCloseTo(1.0, within(1e-12));
    assertThat(diff.primaryMovedFraction()).isZero();
    // Every range gains exactly one replica: a third of all data under R = 3 is new.
    assertThat(diff.movedReplicaFraction()).isCloseTo(1 / 3.0, within(1e-12));
    assertThat(diff.changes()).allSatisfy(c -> assertThat(c.added()).hasSize(1));
    RingInvariants.checkDiff(from, to, diff, new Random(5));
  }

  @Test
  void shouldDescribeOneRangeChange() {
    RangeChange change = new RangeChange(-10L, 10L, List.of("a", "b", "c"), List.of("d", "a", "c"));

    assertThat(change.added()).containsExactly("d");
    assertThat(change.removed()).containsExactly("b");
    assertThat(change.primaryChanged()).isTrue();
    assertThat(change.fraction()).isEqualTo(20 / 0x1p64);
    assertThat(change.contains(-10L)).isFalse();
    assertThat(change.contains(-9L)).isTrue();
    assertThat(change.contains(10L)).isTrue();
    assertThat(change.contains(11L)).isFalse();
    assertThatThrownBy(() -> new RangeChange(1L, 2L, List.of("a"), List.of("a")))
        .isInstanceOf(RingException.class)
        .hasMessage("range (1, 2] has the same replicas [a] before and after; it is not a change");
  }
}
