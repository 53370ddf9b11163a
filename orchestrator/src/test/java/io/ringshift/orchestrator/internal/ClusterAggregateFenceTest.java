package io.ringshift.orchestrator.internal;

import static io.ringshift.orchestrator.internal.ClusterAggregateTest.change;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.epochs;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.initialised;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.orchestrator.MembershipChange.Action;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Progress;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Transition;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fence step and the CLEANUP tasks of {@link ClusterAggregate}, as pure transitions. */
class ClusterAggregateFenceTest {
  private static final long BYTES = 1L << 30;

  private static ClusterAggregate joining() {
    return initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
  }

  private static List<PlannedTask> planned(ClusterAggregate state) {
    return state.inFlight().plan().tasks();
  }

  private static long epoch(ClusterAggregate state) {
    return state.inFlight().plan().target().epoch();
  }

  /** Reports each task with the given progress in turn; the combined effects and the last state. */
  private static Transition report(ClusterAggregate state, List<PlannedTask> tasks, Progress progress) {
    ClusterAggregate current = state;
    long epoch = epoch(state);
    List<ClusterAggregate.Effect> effects = new ArrayList<>();
    for (PlannedTask task : tasks) {
      Transition t = current.onStatus(task.taskId(), epoch, progress, BYTES);
      effects.addAll(t.effects());
      current = t.next();
    }
    return new Transition(current, effects);
  }

  private static List<PlannedTask> allButLast(List<PlannedTask> tasks) {
    return tasks.subList(0, tasks.size() - 1);
  }

  private static List<PlannedTask> last(List<PlannedTask> tasks) {
    return tasks.subList(tasks.size() - 1, tasks.size());
  }

  @Test
  void shouldRequestTheFenceOnceWhenTheLastTaskCatchesUp() {
    ClusterAggregate state = joining();
    List<PlannedTask> tasks = planned(state);

    Transition before = report(state, allButLast(tasks), Progress.CAUGHT_UP);
    assertThat(before.effects()).as("no fence before the last task catches up").isEmpty();
    assertThat(before.next().inFlight().fenceRequested()).isFalse();

    Transition fence = report(before.next(), last(tasks), Progress.CAUGHT_UP);

    assertThat(epochs(fence)).isEmpty();
    assertThat(tasks(fence)).allSatisfy(t -> {
      assertThat(t.fenceRequested()).isTrue();
      assertThat(t.epoch()).isEqualTo(2);
      assertThat(t.planVersion()).isZero();
    }).extracting(TaskEvent::task).containsExactlyElementsOf(tasks);
    assertThat(fence.next().inFlight().fenceRequested()).isTrue();
    assertThat(fence.next().inFlight().caughtUp()).hasSize(tasks.size());

    // Exactly once: repeated reports (CAUGHT_UP again, FENCED) and a task falling behind ask for nothing more.
    Transition repeated = report(fence.next(), tasks, Progress.CAUGHT_UP);
    assertThat(repeated.effects()).isEmpty();
    assertThat(repeated.next()).isEqualTo(fence.next());
    Transition behindThenBack = report(report(fence.next(), tasks, Progress.BEHIND).next(), tasks,
        Progress.CAUGHT_UP);
    assertThat(behindThenBack.effects()).isEmpty();
    assertThat(behindThenBack.next()).isEqualTo(fence.next());
  }

  @Test
  void shouldAskOnlyForTheTasksNotYetVerifiedAndCountFencedAsCaughtUp() {
    ClusterAggregate state = joining();
    List<PlannedTask> tasks = planned(state);
    int third = tasks.size() / 3;
    ClusterAggregate progressed = report(state, tasks.subList(0, third), Progress.VERIFIED).next();
    progressed = report(progressed, tasks.subList(third, 2 * third), Progress.CAUGHT_UP).next();
    progressed = report(progressed, allButLast(tasks.subList(2 * third, tasks.size())), Progress.CAUGHT_UP).next();

    Transition fence = report(progressed, last(tasks), Progress.CAUGHT_UP);

    assertThat(tasks(fence)).extracting(TaskEvent::task).containsExactlyElementsOf(tasks.subList(third, tasks.size()));
    assertThat(tasks(fence)).allMatch(TaskEvent::fenceRequested);
  }

