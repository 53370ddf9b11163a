package io.ringshift.cli.internal.control;

import static io.ringshift.cli.internal.control.ControlRecords.T0;
import static io.ringshift.cli.internal.control.ControlRecords.cause;
import static io.ringshift.cli.internal.control.ControlRecords.epoch;
import static io.ringshift.cli.internal.control.ControlRecords.status;
import static io.ringshift.cli.internal.control.ControlRecords.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.cli.BadInputException;
import io.ringshift.orchestrator.EpochPlanner;
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
class PlanCommandTest {
  private static final String C = "c1";
  private static final RingSnapshot E1 = ControlRecords.ring(C, 1, 6);
  private static final EpochRecord READY = epoch(E1, EpochState.READY, 0, cause(C, MembershipAction.INIT, "", "i"),
      0, T0);

  /** Epoch 2 = epoch 1 + node-007 in az-1, planned with the real planner. */
  private static final List<Member> JOINED = plus(E1.members(), Member.of("node-007", "az-1"));
  private static final EpochPlanner.Plan JOIN_PLAN = EpochPlanner.plan(E1, JOINED, 2, 0, Set.of(), 0);
  private static final EpochRecord JOIN_PLANNED = epoch(JOIN_PLAN.target(), EpochState.PLANNED, 0,
      cause(C, MembershipAction.JOIN, "node-007", "j"), JOIN_PLAN.tasks().size(), T0 + 1);

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
    var drain = new ChangeSpec(MembershipAction.DRAIN, "node-002", null, null);

    PlanReport r = PlanCommand.plan(drain, view(List.of(READY), List.of(), Set.of()), 0);

    assertThat(r.basis()).isEqualTo(PlanReport.Basis.ACTIVE);
    assertThat(r.plan().target().epoch()).isEqualTo(2);
    assertThat(r.plan().planVersion()).isZero();
    assertThat(r.plan().tasks()).isNotEmpty().allSatisfy(t -> assertThat(t.kind()).isEqualTo(PlannedTask.Kind.COPY));
  }

  @Test
  void shouldPlanAQueuedChangeFromTheTargetOfTheEpochInFlight() {
    var drain = new ChangeSpec(MembershipAction.DRAIN, "node-007", null, null);

    PlanReport r = PlanCommand.plan(drain, view(List.of(READY, JOIN_PLANNED), JOIN_PLAN.tasks(), Set.of()), 0);

    assertThat(r.basis()).isEqualTo(PlanReport.Basis.QUEUED);
    assertThat(r.base().epoch()).isEqualTo(2);
    assertThat(r.plan().target().epoch()).isEqualTo(3);
    assertThat(r.plan().target().checksumHex()).as("draining the joiner again is epoch 1's ring")
        .isEqualTo(E1.toBuilder().epoch(3).build().checksumHex());
  }

  @Test
  void shouldReplanTheEpochInFlightForAFailAndKeepWhatIsVerified() {
    var expected = EpochPlanner.plan(E1, JOINED.stream().filter(m -> !m.id().equals("node-003")).toList(), 2, 1,
        Set.of("node-003"), 0);
    // A task both plans have (same epoch, kind, range and target, so the same id), reported VERIFIED.
    String verified = JOIN_PLAN.tasks().stream().map(PlannedTask::taskId)
        .filter(id -> expected.tasks().stream().anyMatch(t -> t.taskId().equals(id))).findFirst().orElseThrow();
    var fail = new ChangeSpec(MembershipAction.FAIL, "node-003", null, null);

    PlanReport r = PlanCommand.plan(fail, view(List.of(READY, JOIN_PLANNED), JOIN_PLAN.tasks(), Set.of(verified)), 0);

    assertThat(r.basis()).isEqualTo(PlanReport.Basis.REPLAN);
    assertThat(r.base().epoch()).as("a re-plan starts from the active ring").isEqualTo(1);
    assertThat(r.plan().planVersion()).isEqualTo(1);
    assertThat(r.plan().tasks()).isEqualTo(expected.tasks());
    assertThat(r.plan().tasks()).anySatisfy(t -> assertThat(t.kind()).isEqualTo(PlannedTask.Kind.REPAIR));
    assertThat(r.alreadyVerified()).isEqualTo(1);
  }

  @Test
  void shouldRememberEveryNodeThatFailedDuringTheEpochInFlight() {
    List<Member> without3 = JOINED.stream().filter(m -> !m.id().equals("node-003")).toList();
    var replan = EpochPlanner.plan(E1, without3, 2, 1, Set.of("node-003"), 0);
    EpochRecord superseded = epoch(JOIN_PLAN.target(), EpochState.SUPERSEDED, 0, JOIN_PLANNED.getCause(), 0, T0 + 2);
    EpochRecord replanned = epoch(replan.target(), EpochState.PLANNED, 1,
        cause(C, MembershipAction.FAIL, "node-003", "f"), replan.tasks().size(), T0 + 2);
    var history = List.of(READY, JOIN_PLANNED, superseded, replanned);

    assertThat(PlanCommand.deadNodes(history, 2)).containsExactly("node-003");
    var again = new ChangeSpec(MembershipAction.FAIL, "node-003", null, null);
    assertThatThrownBy(() -> PlanCommand.plan(again, view(history, replan.tasks(), Set.of()), 0))
        .isInstanceOf(BadInputException.class).hasMessage("FAIL of node node-003: it already failed");

    PlanReport r = PlanCommand.plan(new ChangeSpec(MembershipAction.FAIL, "node-005", null, null),
        view(history, replan.tasks(), Set.of()), 0);
    assertThat(r.plan().planVersion()).isEqualTo(2);
    assertThat(r.plan().tasks()).allSatisfy(t -> assertThat(t.sources()).doesNotContain("node-003", "node-005"));
  }
}
