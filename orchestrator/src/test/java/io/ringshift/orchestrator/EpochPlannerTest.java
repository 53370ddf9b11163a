package io.ringshift.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.ring.Member;
import io.ringshift.ring.RangeChange;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EpochPlannerTest {
  private static final long CLUSTER_BYTES = 1L << 40;

  static RingSnapshot twelveNodes() {
    var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(64).replicas(3);
    for (int i = 0; i < 12; i++) {
      builder.addMember(String.format("node-%02d", i), "az-" + (i % 3 + 1));
    }
    return builder.build();
  }

  static List<Member> plus(List<Member> members, Member extra) {
    List<Member> next = new ArrayList<>(members);
    next.add(extra);
    return next;
  }

  static List<Member> minus(List<Member> members, String id) {
    List<Member> next = new ArrayList<>(members);
    next.removeIf(m -> m.id().equals(id));
    return next;
  }

  @Test
  void shouldPlanCopiesOnlyToTheJoiningNodeFromLiveReplicasSameZoneFirst() {
    RingSnapshot active = twelveNodes();
    Plan plan = EpochPlanner.plan(active, plus(active.members(), Member.of("node-12", "az-2")), 2, 1, Set.of(),
        CLUSTER_BYTES);

    assertThat(plan.target().epoch()).isEqualTo(2);
    assertThat(plan.tasks()).isNotEmpty().allSatisfy(task -> {
      assertThat(task.target()).isEqualTo("node-12");
      assertThat(task.targetZone()).isEqualTo("az-2");
      assertThat(task.kind()).isEqualTo(PlannedTask.Kind.COPY);
      assertThat(task.sources()).isNotEmpty().doesNotContain("node-12");
      boolean seenOtherZone = false;
      for (String source : task.sources()) {
        boolean sameZone = active.member(source).zone().equals("az-2");
        assertThat(sameZone && seenOtherZone).as("same-zone sources first: %s", task.sources()).isFalse();
        seenOtherZone |= !sameZone;
      }
    });
    // Coalescing never makes more tasks than the diff has (range, new replica) pairs, and it is maximal.
    long pairs = plan.diff().changes().stream().mapToLong(c -> c.added().size()).sum();
    assertThat(plan.tasks().size()).isLessThan((int) pairs);
    assertNoTwoTasksCouldBeOne(plan);
    assertCoversExactlyTheDiff(active, plan, new Random(1));
    assertThat(plan.estimatedBytes()).isCloseTo(
        Math.round(plan.diff().movedReplicaFraction() * 3 * CLUSTER_BYTES), within((long) plan.tasks().size()));
  }

  @Test
  void shouldGiveDeterministicUniqueTaskIds() {
    RingSnapshot active = twelveNodes();
    List<Member> target = plus(active.members(), Member.of("node-12", "az-2"));
    Plan first = EpochPlanner.plan(active, target, 2, 1, Set.of(), 0);
    Plan second = EpochPlanner.plan(active, target, 2, 1, Set.of(), 0);

    assertThat(first.tasks()).isEqualTo(second.tasks());
    Set<String> ids = new HashSet<>();
    first.tasks().forEach(t -> assertThat(ids.add(t.taskId())).as("duplicate id %s", t.taskId()).isTrue());
    assertThat(first.tasks().get(0).taskId()).matches("c1/2/copy/[0-9a-f]{16}-[0-9a-f]{16}/node-12");
  }

  @Test
  void shouldRepairAFailedNodesRangesFromSurvivorsOnly() {
    RingSnapshot active = twelveNodes();
    Plan plan = EpochPlanner.plan(active, minus(active.members(), "node-04"), 2, 1, Set.of("node-04"), 0);

    assertThat(plan.tasks()).isNotEmpty().allSatisfy(task -> {
      assertThat(task.kind()).isEqualTo(PlannedTask.Kind.REPAIR);
      assertThat(task.sources()).isNotEmpty().doesNotContain("node-04");
    });
    assertCoversExactlyTheDiff(active, plan, new Random(2));
  }

  @Test
  void shouldCopyFromTheDrainingNodeItself() {
    RingSnapshot active = twelveNodes();
    Plan plan = EpochPlanner.plan(active, minus(active.members(), "node-04"), 2, 1, Set.of(), 0);

    assertThat(plan.tasks()).isNotEmpty().allSatisfy(task -> assertThat(task.kind()).isEqualTo(PlannedTask.Kind.COPY));
    assertThat(plan.tasks()).anySatisfy(task -> assertThat(task.sources()).contains("node-04"));
  }

  @Test
  void shouldPlanNothingWhenTheMembershipIsUnchanged() {
    RingSnapshot active = twelveNodes();
    Plan plan = EpochPlanner.plan(active, active.members(), 2, 1, Set.of(), CLUSTER_BYTES);

    assertThat(plan.tasks()).isEmpty();
    assertThat(plan.diff().isEmpty()).isTrue();
  }

  @Test
  void shouldCoalesceAdjacentRangesWithTheSameTargetAndSourcesIncludingAcrossTheTop() {
    for (int seed = 0; seed < 30; seed++) {
      var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(4).replicas(2);
      Random random = new Random(seed);
      int nodes = 3 + random.nextInt(6);
      for (int i = 0; i < nodes; i++) {
        builder.addMember("n" + i, "az-" + (i % 2));
      }
      RingSnapshot active = builder.build();
      Plan plan = EpochPlanner.plan(active, plus(active.members(), Member.of("joiner", "az-0")), 2, 0, Set.of(), 0);
      assertNoTwoTasksCouldBeOne(plan);
      assertCoversExactlyTheDiff(active, plan, random);
    }
  }

  /** No two tasks are adjacent (one ends where the other starts) with the same kind, target and sources. */
  static void assertNoTwoTasksCouldBeOne(Plan plan) {
    for (PlannedTask a : plan.tasks()) {
      for (PlannedTask b : plan.tasks()) {
        if (a != b && a.rangeEnd() == b.rangeStart() && a.kind() == b.kind() && a.target().equals(b.target())
            && a.sources().equals(b.sources())) {
          throw new AssertionError("tasks " + a.taskId() + " and " + b.taskId() + " should be one task");
        }
      }
    }
  }

  /** Every sampled position: the targets of the tasks covering it are exactly the replicas it gains. */
  static void assertCoversExactlyTheDiff(RingSnapshot active, Plan plan, Random random) {
    for (int i = 0; i < 20_000; i++) {
      long position = random.nextLong();
      ReplicaSet before = active.replicasAt(position);
      ReplicaSet after = plan.target().replicasAt(position);
      Set<String> gained = new HashSet<>(after.ids());
      gained.removeAll(before.ids());
      Set<String> targets = new HashSet<>();
      for (PlannedTask task : plan.tasks()) {
        if (RangeChange.contains(task.rangeStart(), task.rangeEnd(), position)) {
          assertThat(targets.add(task.target())).as("two tasks copy position %x to %s", position, task.target())
              .isTrue();
          assertThat(before.ids()).as("sources are old replicas").containsAll(task.sources());
        }
      }
      assertThat(targets).as("position %x", position).isEqualTo(gained);
    }
  }
}
