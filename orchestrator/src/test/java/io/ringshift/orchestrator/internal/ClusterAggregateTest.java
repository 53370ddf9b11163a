package io.ringshift.orchestrator.internal;

import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.PlannedTask;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Rejection;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskCancelled;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Transition;
import io.ringshift.orchestrator.MembershipChange.Action;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterAggregateTest {
  private static final long BYTES = 1L << 30;

  static RingSnapshot initial() {
    var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(32).replicas(3);
    for (int i = 0; i < 12; i++) {
      builder.addMember(String.format("node-%02d", i), "az-" + (i % 3 + 1));
    }
    return builder.build();
  }

  static MembershipChange change(Action action, String node, String zone) {
    return new MembershipChange(action, node, zone, null, "req-" + action + "-" + node);
  }

  static ClusterAggregate initialised() {
    return ClusterAggregate.uninitialised().init(initial(), null).next();
  }

  static List<TaskEvent> tasks(Transition t) {
    return t.effects().stream().filter(TaskEvent.class::isInstance).map(TaskEvent.class::cast).toList();
  }

  static List<EpochEvent> epochs(Transition t) {
    return t.effects().stream().filter(EpochEvent.class::isInstance).map(EpochEvent.class::cast).toList();
  }

  /** Reports every task of the in-flight plan VERIFIED, returning the transitions' combined effects. */
  static Transition verifyAll(ClusterAggregate state) {
    Transition last = new Transition(state, List.of());
    List<ClusterAggregate.Effect> effects = new java.util.ArrayList<>();
    long epoch = state.inFlight().plan().target().epoch();
    for (PlannedTask task : state.inFlight().plan().tasks()) {
      last = last.next().onVerified(task.taskId(), epoch, BYTES);
      effects.addAll(last.effects());
    }
    return new Transition(last.next(), effects);
  }

  @Test
  void shouldDeclareANewClusterAsAReadyEpochWithoutTasks() {
    Transition t = ClusterAggregate.uninitialised().init(initial(), null);

    assertThat(epochs(t)).extracting(EpochEvent::state)
        .containsExactly(EpochEvent.State.PLANNED, EpochEvent.State.READY);
    assertThat(tasks(t)).isEmpty();
    assertThat(t.next().active().epoch()).isEqualTo(1);
  }

  @Test
  void rejectsToInitialiseAnExistingCluster() {
    Transition t = initialised().init(initial(), null);

    assertThat(t.effects()).singleElement().isInstanceOf(Rejection.class)
        .extracting(e -> ((Rejection) e).reason()).asString().contains("cluster c1 already exists");
    assertThat(t.next()).isEqualTo(initialised());
  }

  @Test
  void rejectsChangesToAnUnknownCluster() {
    Transition t = ClusterAggregate.uninitialised().onChange(change(Action.JOIN, "node-12", "az-1"), BYTES);

    assertThat(t.effects()).singleElement().isInstanceOf(Rejection.class);
    assertThat(t.next().initialised()).isFalse();
  }

  @Test
  void shouldPlanAJoinAsTheNextEpochWithTasksToTheJoiningNode() {
    Transition t = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES);

    assertThat(epochs(t)).singleElement().satisfies(e -> {
      assertThat(e.state()).isEqualTo(EpochEvent.State.PLANNED);
      assertThat(e.plan().target().epoch()).isEqualTo(2);
    });
    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> {
      assertThat(task.epoch()).isEqualTo(2);
      assertThat(task.task().target()).isEqualTo("node-12");
      assertThat(task.task().estimatedBytes()).isPositive();
    });
  }

  @Test
  void shouldQueueChangesWhileAnEpochIsInFlightAndPlanThemFromTheResult() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    Transition queued = joining.onChange(change(Action.DRAIN, "node-03", null), BYTES);

    assertThat(queued.effects()).isEmpty();
    assertThat(queued.next().queue()).hasSize(1);

    Transition done = verifyAll(queued.next());
    assertThat(epochs(done)).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .containsExactly("READY@2", "PLANNED@3");
    assertThat(done.next().active().epoch()).isEqualTo(2);
    assertThat(done.next().active().member("node-12")).isNotNull();
    assertThat(done.next().inFlight().plan().target().member("node-03")).isNull();
    assertThat(done.next().queue()).isEmpty();
  }

  @Test
  void rejectsAChangeThatConflictsWithTheQueuedMembership() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();

    Transition duplicate = joining.onChange(change(Action.JOIN, "node-12", "az-2"), BYTES);

    assertThat(duplicate.effects()).singleElement().isInstanceOf(Rejection.class)
        .extracting(e -> ((Rejection) e).reason()).asString().contains("already a member");
    assertThat(duplicate.next()).isEqualTo(joining);
  }

  @Test
  void shouldReplanWhenANodeTheRunningPlanCopiesFromFails() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    String source = joining.inFlight().plan().tasks().get(0).sources().get(0);

    Transition t = joining.onChange(change(Action.FAIL, source, null), BYTES);

    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch() + "/p" + e.plan().planVersion())
        .containsExactly("SUPERSEDED@2/p0", "PLANNED@2/p1", "READY@2/p1", "PLANNED@3/p0");
    EpochEvent failure = epochs(t).get(1);
    assertThat(failure.supersedes()).isEqualTo(2L);
    assertThat(failure.previousChecksum()).isEqualTo(initial().checksum());
    assertThat(failure.plan().tasks()).isEmpty();
    assertThat(failure.plan().target().member(source)).isNull();
    assertThat(failure.plan().target().member("node-12")).as("the unverified join is not published").isNull();
    assertThat(failure.filling()).isEqualTo(FillingRange.between(initial(), failure.plan().target()));
    assertThat(epochs(t).get(3).previousChecksum()).isEqualTo(failure.plan().target().checksum());
    assertThat(epochs(t).get(0).reason()).contains("node " + source + " failed");
    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> {
      assertThat(task.task().sources()).doesNotContain(source);
      assertThat(task.epoch()).isEqualTo(3);
      assertThat(task.planVersion()).isEqualTo(0);
    });
    assertThat(t.next().inFlight().plan().target().member(source)).isNull();
    assertThat(t.next().inFlight().plan().target().member("node-12")).isNotNull();
  }

  @Test
  void shouldReplanAtOnceWhenAnyNodeFailsWhileAnEpochIsInFlight() {
    // Few tokens per node, so that a join touches only some nodes.
    var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(1).replicas(3);
    for (int i = 0; i < 30; i++) {
      builder.addMember(String.format("node-%02d", i), "az-" + (i % 3 + 1));
    }
    RingSnapshot sparse = builder.build();
    ClusterAggregate joining = ClusterAggregate.uninitialised().init(sparse, null).next()
        .onChange(change(Action.JOIN, "node-30", "az-2"), BYTES).next();
    String bystander = sparse.memberIds().stream().filter(id -> joining.inFlight().plan().tasks().stream()
        .noneMatch(task -> task.target().equals(id) || task.sources().contains(id))).findFirst().orElseThrow();

    Transition t = joining.onChange(change(Action.FAIL, bystander, null), BYTES);

    assertThat(epochs(t)).extracting(EpochEvent::state).containsExactly(EpochEvent.State.SUPERSEDED,
        EpochEvent.State.PLANNED, EpochEvent.State.READY, EpochEvent.State.PLANNED);
    assertThat(t.next().inFlight().plan().target().member(bystander)).isNull();
    assertThat(t.next().inFlight().plan().target().member("node-30")).isNotNull();
    assertThat(t.next().queue()).isEmpty();
  }

  @Test
  void shouldReplanWhenADrainingNodeFails() {
    ClusterAggregate draining = initialised().onChange(change(Action.DRAIN, "node-03", null), BYTES).next();

    Transition t = draining.onChange(change(Action.FAIL, "node-03", null), BYTES);

    assertThat(epochs(t)).extracting(EpochEvent::state).containsExactly(EpochEvent.State.SUPERSEDED,
        EpochEvent.State.PLANNED, EpochEvent.State.READY, EpochEvent.State.PLANNED);
    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> {
      assertThat(task.task().kind()).isEqualTo(PlannedTask.Kind.REPAIR);
      assertThat(task.task().sources()).doesNotContain("node-03");
    });
    assertThat(t.next().onChange(change(Action.FAIL, "node-03", null), BYTES).effects())
        .singleElement().isInstanceOf(Rejection.class);
  }

  @Test
  void shouldCancelEveryTaskOfAPlanThatAFailureEpochSupersedes() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    List<PlannedTask> planned = joining.inFlight().plan().tasks();
    String failed = planned.get(0).sources().get(0);
    ClusterAggregate progressed = joining;
    List<String> verifiedUntouched = new java.util.ArrayList<>();
    for (PlannedTask task : planned) {
      if (!task.sources().contains(failed)) {
        progressed = progressed.onVerified(task.taskId(), 2, BYTES).next();
        verifiedUntouched.add(task.taskId());
      }
    }

    Transition t = progressed.onChange(change(Action.FAIL, failed, null), BYTES);

    List<String> reissued = tasks(t).stream().map(task -> task.task().taskId()).toList();
    assertThat(reissued).doesNotContainAnyElementsOf(verifiedUntouched);
    assertThat(t.next().inFlight().verified()).containsAll(
        verifiedUntouched.stream().filter(id -> t.next().inFlight().plan().tasks().stream()
            .anyMatch(task -> task.taskId().equals(id))).toList());
    List<String> cancelled = t.effects().stream().filter(ClusterAggregate.TaskCancelled.class::isInstance)
        .map(e -> ((ClusterAggregate.TaskCancelled) e).taskId()).toList();
    List<String> newIds = t.next().inFlight().plan().tasks().stream().map(PlannedTask::taskId).toList();
    assertThat(cancelled).doesNotContainAnyElementsOf(newIds);
    assertThat(planned.stream().map(PlannedTask::taskId).filter(id -> !newIds.contains(id)))
        .containsExactlyInAnyOrderElementsOf(cancelled);
  }

  @Test
  void shouldRefuseAQueuedChangeThatNoLongerAppliesWithItsOwnRequest() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    MembershipChange drain = change(Action.DRAIN, "node-05", null);
    ClusterAggregate queued = joining.onChange(drain, BYTES).next();
    ClusterAggregate replanned = queued.onChange(change(Action.FAIL, "node-05", null), BYTES).next();

    Transition done = verifyAll(replanned);

    assertThat(done.effects()).filteredOn(Rejection.class::isInstance).singleElement().satisfies(e -> {
      Rejection r = (Rejection) e;
      assertThat(r.origin()).isEqualTo(drain);
      assertThat(r.reason()).contains("DRAIN of node node-05").contains("not a member");
    });
    assertThat(done.next().inFlight()).isNull();
    assertThat(done.next().queue()).isEmpty();
  }

  /**
   * node-13's JOIN is queued behind node-12's; node-13 fails before its turn. The FAIL used to be refused as "not a
   * member" and the JOIN was later planned onto the dead node, its tasks BLOCKED for good. Now the JOIN is withdrawn
   * (refused with its own request, naming the FAIL) and never planned.
   */
  @Test
  void shouldWithdrawTheQueuedJoinOfANodeThatFailsBeforeItsTurn() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    MembershipChange join = change(Action.JOIN, "node-13", "az-3");
    ClusterAggregate queued = joining.onChange(join, BYTES).next();
    MembershipChange fail = change(Action.FAIL, "node-13", null);

    Transition failed = queued.onChange(fail, BYTES);

    assertThat(failed.effects()).singleElement().isInstanceOf(Rejection.class).satisfies(e -> {
      Rejection r = (Rejection) e;
      assertThat(r.origin()).isEqualTo(join);
      assertThat(r.reason()).isEqualTo("JOIN of node node-13 withdrawn: the node failed (FAIL request "
          + fail.requestId() + ") while its join was still queued behind epoch 2; nothing was copied to it");
    });
    assertThat(failed.next().queue()).isEmpty();
    assertThat(failed.next().inFlight()).isEqualTo(joining.inFlight());
    Transition done = verifyAll(failed.next());
    assertThat(done.next().inFlight()).as("nothing planned after epoch 2").isNull();
    assertThat(done.next().active().member("node-13")).isNull();
  }

  @Test
  void rejectsAQueuedChangeThatBreaksARingRuleAtOnce() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();

    Transition t = joining.onChange(new MembershipChange(Action.SET_WEIGHT, "node-01", null, 0.001, "r"), BYTES);

    assertThat(t.effects()).singleElement().isInstanceOf(Rejection.class)
        .extracting(e -> ((Rejection) e).reason()).asString().contains("0 tokens");
    assertThat(t.next().queue()).isEmpty();
  }

  @Test
  void shouldPlanAFailureAsRepairsFromSurvivors() {
    Transition t = initialised().onChange(change(Action.FAIL, "node-05", null), BYTES);

    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> {
      assertThat(task.task().kind()).isEqualTo(PlannedTask.Kind.REPAIR);
      assertThat(task.task().sources()).isNotEmpty().doesNotContain("node-05");
    });
  }

  @Test
  void shouldPublishAFailureEpochAtOnceAndClearItsFillingMarksWhenTheRepairIsVerified() {
    RingSnapshot before = initial();
    Transition t = initialised().onChange(change(Action.FAIL, "node-05", null), BYTES);

    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .containsExactly("PLANNED@2", "READY@2", "PLANNED@3");
    EpochEvent failure = epochs(t).get(1);
    RingSnapshot failed = failure.plan().target();
    assertThat(failed.member("node-05")).isNull();
    assertThat(failure.previousChecksum()).isEqualTo(before.checksum());
    assertThat(failure.filling()).isNotEmpty().isEqualTo(FillingRange.between(before, failed))
        .allSatisfy(f -> assertThat(f.node()).isNotEqualTo("node-05"));
    assertThat(failure.plan().tasks()).isEmpty();
    EpochEvent repair = epochs(t).get(2);
    assertThat(repair.plan().target().memberIds()).isEqualTo(failed.memberIds());
    assertThat(repair.previousChecksum()).isEqualTo(failed.checksum());
    assertThat(repair.filling()).isEmpty();
    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> assertThat(task.epoch()).isEqualTo(3));
    // Every filling mark is a replica that a repair task fills.
    for (FillingRange mark : failure.filling()) {
      assertThat(repair.plan().tasks()).as("mark %s", mark).anyMatch(task -> task.target().equals(mark.node())
          && RingRange.of(task.rangeStart(), task.rangeEnd()).contains(mark.end()));
    }
    assertThat(t.next().active().epoch()).isEqualTo(1);
    assertThat(t.next().lastReadyRing()).isEqualTo(failed);

    Transition repaired = verifyAll(t.next());

    assertThat(epochs(repaired)).singleElement().satisfies(e -> {
      assertThat(e.state()).isEqualTo(EpochEvent.State.READY);
      assertThat(e.plan().target().epoch()).isEqualTo(3);
      assertThat(e.previousChecksum()).isEqualTo(failed.checksum());
      assertThat(e.filling()).isEmpty();
    });
    assertThat(repaired.next().active().epoch()).isEqualTo(3);
  }

  @Test
  void shouldPublishASecondFailureDuringARepairAsItsOwnEpoch() {
    ClusterAggregate repairing = initialised().onChange(change(Action.FAIL, "node-05", null), BYTES).next();
    RingSnapshot firstFailure = repairing.lastReadyRing();

    Transition t = repairing.onChange(change(Action.FAIL, "node-07", null), BYTES);

    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .containsExactly("SUPERSEDED@3", "PLANNED@3", "READY@3", "PLANNED@4");
    EpochEvent second = epochs(t).get(2);
    assertThat(second.previousChecksum()).isEqualTo(firstFailure.checksum());
    assertThat(second.plan().target().member("node-05")).isNull();
    assertThat(second.plan().target().member("node-07")).isNull();
    assertThat(second.filling()).isEqualTo(FillingRange.between(initial(), second.plan().target()));
    assertThat(epochs(t).get(3).previousChecksum()).isEqualTo(second.plan().target().checksum());
    assertThat(tasks(t)).allSatisfy(task -> assertThat(task.task().sources()).doesNotContain("node-05", "node-07"));
    assertThat(t.next().lastReadyRing()).isEqualTo(second.plan().target());
  }

  /** 4 nodes in az-1, 4 in az-2, {@code node-x} alone in az-3; R = 3. */
  private static ClusterAggregate threeZonesOneThin() {
    var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(16).replicas(3);
    for (int i = 0; i < 8; i++) {
      builder.addMember(String.format("node-%02d", i), "az-" + (i % 2 + 1));
    }
    builder.addMember("node-x", "az-3");
    return ClusterAggregate.uninitialised().init(builder.build(), null).next();
  }

  @Test
  void shouldNotPublishAFailureBeforeItsRepairWhenFewerZonesThanReplicasRemain() {
    Transition t = threeZonesOneThin().onChange(change(Action.FAIL, "node-x", null), BYTES);

    // Without az-3 a survivor can leave a range it replicated, so the repair must complete first.
    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch()).containsExactly("PLANNED@2");
    assertThat(epochs(t).get(0).filling()).isEmpty();
    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> assertThat(task.task().sources()).doesNotContain("node-x"));
    assertThat(t.next().lastReadyRing().epoch()).isEqualTo(1);
    assertThat(epochs(verifyAll(t.next()))).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .containsExactly("READY@2");
  }

  @Test
  void shouldStopPublishingFailureEpochsOnceAFailureLeavesFewerZonesThanReplicas() {
    ClusterAggregate repairing = threeZonesOneThin().onChange(change(Action.FAIL, "node-00", null), BYTES).next();
    RingSnapshot firstFailure = repairing.lastReadyRing();
    assertThat(firstFailure.epoch()).as("3 zones remain: published at once").isEqualTo(2);

    Transition t = repairing.onChange(change(Action.FAIL, "node-x", null), BYTES);

    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch() + "/p" + e.plan().planVersion())
        .containsExactly("SUPERSEDED@3/p0", "PLANNED@3/p1");
    assertThat(epochs(t).get(1).previousChecksum()).as("chained to the failure epoch clients route by")
        .isEqualTo(firstFailure.checksum());
    assertThat(t.next().lastReadyRing()).isEqualTo(firstFailure);
    assertThat(t.next().inFlight().deadNodes()).containsExactly("node-00", "node-x");

    Transition third = t.next().onChange(change(Action.FAIL, "node-03", null), BYTES);
    assertThat(epochs(third)).extracting(e -> e.state() + "@" + e.plan().target().epoch() + "/p" + e.plan().planVersion())
        .containsExactly("SUPERSEDED@3/p1", "PLANNED@3/p2");
    assertThat(third.next().lastReadyRing()).isEqualTo(firstFailure);
    assertThat(tasks(third)).allSatisfy(task -> assertThat(task.task().sources())
        .doesNotContain("node-00", "node-x", "node-03"));
    Transition repaired = verifyAll(third.next());
    assertThat(epochs(repaired)).singleElement().satisfies(e -> {
      assertThat(e.state()).isEqualTo(EpochEvent.State.READY);
      assertThat(e.previousChecksum()).isEqualTo(firstFailure.checksum());
    });
  }

  @Test
  void shouldReplanUnderTheSameEpochWhenOnlyAJoiningNodeFails() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();

    Transition t = joining.onChange(change(Action.FAIL, "node-12", null), BYTES);

    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch() + "/p" + e.plan().planVersion())
        .startsWith("SUPERSEDED@2/p0", "PLANNED@2/p1");
    assertThat(epochs(t)).allSatisfy(e -> assertThat(e.filling()).isEmpty());
    assertThat(epochs(t).get(1).previousChecksum()).isEqualTo(initial().checksum());
  }

  @Test
  void shouldIgnoreStatusesOfOtherEpochsAndUnknownTasks() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    String taskId = joining.inFlight().plan().tasks().get(0).taskId();

    assertThat(joining.onVerified("c1/9/copy/x/y", 2, BYTES).effects()).isEmpty();
    assertThat(joining.onVerified(taskId, 7, BYTES).next()).isEqualTo(joining);
  }

  @Test
  void shouldBeReadyAtOnceWhenAChangeMovesNothing() {
    ClusterAggregate state = initialised();
    // The weight a node already has: a valid change that moves no range.
    Transition t = state.onChange(new MembershipChange(Action.SET_WEIGHT, "node-01", null, 1.0, "r"), BYTES);

    assertThat(epochs(t)).extracting(EpochEvent::state)
        .containsExactly(EpochEvent.State.PLANNED, EpochEvent.State.READY);
    assertThat(t.next().active().epoch()).isEqualTo(2);
    assertThat(t.next().inFlight()).isNull();
  }

  @Test
  void shouldSayWhenAFailureLeavesRangesWithoutAnySurvivingReplica() {
    RingSnapshot single = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(8).replicas(1)
        .addMember("a", "z1").addMember("b", "z2").build();
    ClusterAggregate state = ClusterAggregate.uninitialised().init(single, null).next();

    Transition t = state.onChange(change(Action.FAIL, "a", null), BYTES);

    assertThat(tasks(t)).isNotEmpty().allSatisfy(task -> assertThat(task.task().sources()).isEmpty());
    assertThat(epochs(t)).last().satisfies(e -> assertThat(e.reason()).contains("no surviving source"));
  }

  /** The publisher's PUBLISHED answer to a READY event, as the processor passes it. */
  static ClusterAggregate published(ClusterAggregate state, EpochEvent ready) {
    RingSnapshot ring = ready.plan().target();
    return state.onPublished(ring.epoch(), ring.checksum(), !ready.filling().isEmpty(), () -> ring).next();
  }

  @Test
  void shouldRollBackARejectedRepairToItsPublishedFailureEpochAndPlanTheRepairAgainChainedToIt() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition fail = state.onChange(change(Action.FAIL, "node-03", null), BYTES);
    EpochEvent failureReady = ready(fail);
    assertThat(failureReady.plan().target().epoch()).isEqualTo(2);
    state = published(fail.next(), failureReady);
    Transition repaired = verifyAll(state);
    EpochEvent repairReady = ready(repaired);
    assertThat(repairReady.plan().target().epoch()).isEqualTo(3);

    Transition rolledBack = repaired.next().onRejected(3, repairReady.plan().target().checksum(),
        "SOURCES: for the test", BYTES);

    // The repair's tasks, cleanups included, are cancelled; the repair is planned again as epoch 4 from the complete
    // epoch 1 with node-03 dead, chained to the published failure epoch 2 (no failure epoch again).
    assertThat(rolledBack.effects()).filteredOn(TaskCancelled.class::isInstance)
        .hasSize(repairReady.plan().tasks().size() + repairReady.plan().cleanupTasks().size());
    assertThat(epochs(rolledBack)).extracting(EpochEvent::state).containsExactly(EpochEvent.State.PLANNED);
    EpochEvent again = epochs(rolledBack).get(0);
    assertThat(again.plan().target().epoch()).isEqualTo(4);
    assertThat(again.previousChecksum()).isEqualTo(failureReady.plan().target().checksum());
    assertThat(again.supersedes()).isEqualTo(3L);
    assertThat(again.plan().target().member("node-03")).isNull();
    ClusterAggregate after = rolledBack.next();
    assertThat(after.active().epoch()).as("plans from the complete ring").isEqualTo(1);
    assertThat(after.lastReadyRing().epoch()).isEqualTo(2);
    assertThat(after.inFlight().plan().tasks()).isNotEmpty()
        .allSatisfy(t -> assertThat(t.sources()).doesNotContain("node-03"));
    assertThat(tasks(rolledBack)).allSatisfy(t -> assertThat(t.epoch()).isEqualTo(4));

    Transition done = verifyAll(after);
    EpochEvent ready4 = ready(done);
    assertThat(ready4.previousChecksum()).isEqualTo(failureReady.plan().target().checksum());
    assertThat(done.next().active().epoch()).isEqualTo(4);
  }

  @Test
  void shouldPlanTheRepairOfEveryDeadNodeThePublishedEpochRemovedWithoutBringingOneBack() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition first = state.onChange(change(Action.FAIL, "node-03", null), BYTES);
    state = published(first.next(), ready(first));
    Transition second = state.onChange(change(Action.FAIL, "node-04", null), BYTES);
    EpochEvent secondFailure = ready(second);
    assertThat(secondFailure.plan().target().epoch()).isEqualTo(3);
    state = published(second.next(), secondFailure);
    Transition repaired = verifyAll(state);
    EpochEvent repairReady = ready(repaired);

    Transition rolledBack = repaired.next().onRejected(repairReady.plan().target().epoch(),
        repairReady.plan().target().checksum(), "PLACEMENT: for the test", BYTES);

    assertThat(epochs(rolledBack)).as("no failure epoch that would bring node-04 back")
        .noneMatch(e -> e.state() == EpochEvent.State.READY);
    EpochEvent again = epochs(rolledBack).get(0);
    assertThat(again.previousChecksum()).isEqualTo(secondFailure.plan().target().checksum());
    assertThat(again.plan().target().member("node-03")).isNull();
    assertThat(again.plan().target().member("node-04")).isNull();
    assertThat(rolledBack.next().inFlight().plan().tasks())
        .allSatisfy(t -> assertThat(t.sources()).doesNotContain("node-03", "node-04"));
  }

  /**
   * Protocol review of e5d1a4e: node-03 fails, failure epoch 2 is published, and its repair is rejected four times in a
   * row. The cluster holds with the active ring the last complete one (which still has node-03) and the published
   * epoch 2 (which does not). The next JOIN was planned from the active ring, so node-03 was placed again as a complete
   * replica; a later FAIL's failure epoch routed to node-03 too; the publisher refused each, so nothing could be
   * published again, not even a failure. A node the published epoch removed stays removed in every later plan.
   */
  @Test
  void shouldKeepANodeThePublishedEpochRemovedOutOfEveryPlanWhileTheClusterHoldsAfterRepeatedRejections() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition fail = state.onChange(change(Action.FAIL, "node-03", null), BYTES);
    EpochEvent failure = ready(fail);
    state = published(fail.next(), failure);
    for (int attempt = 1; attempt <= 4; attempt++) {
      Transition repaired = verifyAll(state);
      EpochEvent repairReady = ready(repaired);
      state = repaired.next().onRejected(repairReady.plan().target().epoch(), repairReady.plan().target().checksum(),
          "TASKS: for the test", BYTES).next();
    }
    assertThat(state.inFlight()).as("holding after four rejections").isNull();
    assertThat(state.active().member("node-03")).as("the complete ring").isNotNull();

    Transition join = state.onChange(change(Action.JOIN, "node-12", "az-1"), BYTES);

    EpochEvent planned = epochs(join).get(0);
    assertThat(planned.state()).isEqualTo(EpochEvent.State.PLANNED);
    assertThat(planned.plan().target().member("node-03")).isNull();
    assertThat(planned.previousChecksum()).isEqualTo(failure.plan().target().checksum());
    assertThat(join.next().inFlight().plan().tasks()).isNotEmpty()
        .allSatisfy(t -> assertThat(t.sources()).doesNotContain("node-03"))
        .allSatisfy(t -> assertThat(t.target()).isNotEqualTo("node-03"));
    Transition joined = verifyAll(join.next());
    assertThat(ready(joined).plan().target().member("node-03")).isNull();

    Transition secondFail = state.onChange(change(Action.FAIL, "node-07", null), BYTES);
    assertThat(epochs(secondFail)).isNotEmpty().allSatisfy(e -> {
      assertThat(e.plan().target().member("node-03")).as("%s of epoch %d", e.state(), e.plan().target().epoch())
          .isNull();
      assertThat(e.plan().target().member("node-07")).isNull();
    });
    assertThat(secondFail.next().inFlight().plan().tasks())
        .allSatisfy(t -> assertThat(t.sources()).doesNotContain("node-03", "node-07"));

    Transition rejoin = state.onChange(change(Action.JOIN, "node-03", "az-1"), BYTES);
    assertThat(rejoin.effects()).singleElement().isInstanceOf(Rejection.class);
    assertThat(((Rejection) rejoin.effects().get(0)).reason()).isEqualTo("JOIN of node node-03: published epoch 2 "
        + "removed it after it failed, and its repair is not published yet; join it again once a later epoch is "
        + "published");
  }

  /**
   * Found by the protocol simulation (seed 40004422): node-03 fails (failure epoch 2 published), JOIN node-03 again is
   * planned behind its READY repair (epoch 3), and the publisher rejects epoch 3. The re-plan took the JOIN's ring but
   * dropped node-03 from it, as a node the published epoch removed, and published an epoch with the JOIN as its cause
   * and without the node: the requester was never told. The JOIN is refused, as it is while the cluster holds.
   */
  @Test
  void shouldRefuseARejoinOfAFailedNodeThatARollbackCannotPlan() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition fail = state.onChange(change(Action.FAIL, "node-03", null), BYTES);
    state = published(fail.next(), ready(fail));
    Transition repaired = verifyAll(state);
    EpochEvent repairReady = ready(repaired);
    MembershipChange rejoin = change(Action.JOIN, "node-03", "az-1");
    state = repaired.next().onChange(rejoin, BYTES).next();
    assertThat(state.inFlight().cause()).isEqualTo(rejoin);

    Transition rolled = state.onRejected(repairReady.plan().target().epoch(), repairReady.plan().target().checksum(),
        "TASKS: for the test", BYTES);

    assertThat(rolled.effects()).filteredOn(Rejection.class::isInstance).singleElement().satisfies(r -> {
      assertThat(((Rejection) r).origin()).isEqualTo(rejoin);
      assertThat(((Rejection) r).reason()).endsWith("JOIN of node node-03: published epoch 2 removed it after it "
          + "failed, and its repair is not published yet; join it again once a later epoch is published");
    });
    assertThat(epochs(rolled)).filteredOn(e -> e.state() == EpochEvent.State.PLANNED)
        .allSatisfy(e -> assertThat(e.cause()).isNotEqualTo(rejoin));
  }

  /**
   * Found by the protocol simulation (seed 40001021): after two rejections in a row, node-02 fails, and node-00 fails
   * while that FAIL's plan is in flight; the re-plan's cause is node-00's FAIL, and node-02 is one of its dead nodes.
   * A third rejection holds the cluster and refuses the FAILs it withdraws, asking for them again: node-02's went out
   * under an empty request id (the orchestrator's own re-applied FAIL), so the manager that sent it never saw an
   * outcome and the dead node stayed a member. The re-plan carries the earlier FAIL request, and the refusal names it.
   */
  @Test
  void shouldRefuseEveryFailAHoldWithdrawsToItsOwnRequester() {
    // Five nodes in three zones, three replicas: az-3 has node-02 alone, so its failure cannot be published at once
    // (it would leave replicas without their third zone) and is planned with its repair.
    var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(8).replicas(3);
    for (int i = 0; i < 5; i++) {
      builder.addMember(String.format("node-%02d", i), "az-" + (i % 3 + 1));
    }
    RingSnapshot small = builder.build();
    ClusterAggregate state = ClusterAggregate.uninitialised().init(small, null).next();
    state = state.onPublished(1, small.checksum(), false, () -> small).next();
    for (int attempt = 1; attempt <= 2; attempt++) {
      Transition joined = verifyAll(state.inFlight() != null ? state
          : state.onChange(change(Action.JOIN, "node-12", "az-3"), BYTES).next());
      EpochEvent joinReady = ready(joined);
      state = joined.next().onRejected(joinReady.plan().target().epoch(), joinReady.plan().target().checksum(),
          "TASKS: for the test", BYTES).next();
    }
    MembershipChange first = change(Action.FAIL, "node-02", null);
    MembershipChange second = change(Action.FAIL, "node-00", null);
    state = state.onChange(first, BYTES).next();
    state = state.onChange(second, BYTES).next();
    assertThat(state.inFlight().cause()).isEqualTo(second);
    assertThat(state.inFlight().deadNodes()).containsExactly("node-02", "node-00");
    Transition both = verifyAll(state);
    EpochEvent ready = ready(both);

    Transition held = both.next().onRejected(ready.plan().target().epoch(), ready.plan().target().checksum(),
        "TASKS: for the test", BYTES);

    assertThat(held.effects()).filteredOn(Rejection.class::isInstance)
        .extracting(e -> ((Rejection) e).origin().requestId())
        .as("each withdrawn FAIL refused to its requester").contains(first.requestId(), second.requestId())
        .doesNotContain("");
  }

  /**
   * Found by the protocol simulation (seed 20261246): a FAIL while a DRAIN is in flight re-plans the epoch with the
   * DRAIN kept in the plan, and the FAIL as its cause. A rollback took its changes from the causes alone, so the DRAIN
   * was neither planned again nor refused: its requester never saw an outcome. The plan remembers the change it carries
   * out besides its cause, through READY, and a second rejection refuses it to its requester.
   */
  @Test
  void shouldRefuseAChangeAFailReplanCarriedWhenASecondRejectionWithdrawsIt() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    MembershipChange drain = change(Action.DRAIN, "node-04", null);
    state = state.onChange(drain, BYTES).next();
    Transition fail = state.onChange(change(Action.FAIL, "node-03", null), BYTES);
    EpochEvent failure = ready(fail);
    state = published(fail.next(), failure);
    assertThat(state.inFlight().cause().action()).isEqualTo(Action.FAIL);
    assertThat(state.inFlight().carried()).as("the DRAIN the re-plan keeps").containsExactly(drain);
    assertThat(state.inFlight().plan().target().member("node-04")).isNull();

    Transition repaired = verifyAll(state);
    EpochEvent repairReady = ready(repaired);
    assertThat(repaired.next().publication().unpublished()).anySatisfy(u ->
        assertThat(u.carried()).containsExactly(drain));
    Transition first = repaired.next().onRejected(repairReady.plan().target().epoch(),
        repairReady.plan().target().checksum(), "TASKS: for the test", BYTES);
    assertThat(first.next().publication().replanned()).as("planned again after the first").contains(drain);
    Transition again = verifyAll(first.next());
    EpochEvent secondReady = ready(again);
    Transition second = again.next().onRejected(secondReady.plan().target().epoch(),
        secondReady.plan().target().checksum(), "TASKS: for the test", BYTES);

    assertThat(second.effects()).filteredOn(Rejection.class::isInstance)
        .extracting(e -> ((Rejection) e).origin().requestId()).contains(drain.requestId());
  }

  /**
   * Found by RejectedEpochIT: a FAIL superseded a JOIN whose first transition stage was published, and the failure
   * epoch took the JOIN's number. The publisher reverted the stage, so it never publishes that number again, and
   * rejected the failure epoch under it. After one earlier rejection that counted as the second in a row, and the
   * JOIN was withdrawn. The revert now rolls the cluster back at once, plans the same membership and counts nothing.
   */
  @Test
  void shouldPlanEveryChangeAgainWhenAFailureTookTheNumberOfARevertedStage() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    MembershipChange join = change(Action.JOIN, "node-12", "az-1");
    Transition joined = verifyAll(state.onChange(join, BYTES).next());
    EpochEvent joinReady = ready(joined);
    state = joined.next().onRejected(2, joinReady.plan().target().checksum(), "TASKS: for the test", BYTES).next();
    RingSnapshot staged = state.inFlight().plan().target();
    assertThat(staged.epoch()).isEqualTo(3);
    assertThat(state.publication().rejections()).isEqualTo(1);
    Transition fail = state.onChange(change(Action.FAIL, "node-05", null), BYTES);
    EpochEvent failure = ready(fail);
    assertThat(failure.plan().target().epoch()).as("the failure epoch takes the staged plan's number").isEqualTo(3);

    Transition reverted = fail.next().onReverted(3, staged.checksum(), "its plan was superseded", BYTES);

    assertThat(reverted.effects()).noneMatch(Rejection.class::isInstance);
    EpochEvent failureAgain = ready(reverted);
    assertThat(failureAgain.cause().action()).isEqualTo(Action.FAIL);
    assertThat(failureAgain.plan().target().epoch()).isEqualTo(5);
    assertThat(failureAgain.previousChecksum()).isEqualTo(initial().checksum());
    assertThat(reverted.next().inFlight().plan().target().member("node-12")).as("the JOIN planned again").isNotNull();
    assertThat(reverted.next().inFlight().plan().target().member("node-05")).isNull();
    assertThat(reverted.next().publication().rejections()).as("a revert is no rejection").isEqualTo(1);
    assertThat(reverted.next().publication().replanned()).contains(join);
    // The publisher's rejection of the failure epoch under the reverted number, which follows, changes nothing.
    Transition late = reverted.next().onRejected(3, failure.plan().target().checksum(), "SEQUENCE: reverted", BYTES);
    assertThat(late.effects()).isEmpty();
    // Nor does the revert of a plan whose number nothing took again.
    assertThat(late.next().onReverted(2, joinReady.plan().target().checksum(), "rejected", BYTES).effects()).isEmpty();
  }

  @Test
  void shouldCountRejectionsUntilAnEpochWithoutFillingMarksIsPublished() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition join = verifyAll(state.onChange(change(Action.JOIN, "node-12", "az-1"), BYTES).next());
    EpochEvent joinReady = ready(join);
    Transition fail = join.next().onChange(change(Action.FAIL, "node-05", null), BYTES);
    assertThat(ready(fail).plan().target().epoch()).isEqualTo(3);

    Transition rolledBack = fail.next().onRejected(2, joinReady.plan().target().checksum(), "TASKS: for the test",
        BYTES);

    // The JOIN is planned again (epoch 5) and the FAIL that followed is published at once as failure epoch 5.
    EpochEvent failureAgain = ready(rolledBack);
    assertThat(failureAgain.cause().action()).isEqualTo(Action.FAIL);
    assertThat(failureAgain.plan().target().epoch()).isEqualTo(5);
    assertThat(failureAgain.previousChecksum()).isEqualTo(initial().checksum());
    ClusterAggregate afterFailure = published(rolledBack.next(), failureAgain);
    assertThat(afterFailure.publication().rejections()).as("a failure epoch ends no run of rejections")
        .isEqualTo(1);
    assertThat(afterFailure.publication().replanned()).extracting(MembershipChange::nodeId).containsExactly("node-12");
    Transition done = verifyAll(afterFailure);
    ClusterAggregate repaired = published(done.next(), ready(done));
    assertThat(repaired.publication().rejections()).isZero();
    assertThat(repaired.publication().replanned()).isEmpty();
  }

  @Test
  void shouldCleanUpWhatClientsWroteToAFillingReplicaThatTheRepairEpochNoLongerPlacesThere() {
    // A JOIN in flight, then a FAIL: the failure epoch makes survivors filling replicas of the dead node's ranges, and
    // clients of it write there; the repair epoch (the JOIN and the repair) gives some of those ranges to the joiner,
    // which joins the dead node's zone (one replica per zone: only a node of that zone displaces its replacement).
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-3"), BYTES).next();
    Transition fail = joining.onChange(change(Action.FAIL, "node-05", null), BYTES);
    RingSnapshot failed = ready(fail).plan().target();
    Transition repaired = verifyAll(fail.next());
    EpochEvent repairReady = ready(repaired);
    RingSnapshot ring = repairReady.plan().target();

    List<long[]> displaced = new java.util.ArrayList<>();
    List<String> displacedNodes = new java.util.ArrayList<>();
    for (long p : positions(initial(), failed, ring)) {
      for (String node : failed.replicasAt(p).ids()) {
        if (!initial().replicasAt(p).contains(node) && !ring.replicasAt(p).contains(node)) {
          displaced.add(new long[] {p});
          displacedNodes.add(node);
        }
      }
    }
    assertThat(displaced).as("the scenario has filling replicas the repair epoch leaves out").isNotEmpty();
    List<PlannedTask> cleanups = cleanups(repaired);
    for (int i = 0; i < displaced.size(); i++) {
      long p = displaced.get(i)[0];
      String node = displacedNodes.get(i);
      assertThat(cleanups).as("a cleanup of %s at %s", node, Long.toUnsignedString(p))
          .anyMatch(c -> c.target().equals(node) && RingRange.of(c.rangeStart(), c.rangeEnd()).contains(p));
    }
    assertDeletesOnlyWhatTheRingLeavesOut(cleanups, ring, initial(), failed);
    assertThat(repairReady.plan().cleanupTasks()).as("the READY record's plan names every cleanup")
        .containsAll(cleanups);
  }

  @Test
  void shouldCleanUpWhatTheTasksOfARolledBackEpochCopiedToANodeTheRingLeavesOut() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition join = verifyAll(state.onChange(change(Action.JOIN, "node-12", "az-1"), BYTES).next());
    EpochEvent joinReady = ready(join);
    List<PlannedTask> copied = joinReady.plan().tasks();
    // The first rejection plans the JOIN again (epoch 3); the second withdraws it: what both copied to node-12 stays.
    Transition again = verifyAll(join.next().onRejected(2, joinReady.plan().target().checksum(), "TASKS: test", BYTES)
        .next());
    EpochEvent againReady = ready(again);
    Transition withdrawn = again.next().onRejected(againReady.plan().target().epoch(),
        againReady.plan().target().checksum(), "TASKS: test", BYTES);
    assertThat(withdrawn.effects()).filteredOn(Rejection.class::isInstance).isNotEmpty();
    assertThat(withdrawn.next().inFlight()).as("nothing to plan").isNull();

    Transition drain = verifyAll(withdrawn.next().onChange(change(Action.DRAIN, "node-00", null), BYTES).next());
    EpochEvent drainReady = ready(drain);
    RingSnapshot ring = drainReady.plan().target();

    assertThat(ring.member("node-12")).isNull();
    List<PlannedTask> cleanups = cleanups(drain);
    for (PlannedTask copy : copied) {
      RingRange range = RingRange.of(copy.rangeStart(), copy.rangeEnd());
      for (long p : positions(initial(), joinReady.plan().target(), ring)) {
        if (range.contains(p)) {
          assertThat(cleanups).as("a cleanup of node-12 at %s", Long.toUnsignedString(p))
              .anyMatch(c -> c.target().equals("node-12") && RingRange.of(c.rangeStart(), c.rangeEnd()).contains(p));
        }
      }
    }
    assertDeletesOnlyWhatTheRingLeavesOut(cleanups, ring, initial(), joinReady.plan().target());
    assertThat(drain.next().strays()).as("emitted once").isEmpty();
  }

  @Test
  void shouldCleanUpStraysAgainWhenTheEpochWhoseReadyEmittedTheirCleanupsIsRolledBack() {
    ClusterAggregate state = ClusterAggregate.uninitialised().init(initial(), null).next();
    state = state.onPublished(1, initial().checksum(), false, ClusterAggregateTest::initial).next();
    Transition join = verifyAll(state.onChange(change(Action.JOIN, "node-12", "az-1"), BYTES).next());
    EpochEvent joinReady = ready(join);
    Transition again = verifyAll(join.next().onRejected(2, joinReady.plan().target().checksum(), "TASKS: test", BYTES)
        .next());
    EpochEvent againReady = ready(again);
    ClusterAggregate withdrawn = again.next().onRejected(againReady.plan().target().epoch(),
        againReady.plan().target().checksum(), "TASKS: test", BYTES).next();
    Transition drain = verifyAll(withdrawn.onChange(change(Action.DRAIN, "node-00", null), BYTES).next());
    EpochEvent drainReady = ready(drain);
    assertThat(cleanups(drain)).anyMatch(c -> c.target().equals("node-12"));

    // The drain's epoch, whose READY emitted node-12's cleanups, is rejected too: they are cancelled with it, and the
    // cluster holds. The next change's READY cleans node-12 up again.
    Transition held = drain.next().onRejected(drainReady.plan().target().epoch(),
        drainReady.plan().target().checksum(), "TASKS: test", BYTES);
    assertThat(held.effects()).filteredOn(TaskCancelled.class::isInstance).extracting(e -> ((TaskCancelled) e).taskId())
        .containsAll(cleanups(drain).stream().map(PlannedTask::taskId).toList());
    assertThat(held.next().strays()).anyMatch(c -> c.node().equals("node-12"));
    Transition next = verifyAll(held.next().onChange(change(Action.DRAIN, "node-01", null), BYTES).next());
    RingSnapshot ring = ready(next).plan().target();

    List<PlannedTask> cleanups = cleanups(next);
    for (PlannedTask copy : joinReady.plan().tasks()) {
      RingRange range = RingRange.of(copy.rangeStart(), copy.rangeEnd());
      for (long p : positions(initial(), joinReady.plan().target(), ring)) {
        if (range.contains(p)) {
          assertThat(cleanups).as("a cleanup of node-12 at %s", Long.toUnsignedString(p))
              .anyMatch(c -> c.target().equals("node-12") && RingRange.of(c.rangeStart(), c.rangeEnd()).contains(p));
        }
      }
    }
    assertDeletesOnlyWhatTheRingLeavesOut(cleanups, ring, initial(), drainReady.plan().target());
  }

  /** The CLEANUP tasks a transition emits. */
  static List<PlannedTask> cleanups(Transition t) {
    return tasks(t).stream().map(TaskEvent::task).filter(c -> c.kind() == PlannedTask.Kind.CLEANUP).toList();
  }

  /** Every token of the rings: each ends a range on which every ring places the same replicas throughout. */
  static List<Long> positions(RingSnapshot... rings) {
    java.util.TreeSet<Long> tokens = new java.util.TreeSet<>(Long::compareUnsigned);
    for (RingSnapshot r : rings) {
      for (int i = 0; i < r.tokenCount(); i++) {
        tokens.add(r.token(i));
      }
    }
    return List.copyOf(tokens);
  }

  /** No cleanup deletes a range its target replicates in {@code ring}. */
  static void assertDeletesOnlyWhatTheRingLeavesOut(List<PlannedTask> cleanups, RingSnapshot ring,
      RingSnapshot... others) {
    List<RingSnapshot> all = new java.util.ArrayList<>(List.of(others));
    all.add(ring);
    for (PlannedTask c : cleanups) {
      for (long p : positions(all.toArray(RingSnapshot[]::new))) {
        if (RingRange.of(c.rangeStart(), c.rangeEnd()).contains(p)) {
          assertThat(ring.replicasAt(p).contains(c.target())).as("cleanup %s deletes at %s", c.taskId(),
              Long.toUnsignedString(p)).isFalse();
        }
      }
    }
  }

  static EpochEvent ready(Transition t) {
    return epochs(t).stream().filter(e -> e.state() == EpochEvent.State.READY).findFirst().orElseThrow();
  }
}
