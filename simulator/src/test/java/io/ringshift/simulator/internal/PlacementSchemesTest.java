package io.ringshift.simulator.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.ringshift.simulator.SimulationParameters;
import io.ringshift.simulator.SimulationResult.Moved;
import io.ringshift.simulator.placement.Fleet;
import io.ringshift.simulator.placement.JumpPlacement;
import io.ringshift.simulator.placement.ModuloPlacement;
import io.ringshift.simulator.placement.PartitionPlacement;
import io.ringshift.simulator.placement.PlacementScheme;
import io.ringshift.simulator.placement.RendezvousPlacement;
import io.ringshift.simulator.placement.RingPlacement;
import java.util.HashSet;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Properties of the five placement schemes on a small scenario: 12 nodes in 3 zones, 20,000 keys. Bounds are
 * wide enough for the sampling noise of 20,000 keys and of V = 256 token shares, and are not timing-dependent.
 */
class PlacementSchemesTest {
  private static final int NODES = 12;
  private static final int REPLICAS = 3;
  private static Workload workload;
  private static Fleet base;
  private static Fleet joined;
  private static Fleet removed;
  private static final int REMOVED = 5;

  @BeforeAll
  static void setUp() {
    SimulationParameters p = SimulationParameters.reference().withScale(NODES, 20_000);
    workload = Workload.generate(p);
    base = Fleet.uniform(NODES, 3);
    joined = base.plusNewNode();
    removed = base.minus(REMOVED);
  }

  private static final List<Function<Fleet, PlacementScheme>> SCHEMES = List.of(
      f -> new ModuloPlacement(f, REPLICAS),
      f -> RingPlacement.of(f, 256, REPLICAS, 1),
      f -> new RendezvousPlacement(f, REPLICAS),
      f -> JumpPlacement.of(f, REPLICAS),
      f -> PartitionPlacement.of(f, 4096, REPLICAS));

  private static Moved move(PlacementScheme before, Fleet next) {
    return MoveAnalysis.between(workload, Assignment.compute(before, workload),
        Assignment.compute(before.changeTo(next), workload), -1).moved();
  }

  @Test
  void shouldGiveEveryKeyDistinctReplicasInEveryScheme() {
    for (Function<Fleet, PlacementScheme> scheme : SCHEMES) {
      for (Fleet fleet : List.of(base, joined, removed)) {
        Assignment a = Assignment.compute(scheme.apply(base).changeTo(fleet), workload);
        for (int k = 0; k < workload.count; k++) {
          Set<Integer> nodes = new HashSet<>();
          for (int j = 0; j < a.stride; j++) {
            int node = a.nodes[k * a.stride + j];
            assertThat(fleet.byNumber(node)).as("%s: replica of key %d is a member", a.placement.scheme(), k)
                .isNotNull();
            nodes.add(node);
          }
          assertThat(nodes).as("%s: replicas of key %d", a.placement.scheme(), k).hasSize(REPLICAS);
        }
      }
    }
  }

  @Test
  void shouldMoveAboutTheIdealOnJoinForRingAndJump() {
    double ideal = 1.0 / (NODES + 1);
    for (PlacementScheme p : List.of(RingPlacement.of(base, 256, REPLICAS, 1), JumpPlacement.of(base, REPLICAS))) {
      Moved m = move(p, joined);
      assertThat(m.idealFraction()).isCloseTo(ideal, within(1e-12));
      // The ring's joining node lands in a zone of 5 nodes (4 in the others), so its replica share is below
      // 1/13; token shares at V = 256 add a few percent either way.
      assertThat(m.keysOverIdeal()).as("%s replica copies / ideal", p.scheme()).isBetween(0.75, 1.2);
      assertThat(m.primaryOverIdeal()).as("%s primaries / ideal", p.scheme()).isBetween(0.8, 1.2);
    }
  }

  @Test
  void shouldMoveAlmostEveryKeyWithModulo() {
    Moved m = move(new ModuloPlacement(base, REPLICAS), joined);
    // hash mod 12 == hash mod 13 for about 1 key in 13.
    assertThat(m.primaryKeysFraction()).isCloseTo(12.0 / 13, within(0.02));
    assertThat(m.keysOverIdeal()).isGreaterThan(8);
  }