  @Test
  void shouldRequestTheFenceWhenTheLastUnfinishedTaskIsVerifiedWhileTheOthersAreCaughtUp() {
    ClusterAggregate state = joining();
    List<PlannedTask> tasks = planned(state);
    ClusterAggregate progressed = report(state, allButLast(tasks), Progress.CAUGHT_UP).next();

    Transition t = report(progressed, last(tasks), Progress.VERIFIED);

    assertThat(tasks(t)).extracting(TaskEvent::task).containsExactlyElementsOf(allButLast(tasks));
    assertThat(t.next().inFlight().fenceRequested()).isTrue();
  }

  @Test
  void shouldBeReadyAndEmitTheCleanupTasksWhenEveryTaskIsVerifiedAfterTheFence() {
    ClusterAggregate state = joining();
    List<PlannedTask> tasks = planned(state);
    Plan plan = state.inFlight().plan();
    ClusterAggregate fenced = report(state, tasks, Progress.CAUGHT_UP).next();

    Transition notYet = report(fenced, allButLast(tasks), Progress.VERIFIED);
    assertThat(notYet.effects()).isEmpty();
    Transition ready = report(notYet.next(), last(tasks), Progress.VERIFIED);

    assertThat(epochs(ready)).singleElement().satisfies(e -> {
      assertThat(e.state()).isEqualTo(EpochEvent.State.READY);
      assertThat(e.plan().target().epoch()).isEqualTo(2);
    });
    assertThat(plan.cleanupTasks()).isNotEmpty();
    assertThat(tasks(ready)).allSatisfy(t -> {
      assertThat(t.epoch()).isEqualTo(2);
      assertThat(t.fenceRequested()).isFalse();
      assertThat(t.task().kind()).isEqualTo(PlannedTask.Kind.CLEANUP);
    }).extracting(TaskEvent::task).containsExactlyElementsOf(plan.cleanupTasks());
    assertThat(ready.effects().get(0)).as("READY comes first").isInstanceOf(EpochEvent.class);
    assertThat(ready.next().inFlight()).isNull();
    assertThat(ready.next().active().epoch()).isEqualTo(2);
  }

  @Test
  void shouldForgetACaughtUpTaskThatFallsBehindBeforeTheFenceIsRequested() {
    ClusterAggregate state = joining();
    List<PlannedTask> tasks = planned(state);
    PlannedTask restarted = tasks.get(0);
    ClusterAggregate progressed = report(state, allButLast(tasks), Progress.CAUGHT_UP).next();
    // The worker restarted the copy of one task from another source.
    progressed = progressed.onStatus(restarted.taskId(), 2, Progress.BEHIND, BYTES).next();
    assertThat(progressed.inFlight().caughtUp()).doesNotContain(restarted.taskId());

    Transition lastCaughtUp = report(progressed, last(tasks), Progress.CAUGHT_UP);
    assertThat(lastCaughtUp.effects()).as("one task is behind again").isEmpty();

    Transition fence = lastCaughtUp.next().onStatus(restarted.taskId(), 2, Progress.CAUGHT_UP, BYTES);
    assertThat(tasks(fence)).hasSize(tasks.size()).allMatch(TaskEvent::fenceRequested);
  }

  @Test
  void shouldKeepTheFenceRequestWhenATaskFallsBehindAfterIt() {
    ClusterAggregate fenced = report(joining(), planned(joining()), Progress.CAUGHT_UP).next();
    PlannedTask task = planned(fenced).get(0);

    Transition behind = fenced.onStatus(task.taskId(), 2, Progress.BEHIND, BYTES);

    assertThat(behind.effects()).isEmpty();
    assertThat(behind.next()).isEqualTo(fenced);
  }

  @Test
  void shouldChangeNothingForBlockedFailedOrUnknownStates() {
    ClusterAggregate state = report(joining(), allButLast(planned(joining())), Progress.CAUGHT_UP).next();
    PlannedTask lastTask = planned(state).get(planned(state).size() - 1);
    PlannedTask caughtUpTask = planned(state).get(0);

    // A digest mismatch (BLOCKED with both digests) or a failure: the epoch waits for an operator.
    assertThat(state.onStatus(lastTask.taskId(), 2, Progress.STUCK, BYTES).next()).isEqualTo(state);
    assertThat(state.onStatus(caughtUpTask.taskId(), 2, Progress.STUCK, BYTES).next()).isEqualTo(state);
    assertThat(state.onStatus(lastTask.taskId(), 2, Progress.STUCK, BYTES).effects()).isEmpty();
  }

