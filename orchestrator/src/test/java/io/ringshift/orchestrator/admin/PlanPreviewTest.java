package io.ringshift.orchestrator.admin;

import static io.ringshift.orchestrator.admin.ControlRecords.T0;
import static io.ringshift.orchestrator.admin.ControlRecords.cause;
import static io.ringshift.orchestrator.admin.ControlRecords.epoch;
import static io.ringshift.orchestrator.admin.ControlRecords.status;
import static io.ringshift.orchestrator.admin.ControlRecords.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.TaskState;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Where {@code plan} starts a change from, as the orchestrator's state machine would. */
class PlanPreviewTest {
  private static final String C = "c1";
  private static final RingSnapshot E1 = ControlRecords.ring(C, 1, 6);
  private static final EpochRecord READY = epoch(E1, EpochState.READY, 0, cause(C, MembershipAction.INIT, "", "i"),
      0, T0);

  /** Epoch 2 = epoch 1 + node-007 in az-1, planned with the real planner. */
  private static final List<Member> JOINED = plus(E1.members(), Member.of("node-007", "az-1"));
  private static final EpochPlanner.Plan JOIN_PLAN = EpochPlanner.plan(E1, JOINED, 2, 0, Set.of(), 0);
  private static final EpochRecord JOIN_PLANNED = epoch(JOIN_PLAN.target(), EpochState.PLANNED, 0,
      cause(C, MembershipAction.JOIN, "node-007", "j"), JOIN_PLAN.tasks().size(), T0 + 1);

  private static MembershipChange change(MembershipChange.Action action, String node) {
    return new MembershipChange(action, node, null, null, "plan");
  }

  private static List<Member> plus(List<Member> members, Member m) {
    List<Member> all = new ArrayList<>(members);
    all.add(m);
    return all;
  }

  private static ClusterView view(List<EpochRecord> epochs, List<PlannedTask> tasks, Set<String> verified) {
    var records = tasks.stream().map(t -> task(C, 2, t.rangeStart(), t.rangeEnd(), t.target(), t.sources()))
        .toList();
    var statuses = records.stream().filter(r -> verified.contains(r.getTaskId()))
        .map(r -> status(r, TaskState.VERIFIED)).toList();
    return ClusterView.of(C, epochs, records, statuses, List.of(), 0);
  }

  @Test
  void shouldPlanFromTheActiveEpochWhenNothingIsInFlight() {
    var drain = change(MembershipChange.Action.DRAIN, "node-002");

    PlanPreview r = PlanPreview.of(drain, view(List.of(READY), List.of(), Set.of()), 0);

    assertThat(r.basis()).isEqualTo(PlanPreview.Basis.ACTIVE);
    assertThat(r.plan().target().epoch()).isEqualTo(2);
    assertThat(r.plan().planVersion()).isZero();
    assertThat(r.plan().tasks()).isNotEmpty().allSatisfy(t -> assertThat(t.kind()).isEqualTo(PlannedTask.Kind.COPY));
  }

  @Test
  void shouldPlanAQueuedChangeFromTheTargetOfTheEpochInFlight() {
    var drain = change(MembershipChange.Action.DRAIN, "node-007");

    PlanPreview r = PlanPreview.of(drain, view(List.of(READY, JOIN_PLANNED), JOIN_PLAN.tasks(), Set.of()), 0);

    assertThat(r.basis()).isEqualTo(PlanPreview.Basis.QUEUED);
    assertThat(r.base().epoch()).isEqualTo(2);
    assertThat(r.plan().target().epoch()).isEqualTo(3);
    assertThat(r.plan().target().checksumHex()).as("draining the joiner again is epoch 1's ring")
        .isEqualTo(E1.toBuilder().epoch(3).build().checksumHex());
  }

  @Test
  void shouldPlanTheRestAfterAFailureEpochWhenANodeOfTheActiveRingFails() {
    var fail = change(MembershipChange.Action.FAIL, "node-003");

    PlanPreview r = PlanPreview.of(fail, view(List.of(READY, JOIN_PLANNED), JOIN_PLAN.tasks(), Set.of()), 0);

    var expected = EpochPlanner.plan(E1, JOINED.stream().filter(m -> !m.id().equals("node-003")).toList(), 3, 0,
        Set.of("node-003"), 0);
    assertThat(r.basis()).isEqualTo(PlanPreview.Basis.FAILURE);
    assertThat(r.base().epoch()).as("the rest is planned from the active ring").isEqualTo(1);
    assertThat(r.plan().target().epoch()).as("failure epoch 2 is published first").isEqualTo(3);
    assertThat(r.plan().planVersion()).isZero();
    assertThat(r.plan().tasks()).isEqualTo(expected.tasks());
    assertThat(r.plan().tasks()).anySatisfy(t -> assertThat(t.kind()).isEqualTo(PlannedTask.Kind.REPAIR));
  }

