package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.protocol.TrustedKeys;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The worker's view of the control plane stays flat: over 1,000 epochs (each with copies and cleanups, verified,
 * published), {@link ControlState#sweep} forgets every epoch that is done with, so the state holds the same few
 * entries at epoch 10 and at epoch 1,000, and it never forgets an epoch whose tasks are not all final, nor the
 * latest published one.
 */
class ControlStateTest {
  private final ControlState state = new ControlState(TrustedKeys.of(Harness.PUBLISHER.publicKey()),
      Clock.systemUTC());

  @Test
  void shouldHoldAsMuchAtEpochAThousandAsAtEpochTenWhenEveryDoneEpochIsSwept() {
    List<Integer> sizes = new ArrayList<>();
    int tombstoned = 0;
    for (long epoch = 1; epoch <= 1000; epoch++) {
      List<RangeCopyTask> tasks = epochTasks(epoch);
      tasks.forEach(t -> state.onTask(t.getTaskId(), t));
      tasks.forEach(t -> state.onStatus(t.getTaskId(), status(t, TaskState.VERIFIED)));
      // Every other epoch moves by transition stages: its records are forgotten with it.
      if (epoch % 2 == 0) {
        state.onEpoch(Harness.epochRecord(epoch, EpochState.STAGED, 1));
        state.onEpoch(Harness.epochRecord(epoch, EpochState.CONVERGED, 1));
      } else {
        state.onEpoch(Harness.epochRecord(epoch, EpochState.FENCE_CUTOVER, null));
      }
      state.onEpoch(published(epoch));
      if (epoch % 2 == 0) {
        state.onEpoch(Harness.epochRecord(epoch, EpochState.CONVERGED, 3));
      }
      for (ControlState.Finished f : state.sweep()) {
        tombstoned += f.taskIds().size();
        assertThat(f.epoch()).as("never the latest published epoch").isLessThan(epoch);
        // The worker's own tombstones come back through its reader.
        f.taskIds().forEach(id -> {
          state.onTask(id, null);
          state.onStatus(id, null);
        });
      }
      if (epoch == 10 || epoch == 100 || epoch == 1000) {
        sizes.add(state.size());
      }
    }
    System.out.printf("ControlStateTest: state entries at epochs 10, 100, 1000: %s; %d tasks tombstoned%n", sizes,
        tombstoned);
    assertThat(sizes.get(2)).as("flat over 1,000 epochs").isEqualTo(sizes.get(0));
    assertThat(tombstoned).isEqualTo(999 * 4);
  }

  @Test
  void shouldKeepAnEpochWhoseCleanupIsNotFinalAndTheLatestPublishedOne() {
    List<RangeCopyTask> first = epochTasks(1);
    first.forEach(t -> state.onTask(t.getTaskId(), t));
    first.forEach(t -> state.onStatus(t.getTaskId(), status(t, t.getKind() == TaskKind.CLEANUP ? TaskState.BLOCKED
        : TaskState.VERIFIED)));
    state.onEpoch(published(1));
    List<RangeCopyTask> second = epochTasks(2);
    second.forEach(t -> state.onTask(t.getTaskId(), t));
    second.forEach(t -> state.onStatus(t.getTaskId(), status(t, TaskState.VERIFIED)));

    assertThat(state.sweep()).as("epoch 2 not published: epoch 1 is the latest").isEmpty();
    state.onEpoch(published(2));
    assertThat(state.sweep()).as("epoch 1's cleanup is BLOCKED; epoch 2 is the latest").isEmpty();

    first.stream().filter(t -> t.getKind() == TaskKind.CLEANUP)
        .forEach(t -> state.onStatus(t.getTaskId(), status(t, TaskState.FAILED)));
    List<ControlState.Finished> swept = state.sweep();

    assertThat(swept).singleElement().satisfies(f -> {
      assertThat(f.epoch()).isEqualTo(1);
      assertThat(f.taskIds()).containsExactlyInAnyOrderElementsOf(first.stream().map(RangeCopyTask::getTaskId)
          .toList());
    });
    assertThat(state.status(first.get(0).getTaskId())).isEmpty();
    assertThat(state.copyTasks(Harness.CLUSTER, 1)).isEmpty();
    assertThat(state.copyTasks(Harness.CLUSTER, 2)).isNotEmpty();
  }

  /** Epoch 2 is done with, but epoch 1's cleanup still waits and checks epoch 2's copies: nothing is swept yet. */
  @Test
  void shouldSweepEpochsInOrderAndLetADroppedTaskLeaveItsEpoch() {
    List<RangeCopyTask> first = epochTasks(1);
    List<RangeCopyTask> second = epochTasks(2);
    for (List<RangeCopyTask> tasks : List.of(first, second)) {
      tasks.forEach(t -> state.onTask(t.getTaskId(), t));
      tasks.forEach(t -> state.onStatus(t.getTaskId(), status(t, TaskState.VERIFIED)));
    }
    RangeCopyTask waiting = first.get(3);
    state.onStatus(waiting.getTaskId(), status(waiting, TaskState.BLOCKED));
    for (long e = 1; e <= 3; e++) {
      state.onEpoch(published(e));
    }

    assertThat(state.sweep()).as("epoch 1 waits, so epoch 2 stays too").isEmpty();
    assertThat(state.copyTasks(Harness.CLUSTER, 2)).isNotEmpty();

    state.onTask(waiting.getTaskId(), null); // a re-plan dropped the waiting cleanup
    assertThat(state.sweep()).extracting(ControlState.Finished::epoch).containsExactly(1L, 2L);
  }

  /**
   * The history a starting worker reads: epochs whose tasks were tombstoned long ago (or that moved nothing) have
   * transition records only, forgotten once a later epoch is published; those of an epoch with tasks held stay.
   */
  @Test
  void shouldForgetTheTransitionRecordsOfEpochsWithoutTasksOnceALaterOneIsPublished() {
    RangeCopyTask held = epochTasks(3).get(2); // a cleanup of epoch 3, still waiting
    state.onTask(held.getTaskId(), held);
    for (long epoch = 1; epoch <= 1000; epoch++) {
      state.onEpoch(Harness.epochRecord(epoch, EpochState.STAGED, 1));
      state.onEpoch(Harness.epochRecord(epoch, EpochState.CONVERGED, 1));
      state.onEpoch(published(epoch));
      state.sweep();
    }

    List<Long> kept = new ArrayList<>();
    for (long epoch = 1; epoch <= 1000; epoch++) {
      if (!state.transition(Harness.CLUSTER, epoch).equals(ControlState.Transition.NONE)) {
        kept.add(epoch);
      }
    }
    assertThat(kept).as("epoch 3, whose cleanup still reads it, and the latest").containsExactly(3L, 1000L);
  }

  @Test
  void shouldTrackHowEachEpochIsCutOver() {
    assertThat(state.transition(Harness.CLUSTER, 4)).isEqualTo(ControlState.Transition.NONE);
    state.onEpoch(Harness.epochRecord(4, EpochState.STAGED, 1));
    state.onEpoch(Harness.epochRecord(4, EpochState.STAGED, 2));
    assertThat(state.transition(Harness.CLUSTER, 4)).isEqualTo(new ControlState.Transition(true, 0, false, true));

    state.onEpoch(Harness.epochRecord(4, EpochState.CONVERGED, 1));
    assertThat(state.convergedStage(Harness.CLUSTER, 4)).isEqualTo(1);
    state.onEpoch(Harness.epochRecord(4, EpochState.CONVERGED, 3));
    state.onEpoch(Harness.epochRecord(4, EpochState.CONVERGED, 1)); // never back down
    state.onEpoch(Harness.epochRecord(4, EpochState.CONVERGED, null)); // names no stage: ignored
    assertThat(state.transition(Harness.CLUSTER, 4)).isEqualTo(new ControlState.Transition(true, 3, false, true));

    state.onEpoch(Harness.epochRecord(5, EpochState.FENCE_CUTOVER, null));
    assertThat(state.transition(Harness.CLUSTER, 5)).isEqualTo(new ControlState.Transition(false, 0, true, false));
    assertThat(state.staged(Harness.CLUSTER, 5)).isFalse();
    assertThat(state.staged("another-cluster", 4)).isFalse();
    assertThat(state.dead(Harness.CLUSTER, 4)).isFalse();
  }

  /** A run waiting for the participants to converge is woken once, by a CONVERGED record or by the end of its epoch. */
  @Test
  void shouldWakeWhatWaitsForConvergenceOnceAtTheRecordThatEndsTheWait() {
    java.util.concurrent.atomic.AtomicInteger woken = new java.util.concurrent.atomic.AtomicInteger();
    Runnable wake = woken::incrementAndGet;
    state.onEpoch(Harness.epochRecord(4, EpochState.STAGED, 1));
    assertThat(state.awaitConverged(Harness.CLUSTER, 4, 1, wake)).isFalse();
    state.onEpoch(Harness.epochRecord(5, EpochState.CONVERGED, 1)); // another epoch
    assertThat(woken).hasValue(0);

    state.onEpoch(Harness.epochRecord(4, EpochState.CONVERGED, 1));
    state.onEpoch(Harness.epochRecord(4, EpochState.CONVERGED, 3));
    assertThat(woken).as("once").hasValue(1);
    assertThat(state.awaitConverged(Harness.CLUSTER, 4, 1, wake)).isTrue();
    assertThat(state.awaitConverged(Harness.CLUSTER, 4, 3, wake)).isTrue();

    assertThat(state.awaitConverged(Harness.CLUSTER, 6, 1, wake)).isFalse();
    state.onEpoch(Harness.epochRecord(6, EpochState.REVERTED, null));
    assertThat(woken).as("the revert ends the wait too").hasValue(2);

    assertThat(state.awaitConverged(Harness.CLUSTER, 7, 1, wake)).isFalse();
    state.cancelConvergenceWait(Harness.CLUSTER, 7, wake);
    state.onEpoch(Harness.epochRecord(7, EpochState.CONVERGED, 1));
    assertThat(woken).as("a cancelled wait").hasValue(2);
  }

  /**
   * A copy waits for the publisher's decision on its epoch only once the cluster's publisher is known to write
   * decisions (some cutover record of the cluster was read); the decision, STAGED or FENCE_CUTOVER, wakes it once.
   */
  @Test
  void shouldAwaitThePublishersDecisionOnlyOfAPublisherThatWritesThem() {
    java.util.concurrent.atomic.AtomicInteger woken = new java.util.concurrent.atomic.AtomicInteger();
    Runnable wake = woken::incrementAndGet;
    assertThat(state.awaitDecision(Harness.CLUSTER, 4, wake)).as("a publisher of before stages: no wait").isTrue();

    state.onEpoch(Harness.epochRecord(3, EpochState.FENCE_CUTOVER, null));
    assertThat(state.awaitDecision(Harness.CLUSTER, 4, wake)).isFalse();
    assertThat(state.awaitDecision("other-cluster", 4, wake)).as("per cluster").isTrue();
    state.onEpoch(Harness.epochRecord(5, EpochState.STAGED, 1)); // another epoch
    assertThat(woken).hasValue(0);
    state.onEpoch(Harness.epochRecord(4, EpochState.STAGED, 1));
    assertThat(woken).hasValue(1);
    assertThat(state.awaitDecision(Harness.CLUSTER, 4, wake)).isTrue();

    assertThat(state.awaitDecision(Harness.CLUSTER, 6, wake)).isFalse();
    state.onEpoch(Harness.epochRecord(6, EpochState.FENCE_CUTOVER, null));
    assertThat(woken).as("FENCE_CUTOVER decides too").hasValue(2);
    assertThat(state.awaitDecision(Harness.CLUSTER, 6, wake)).isTrue();
    assertThat(state.transition(Harness.CLUSTER, 7).decided()).isFalse();
    state.onEpoch(Harness.epochRecord(7, EpochState.CONVERGED, 1)); // written only for a staged epoch
    assertThat(state.transition(Harness.CLUSTER, 7).decided()).isTrue();
  }

  /**
   * Before any cutover record of the cluster was read (its first change, or a publisher of before stages), a copy
   * waits for a decision only until {@link ControlState#UNKNOWN_PUBLISHER_WAIT} after the epoch's plan was read.
   */
  @Test
  void shouldWaitForTheFirstDecisionOfAClusterOnlyShortlyAfterThePlan() {
    io.ringshift.worker.FakeTime time = io.ringshift.worker.FakeTime.stoppedAt(java.time.Instant.parse(
        "2026-12-07T00:00:00Z"));
    ControlState view = new ControlState(TrustedKeys.of(Harness.PUBLISHER.publicKey()), time);
    Runnable wake = () -> { };
    assertThat(view.awaitDecision(Harness.CLUSTER, 2, wake)).as("no plan read").isTrue();

    view.onEpoch(Harness.epochRecord(2, EpochState.PLANNED, null));
    assertThat(view.awaitDecision(Harness.CLUSTER, 2, wake)).isFalse();
    time.advance(ControlState.UNKNOWN_PUBLISHER_WAIT.minusMillis(1));
    assertThat(view.awaitDecision(Harness.CLUSTER, 2, wake)).isFalse();
    time.advance(java.time.Duration.ofMillis(1));
    assertThat(view.awaitDecision(Harness.CLUSTER, 2, wake)).as("then as before stages").isTrue();

    view.onEpoch(Harness.epochRecord(3, EpochState.PLANNED, null));
    view.onEpoch(Harness.epochRecord(3, EpochState.STAGED, 1));
    assertThat(view.awaitDecision(Harness.CLUSTER, 3, wake)).as("decided").isTrue();
  }

  /**
   * REVERTED (an abandoned staged plan) does not end the epoch's tasks: the orchestrator may plan again under the
   * number (a FAIL re-plans the epoch in flight), and those copies must run to a READY record that the publisher
   * rejects, which rolls the cluster back. They take the fence; a copy of the number still verifies without deleting
   * anything, as clients of its first stage may still write both rings.
   */
  @Test
  void shouldCutARevertedNumberOverAtTheFenceWithoutEndingItsTasks() {
    state.onEpoch(published(3));
    state.onEpoch(Harness.epochRecord(4, EpochState.STAGED, 1));
    state.onEpoch(Harness.epochRecord(4, EpochState.REVERTED, null));

    assertThat(state.dead(Harness.CLUSTER, 4)).isFalse();
    assertThat(state.staged(Harness.CLUSTER, 4)).isFalse();
    assertThat(state.everStaged(Harness.CLUSTER, 4)).isTrue();
    assertThat(state.transition(Harness.CLUSTER, 4)).isEqualTo(new ControlState.Transition(false, 0, true, true));

    state.onEpoch(Harness.epochRecord(4, EpochState.STAGED, 1)); // the publisher's last word decides
    assertThat(state.staged(Harness.CLUSTER, 4)).isTrue();
  }

  /** Two copies and two cleanups of an epoch. */
  private static List<RangeCopyTask> epochTasks(long epoch) {
    long base = epoch * 1_000;
    return List.of(
        Harness.task(TaskKind.COPY, epoch, RingRange.of(base, base + 10), List.of("node-a"), "node-b"),
        Harness.task(TaskKind.REPAIR, epoch, RingRange.of(base + 10, base + 20), List.of("node-a"), "node-c"),
        Harness.task(TaskKind.CLEANUP, epoch, RingRange.of(base, base + 10), List.of("node-b"), "node-d"),
        Harness.task(TaskKind.CLEANUP, epoch, RingRange.of(base + 10, base + 20), List.of("node-c"), "node-e"));
  }

  private static TaskStatus status(RangeCopyTask t, TaskState state) {
    return TaskStatus.newBuilder().setTaskId(t.getTaskId()).setClusterId(t.getClusterId()).setEpoch(t.getEpoch())
        .setState(state).setCopiedBytes(0).setTimestampMillis(0).build();
  }

  private static EpochRecord published(long epoch) {
    return CleanupRunTest.signedPublished(Harness.CLUSTER, epoch);
  }
}