  @Test
  void shouldMoveKeysOnlyToTheJoiningNodeWithRendezvousRingAndPartitions() {
    int joiner = joined.maxNumber();
    for (PlacementScheme p : List.of(new RendezvousPlacement(base, REPLICAS),
        RingPlacement.of(base, 256, REPLICAS, 1), PartitionPlacement.of(base, 4096, REPLICAS))) {
      Assignment before = Assignment.compute(p, workload);
      Assignment after = Assignment.compute(p.changeTo(joined), workload);
      for (int k = 0; k < workload.count; k++) {
        for (int j = 0; j < REPLICAS; j++) {
          int node = after.nodes[k * REPLICAS + j];
          if (!contains(before.nodes, k * REPLICAS, REPLICAS, node)) {
            assertThat(node).as("%s: new replica of key %d", p.scheme(), k).isEqualTo(joiner);
          }
        }
      }
    }
  }

  @Test
  void shouldMoveOnlyTheRemovedNodesKeysWithRendezvousAndRing() {
    for (PlacementScheme p : List.of(new RendezvousPlacement(base, REPLICAS),
        RingPlacement.of(base, 256, REPLICAS, 1))) {
      Assignment before = Assignment.compute(p, workload);
      Assignment after = Assignment.compute(p.changeTo(removed), workload);
      for (int k = 0; k < workload.count; k++) {
        if (!contains(before.nodes, k * REPLICAS, REPLICAS, REMOVED)) {
          for (int j = 0; j < REPLICAS; j++) {
            assertThat(contains(before.nodes, k * REPLICAS, REPLICAS, after.nodes[k * REPLICAS + j]))
                .as("%s: key %d did not involve the removed node, so its replicas stay", p.scheme(), k).isTrue();
          }
        }
      }
    }
  }

  @Test
  void shouldMoveAboutTwiceTheIdealWhenJumpRemovesANodeOtherThanTheLast() {
    Moved m = move(JumpPlacement.of(base, REPLICAS), removed);
    assertThat(m.keysOverIdeal()).isBetween(1.6, 2.4);
    Moved last = move(JumpPlacement.of(base, REPLICAS), base.minus(NODES - 1));
    assertThat(last.keysOverIdeal()).isBetween(0.85, 1.15);
  }

  @Test
  void shouldReassignPartitionsMinimallyAndKeepThemBalancedAndZoneSpread() {
    PartitionPlacement p = PartitionPlacement.of(base, 4096, REPLICAS);
    for (Fleet next : List.of(base, joined, removed)) {
      if (next != base) {
        assertThat(move(p, next).keysOverIdeal()).as("partitions to %d nodes", next.size()).isBetween(0.8, 1.25);
      }
      // Zone spread fixes each zone's slot total, so balance is checked within a zone: equal nodes differ by
      // at most one slot.
      int[] slots = p.changeTo(next).slotCounts();
      for (int zone = 0; zone < 3; zone++) {
        int z = zone;
        IntSummaryStatistics s = next.nodes().stream().filter(n -> n.zone() == z)
            .mapToInt(n -> slots[n.number()]).summaryStatistics();
        assertThat(s.getMax() - s.getMin()).as("slot spread in zone %d of %d nodes", zone, next.size())
            .isLessThanOrEqualTo(1);
      }
    }
    Assignment a = Assignment.compute(p.changeTo(removed), workload);
    for (int k = 0; k < workload.count; k += 97) {
      Set<Integer> zones = new HashSet<>();
      for (int j = 0; j < REPLICAS; j++) {
        zones.add(removed.byNumber(a.nodes[k * REPLICAS + j]).zone());
      }
      assertThat(zones).as("zones of key %d", k).hasSize(3);
    }
  }

  @Test
  void shouldNotMoveAnythingWhenTheFleetDoesNotChange() {
    for (Function<Fleet, PlacementScheme> scheme : SCHEMES) {
      Moved m = move(scheme.apply(base), base);
      assertThat(m.replicaCopies()).as("copies").isZero();
      assertThat(m.primaryKeys()).as("primaries").isZero();
    }
  }

  private static boolean contains(int[] values, int from, int count, int value) {
    for (int i = from; i < from + count; i++) {
      if (values[i] == value) {
        return true;
      }
    }
    return false;
  }
}
