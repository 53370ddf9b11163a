package io.ringshift.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.ring.Member;
import io.ringshift.ring.RangeChange;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.schemas.avro.TaskKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
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

  @Test
  void shouldCleanUpWhatAJoinTakesFromTheOldReplicasOnceTheNewOnesHoldIt() {
    RingSnapshot active = twelveNodes();
    Plan plan = EpochPlanner.plan(active, plus(active.members(), Member.of("node-12", "az-2")), 2, 0, Set.of(),
        CLUSTER_BYTES);

    assertThat(plan.cleanupTasks()).isNotEmpty().allSatisfy(task -> {
      assertThat(task.kind()).isEqualTo(PlannedTask.Kind.CLEANUP);
      assertThat(task.taskId()).matches("c1/2/cleanup/[0-9a-f]{16}-[0-9a-f]{16}/node-\\d\\d")
          .isEqualTo(RecordKeys.taskId("c1", 2, TaskKind.CLEANUP, task.rangeStart(), task.rangeEnd(),
              task.target()));
      assertThat(task.target()).isNotEqualTo("node-12");
      assertThat(task.targetZone()).isEqualTo(active.member(task.target()).zone());
      assertThat(task.sources()).hasSize(3).contains("node-12").doesNotContain(task.target());
      assertThat(task.estimatedBytes()).isPositive();
    });
    assertThat(plan.tasks()).noneMatch(task -> task.kind() == PlannedTask.Kind.CLEANUP);
    // A join moves each replica it gains off exactly one old replica: as much is deleted as is copied.
    assertThat(plan.cleanupTasks().stream().mapToDouble(PlannedTask::keyspaceFraction).sum())
        .isCloseTo(plan.tasks().stream().mapToDouble(PlannedTask::keyspaceFraction).sum(), within(1e-9));
    assertNoTwoTasksCouldBeOne(plan.cleanupTasks());
    assertCoversExactlyThePairs(plan.diff().changes(), plan.cleanupTasks(), RangeChange::removed);
  }

  @Test
  void shouldCleanUpTheDrainingNodeButNeverADeadOne() {
    RingSnapshot active = twelveNodes();
    Plan drain = EpochPlanner.plan(active, minus(active.members(), "node-04"), 2, 0, Set.of(), 0);
    Plan fail = EpochPlanner.plan(active, minus(active.members(), "node-04"), 2, 0, Set.of("node-04"), 0);

    assertThat(drain.cleanupTasks()).isNotEmpty()
        .anySatisfy(task -> assertThat(task.target()).isEqualTo("node-04"))
        .allSatisfy(task -> assertThat(task.sources()).doesNotContain("node-04"));
    assertThat(fail.cleanupTasks()).noneSatisfy(task -> assertThat(task.target()).isEqualTo("node-04"));
    assertThat(fail.tasks()).hasSameSizeAs(drain.tasks());
  }

  @Test
  void shouldPlanNoCleanupWhenTheMembershipIsUnchanged() {
    RingSnapshot active = twelveNodes();

    assertThat(EpochPlanner.plan(active, active.members(), 2, 0, Set.of(), CLUSTER_BYTES).cleanupTasks()).isEmpty();
  }

  /**
   * Random rings and random changes (joins, drains, failures, weight changes, a failure during a join): the copy
   * tasks cover exactly the (changed range, added node) pairs of the diff and the cleanup tasks exactly the
   * (changed range, removed live node) pairs, each pair once, coalesced as far as possible. Prints its seed;
   * {@code -Dringshift.seed=} replays it.
   */
  @Test
  void shouldCoverExactlyTheDiffWithCopyAndCleanupTasksOnRandomRings() {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    System.out.println("shouldCoverExactlyTheDiffWithCopyAndCleanupTasksOnRandomRings seed=" + seed
        + " (replay: -Dringshift.seed=" + seed + ")");
    Random random = new Random(seed);
    int cases = 0;
    while (cases < 300) {
      long caseSeed = random.nextLong();
      Random r = new Random(caseSeed);
      int zones = 1 + r.nextInt(3);
      var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(1 + r.nextInt(6))
          .replicas(1 + r.nextInt(3));
      int nodes = 2 + r.nextInt(8);
      for (int i = 0; i < nodes; i++) {
        builder.addMember(Member.of("n" + i, "az-" + r.nextInt(zones), 1 + r.nextInt(3)));
      }
      RingSnapshot active = builder.build();
      List<Member> target = new ArrayList<>(active.members());
      Set<String> dead = new HashSet<>();
      String victim = target.get(r.nextInt(target.size())).id();
      switch (r.nextInt(5)) {
        case 0 -> target.add(Member.of("joiner", "az-" + r.nextInt(zones), 1 + r.nextInt(3)));
        case 1 -> target.removeIf(m -> m.id().equals(victim));
        case 2 -> {
          target.removeIf(m -> m.id().equals(victim));
          dead.add(victim);
        }
        case 3 -> target.replaceAll(m -> m.id().equals(victim) ? m.withWeight(m.weight() + 1 + r.nextInt(3)) : m);
        default -> {
          target.add(Member.of("joiner", "az-" + r.nextInt(zones), 1));
          target.removeIf(m -> m.id().equals(victim));
          dead.add(victim);
        }
      }
      Plan plan = EpochPlanner.plan(active, target, 2, 0, dead, CLUSTER_BYTES);
      String scenario = String.format("case seed %d: %d nodes, V %d, R %d, %d zones, target %s, dead %s", caseSeed,
          nodes, active.vnodes(), active.replicas(), zones, target.stream().map(Member::id).toList(), dead);
      try {
        List<RangeChange> changes = plan.diff().changes();
        assertCoversExactlyThePairs(changes, plan.tasks(), RangeChange::added);
        assertCoversExactlyThePairs(changes, plan.cleanupTasks(),
            c -> c.removed().stream().filter(id -> !dead.contains(id)).toList());
        assertNoTwoTasksCouldBeOne(plan.tasks());
        assertNoTwoTasksCouldBeOne(plan.cleanupTasks());
        for (PlannedTask cleanup : plan.cleanupTasks()) {
          assertThat(cleanup.kind()).isEqualTo(PlannedTask.Kind.CLEANUP);
          assertThat(cleanup.targetZone()).isEqualTo(active.member(cleanup.target()).zone());
          assertThat(cleanup.sources()).isEqualTo(plan.target().replicasAt(cleanup.rangeEnd()).ids());
          assertThat(cleanup.estimatedBytes()).isEqualTo(Math.round(cleanup.keyspaceFraction() * CLUSTER_BYTES));
        }
      } catch (AssertionError e) {
        throw new AssertionError(scenario + " (replay all: -Dringshift.seed=" + seed + "): " + e.getMessage(), e);
      }
      cases++;
    }
  }

  /**
   * Each task is a run of adjacent changed ranges (start of one, end of the last), and the (range, task target)
   * pairs of all tasks are exactly the pairs {@code expected} gives per changed range, each once.
   */
  static void assertCoversExactlyThePairs(List<RangeChange> changes, List<PlannedTask> tasks,
      Function<RangeChange, List<String>> expected) {
    Map<Long, Integer> byStart = new HashMap<>();
    for (int i = 0; i < changes.size(); i++) {
      byStart.put(changes.get(i).start(), i);
    }
    List<String> covered = new ArrayList<>();
    for (PlannedTask task : tasks) {
      Integer first = byStart.get(task.rangeStart());
      assertThat(first).as("task %s starts where no changed range starts", task.taskId()).isNotNull();
      int i = first;
      for (int step = 0; ; step++) {
        assertThat(step).as("task %s runs past every changed range", task.taskId()).isLessThan(changes.size());
        RangeChange c = changes.get(i);
        covered.add(i + "->" + task.target());
        if (c.end() == task.rangeEnd()) {
          break;
        }
        i = (i + 1) % changes.size();
        assertThat(changes.get(i).start()).as("task %s spans a gap after range %d", task.taskId(), i).isEqualTo(c.end());
      }
    }
    List<String> wanted = new ArrayList<>();
    for (int i = 0; i < changes.size(); i++) {
      for (String node : expected.apply(changes.get(i))) {
        wanted.add(i + "->" + node);
      }
    }
    assertThat(covered).as("(changed range, node) pairs").containsExactlyInAnyOrderElementsOf(wanted);
  }

  /** No two tasks of a plan could be one. */
  static void assertNoTwoTasksCouldBeOne(Plan plan) {
    assertNoTwoTasksCouldBeOne(plan.tasks());
  }

  /** No two tasks are adjacent (one ends where the other starts) with the same kind, target and sources. */
  static void assertNoTwoTasksCouldBeOne(List<PlannedTask> tasks) {
    for (PlannedTask a : tasks) {
      for (PlannedTask b : tasks) {
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
        if (RingRange.of(task.rangeStart(), task.rangeEnd()).contains(position)) {
          assertThat(targets.add(task.target())).as("two tasks copy position %x to %s", position, task.target())
              .isTrue();
          assertThat(before.ids()).as("sources are old replicas").containsAll(task.sources());
        }
      }
      assertThat(targets).as("position %x", position).isEqualTo(gained);
    }
  }
}
