package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.worker.Limits;
import io.ringshift.worker.TaskTuning;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tasks that wait hold no thread: hundreds of copies waiting for a copy slot or for their fence, and cleanups waiting
 * for their epoch, cost the worker a bounded pool, and what they wait for (a freed slot, the fence request, a stop)
 * wakes them at once, not at their next poll.
 */
class WaitingTasksTest {
  static final int TASKS = 300;
  /** Polls (a retry, a fence wait) far longer than any wait here: only a wake can make these tests pass in time. */
  static final TaskTuning SLOW_POLLS = Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofHours(1));

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  StoreFixture.Node t;
  Harness h;

  @BeforeEach
  void openNodes() {
    nodes = new StoreFixture(dir);
    a = nodes.node("node-a");
    t = nodes.node("node-t");
  }

  @AfterEach
  void closeNodes() throws Exception {
    if (h != null) {
      h.close();
    }
    nodes.close();
  }

  @Test
  void shouldRunHundredsOfWaitingCopiesOnABoundedPoolAndWakeThemWhenTheirFenceIsRequested() {
    h = new Harness(nodes.stores(), Limits.unlimited().withCaps(2, 2, 2), SLOW_POLLS, Clock.systemUTC(),
        Duration.ZERO);
    a.fill("k", 3000, 100);
    List<RingRange> pieces = RingRange.of(0, 0).split(TASKS);
    assertThat(pieces).hasSize(TASKS);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    int before = threads.getThreadCount();
    AtomicInteger peakThreads = new AtomicInteger();
    AtomicInteger peakSlots = new AtomicInteger();
    List<TaskRun> runs = new ArrayList<>();
    List<RangeCopyTask> tasks = new ArrayList<>();
    for (RingRange piece : pieces) {
      RangeCopyTask task = copyTask(2, piece, List.of("node-a"), "node-t");
      tasks.add(task);
      runs.add(h.run(task));
    }
    // Every task copies in turn (two at a time) and then waits for its fence, following the source's tail.
    await("every task CAUGHT_UP").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> {
      peakThreads.accumulateAndGet(threads.getThreadCount(), Math::max);
      peakSlots.accumulateAndGet(h.slots.running(), Math::max);
      return tasks.stream().allMatch(task -> h.statuses(task.getTaskId()).stream()
          .anyMatch(s -> s.getState() == TaskState.CAUGHT_UP));
    });
    assertThat(peakSlots.get()).as("the caps hold").isLessThanOrEqualTo(2);
    assertThat(h.slots.waiting()).as("no task is left waiting for a slot").isZero();
    // A thread per waiting task would be 300 more; the pool has 8 + 16, plus the copy's scan and apply threads.
    System.out.printf("%d waiting tasks: %d threads before, peak %d%n", TASKS, before, peakThreads.get());
    assertThat(peakThreads.get() - before).as("threads the waiting tasks cost").isLessThan(60);

    for (int i = 0; i < TASKS; i++) {
      runs.get(i).update(fenceRequested(tasks.get(i)));
    }
    // Their next poll is an hour away: the fence request itself wakes them.
    await("every task VERIFIED").atMost(Duration.ofSeconds(60)).until(() -> runs.stream().allMatch(TaskRun::finished));
    for (RangeCopyTask task : tasks) {
      assertThat(h.control.status(task.getTaskId()).orElseThrow().getState()).isEqualTo(TaskState.VERIFIED);
    }
    assertThat(t.contents(RingRange.of(0, 0))).isEqualTo(a.contents(RingRange.of(0, 0)));
  }

  @Test
  void shouldWakeATaskWaitingForACopySlotWhenOneIsFreed() {
    h = new Harness(nodes.stores(), Limits.unlimited().withCaps(1, 1, 1), SLOW_POLLS, Clock.systemUTC(),
        Duration.ZERO);
    a.fill("k", 500, 100);
    List<RingRange> halves = RingRange.of(0, 0).split(2);
    RangeCopyTask first = copyTask(2, halves.get(0), List.of("node-a"), "node-t");
    RangeCopyTask second = copyTask(2, halves.get(1), List.of("node-a"), "node-t");
    h.run(first);
    h.awaitState(first.getTaskId(), TaskState.CAUGHT_UP);
    h.run(second);
    // The slot is free again (the first task released it when CAUGHT_UP), so the second copies at once.
    h.awaitState(second.getTaskId(), TaskState.CAUGHT_UP);

    RangeCopyTask third = copyTask(3, halves.get(0), List.of("node-a"), "node-t");
    h.slots.tryAcquire("node-x", "node-t"); // a copy of another task holds the target's one slot
    TaskRun waiting = h.run(third);
    h.awaitStatus(third.getTaskId(), "waiting for a slot", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("waiting for a copy slot"));
    assertThat(h.slots.waiting()).isEqualTo(1);
    h.slots.release("node-x", "node-t");
    // The slot poll is a second; the release wakes the task well before.
    await("the waiting task copies").atMost(Duration.ofMillis(900))
        .until(() -> h.statuses(third.getTaskId()).stream().anyMatch(s -> s.getState() == TaskState.CAUGHT_UP));
    waiting.stop(TaskControl.Stop.CANCEL);
  }

  @Test
  void shouldStopAWaitingCleanupAtOnce() {
    h = new Harness(nodes.stores(), Limits.unlimited(), SLOW_POLLS, Clock.systemUTC(), Duration.ZERO);
    RangeCopyTask cleanup = Harness.task(TaskKind.CLEANUP, 2, RingRange.of(0, 0), List.of("node-t"), "node-a");
    TaskRun run = h.run(cleanup);
    h.awaitStatus(cleanup.getTaskId(), "waiting for the epoch", s -> s.getState() == TaskState.BLOCKED);
    int statuses = h.statuses(cleanup.getTaskId()).size();
    run.stop(TaskControl.Stop.CHECKPOINT);
    // Parked for an hour until its next check: the stop runs its last step now, which writes its checkpoint.
    await("the stopped cleanup ends").atMost(Duration.ofSeconds(5)).until(run::finished);
    assertThat(h.statuses(cleanup.getTaskId())).hasSize(statuses + 1);
  }

  @Test
  void shouldRunAStopWhileEveryThreadOfThePoolIsBusy() throws Exception {
    h = new Harness(nodes.stores(), Limits.unlimited(), SLOW_POLLS, Clock.systemUTC(), Duration.ZERO);
    RangeCopyTask cleanup = Harness.task(TaskKind.CLEANUP, 2, RingRange.of(0, 0), List.of("node-t"), "node-a");
    TaskRun run = h.run(cleanup);
    h.awaitStatus(cleanup.getTaskId(), "waiting for the epoch", s -> s.getState() == TaskState.BLOCKED);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    // Long steps of other tasks hold every thread of the pool (8 copy slots + 16).
    for (int i = 0; i < 8 + TaskScheduler.SHORT_STEP_THREADS; i++) {
      h.scheduler().runAsync(() -> {
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    try {
      run.stop(TaskControl.Stop.CHECKPOINT);
      // The stop's last step does not wait behind them.
      await("the stopped cleanup ends").atMost(Duration.ofSeconds(5)).until(run::finished);
    } finally {
      release.countDown();
    }
  }
}