  @Test
  void shouldReplanUnderTheSameEpochWhenOnlyTheJoiningNodeFails() {
    var fail = change(MembershipChange.Action.FAIL, "node-007");

    PlanPreview r = PlanPreview.of(fail, view(List.of(READY, JOIN_PLANNED), JOIN_PLAN.tasks(), Set.of()), 0);

    assertThat(r.basis()).isEqualTo(PlanPreview.Basis.REPLAN);
    assertThat(r.plan().target().epoch()).isEqualTo(2);
    assertThat(r.plan().planVersion()).isEqualTo(1);
    assertThat(r.plan().tasks()).isEmpty();
  }

  @Test
  void shouldRememberEveryNodeThatFailedSinceTheActiveRing() {
    List<Member> without3 = JOINED.stream().filter(m -> !m.id().equals("node-003")).toList();
    RingSnapshot failed = E1.toBuilder().epoch(2)
        .members(E1.members().stream().filter(m -> !m.id().equals("node-003")).toList()).build();
    var rest = EpochPlanner.plan(E1, without3, 3, 0, Set.of("node-003"), 0);
    var failCause = cause(C, MembershipAction.FAIL, "node-003", "f");
    EpochRecord superseded = epoch(JOIN_PLAN.target(), EpochState.SUPERSEDED, 0, JOIN_PLANNED.getCause(), 0, T0 + 2);
    EpochRecord failurePlanned = epoch(failed, EpochState.PLANNED, 1, failCause, 0, T0 + 2);
    EpochRecord failureReady = epoch(failed, EpochState.READY, 1, failCause, 0, T0 + 2);
    EpochRecord restPlanned = epoch(rest.target(), EpochState.PLANNED, 0, failCause, rest.tasks().size(), T0 + 2);
    var history = List.of(READY, JOIN_PLANNED, superseded, failurePlanned, failureReady, restPlanned);
    ClusterView view = view(history, List.of(), Set.of());

    assertThat(view.active().getEpoch()).as("clients route by the failure epoch").isEqualTo(2);
    assertThat(view.planningBase().getEpoch()).as("the orchestrator plans from the complete ring").isEqualTo(1);
    assertThat(view.inFlight().getEpoch()).isEqualTo(3);
    assertThat(PlanPreview.deadNodes(history, 1)).containsExactly("node-003");
    var again = change(MembershipChange.Action.FAIL, "node-003");
    assertThatThrownBy(() -> PlanPreview.of(again, view, 0))
        .isInstanceOf(AdminException.class).hasMessage("FAIL of node node-003: it already failed");

    PlanPreview r = PlanPreview.of(change(MembershipChange.Action.FAIL, "node-005"), view, 0);
    assertThat(r.basis()).isEqualTo(PlanPreview.Basis.FAILURE);
    assertThat(r.plan().target().epoch()).isEqualTo(4);
    assertThat(r.plan().tasks()).allSatisfy(t -> assertThat(t.sources()).doesNotContain("node-003", "node-005"));
  }

  @Test
  void shouldPlanAFailureAsARepairPublishedAfterwardsWhenFewerZonesThanReplicasRemain() {
    RingSnapshot twoZones = RingSnapshot.builder().clusterId(C).epoch(1).vnodes(16).replicas(3)
        .addMember("node-001", "az-1").addMember("node-002", "az-2").addMember("node-003", "az-1")
        .addMember("node-004", "az-2").addMember("node-005", "az-3").build();
    EpochRecord ready = epoch(twoZones, EpochState.READY, 0, cause(C, MembershipAction.INIT, "", "i"), 0, T0);

    PlanPreview r = PlanPreview.of(change(MembershipChange.Action.FAIL, "node-005"),
        ClusterView.of(C, List.of(ready), List.of(), List.of(), List.of(), 0), 0);

    assertThat(r.basis()).as("without az-3 a failure epoch could be read from stale replicas")
        .isEqualTo(PlanPreview.Basis.ACTIVE);
    assertThat(r.plan().target().epoch()).isEqualTo(2);
    assertThat(r.plan().tasks()).isNotEmpty().allSatisfy(t -> assertThat(t.kind()).isEqualTo(PlannedTask.Kind.REPAIR));
  }
}