  @Test
  void shouldIgnoreStatusesOfOtherEpochsUnknownTasksCleanupTasksAndVerifiedOnes() {
    ClusterAggregate state = joining();
    List<PlannedTask> tasks = planned(state);
    ClusterAggregate progressed = report(state, tasks.subList(0, 1), Progress.VERIFIED).next();
    PlannedTask cleanup = state.inFlight().plan().cleanupTasks().get(0);

    for (Progress p : Progress.values()) {
      assertThat(progressed.onStatus(tasks.get(1).taskId(), 7, p, BYTES).next()).isEqualTo(progressed);
      assertThat(progressed.onStatus("c1/2/copy/0000000000000001-0000000000000002/node-99", 2, p, BYTES).next())
          .isEqualTo(progressed);
      assertThat(progressed.onStatus(cleanup.taskId(), 2, p, BYTES).next()).isEqualTo(progressed);
      assertThat(progressed.onStatus(tasks.get(0).taskId(), 2, p, BYTES).next()).as("VERIFIED is final")
          .isEqualTo(progressed);
    }
  }

  @Test
  void shouldAskForTheFenceAgainForThePlanAfterAFailureEpochAndCleanUpOnlyAfterIt() {
    ClusterAggregate state = joining();
    Plan first = state.inFlight().plan();
    // A node the first plan would clean up fails after the fence was requested.
    String failed = first.cleanupTasks().get(0).target();
    ClusterAggregate fenced = report(state, first.tasks(), Progress.CAUGHT_UP).next();
    PlannedTask survivor = first.tasks().stream().filter(t -> !t.sources().contains(failed)).findFirst()
        .orElseThrow();
    fenced = fenced.onStatus(survivor.taskId(), 2, Progress.VERIFIED, BYTES).next();
    assertThat(fenced.inFlight().fenceRequested()).isTrue();

    Transition replan = fenced.onChange(change(Action.FAIL, failed, null), BYTES);

    assertThat(epochs(replan)).extracting(e -> e.state() + "@" + e.plan().target().epoch() + "/p"
        + e.plan().planVersion()).containsExactly("SUPERSEDED@2/p0", "PLANNED@2/p1", "READY@2/p1", "PLANNED@3/p0");
    assertThat(tasks(replan)).isNotEmpty().noneMatch(TaskEvent::fenceRequested)
        .noneMatch(t -> t.task().kind() == PlannedTask.Kind.CLEANUP);
    ClusterAggregate second = replan.next();
    assertThat(second.inFlight().fenceRequested()).isFalse();
    assertThat(second.inFlight().caughtUp()).isEmpty();
    assertThat(second.inFlight().verified()).as("task ids name the epoch: nothing carries over").isEmpty();

    // The kept tasks' workers report CAUGHT_UP again on the re-emitted records; the fence is asked again.
    List<PlannedTask> unverified = planned(second).stream()
        .filter(t -> !second.inFlight().verified().contains(t.taskId())).toList();
    Transition beforeLast = report(second, allButLast(unverified), Progress.CAUGHT_UP);
    assertThat(beforeLast.effects()).isEmpty();
    Transition fenceAgain = report(beforeLast.next(), last(unverified), Progress.CAUGHT_UP);
    assertThat(tasks(fenceAgain)).allSatisfy(t -> assertThat(t.epoch()).isEqualTo(3))
        .allMatch(TaskEvent::fenceRequested).extracting(TaskEvent::task).containsExactlyElementsOf(unverified);

    Transition ready = report(fenceAgain.next(), unverified, Progress.VERIFIED);
    assertThat(epochs(ready)).extracting(e -> e.state() + "@" + e.plan().target().epoch()).containsExactly("READY@3");
    // The plan's cleanups, then those of what clients wrote to the failure epoch's filling replicas that the joiner
    // displaces in epoch 3 (ClusterAggregateTest covers them).
    List<PlannedTask> strays = io.ringshift.orchestrator.EpochPlanner.strayCleanups(second.active(),
        second.lastReadyRing(), second.inFlight().plan().target(), second.strays(), java.util.Set.of(failed), BYTES);
    assertThat(strays).isNotEmpty();
    List<PlannedTask> cleanups = new java.util.ArrayList<>(second.inFlight().plan().cleanupTasks());
    cleanups.addAll(strays);
    assertThat(tasks(ready)).extracting(TaskEvent::task)
        .containsExactlyElementsOf(cleanups)
        .noneMatch(t -> t.target().equals(failed));
  }
}
