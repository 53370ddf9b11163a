package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.CopyRunTest.keysIn;
import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static io.ringshift.worker.internal.StoreFixture.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.worker.Limits;
import io.ringshift.worker.TaskTuning;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Caught-up tasks follow their source together ({@link SourceTails}): one change feed per source and interval,
 * whatever the number of tasks, each task still getting every write to its range; a failure reaches only the
 * tasks it concerns.
 */
class SourceTailsTest {
  private static final Duration TAIL = Duration.ofMillis(100);
  private static final TaskTuning TUNING = Harness.FAST.withIntervals(TAIL, Duration.ofMillis(50));
  private static final int TASKS = 32;

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  StoreFixture.Node t;
  StoreFixture.Node u;
  Harness h;

  @BeforeEach
  void openNodes() {
    nodes = new StoreFixture(dir);
    a = nodes.node("node-a");
    t = nodes.node("node-t");
    u = nodes.node("node-u");
    h = new Harness(nodes.stores(), Limits.unlimited(), TUNING, Clock.systemUTC(), Duration.ZERO);
  }

  @AfterEach
  void closeNodes() throws Exception {
    h.close();
    nodes.close();
  }

  @Test
  void shouldFollowEveryCaughtUpTaskOfASourceWithOneFeedPerIntervalAndGiveEachItsWrites() {
    a.fill("k", 2000, 50);
    List<RingRange> ranges = RingRange.whole().split(TASKS);
    List<RangeCopyTask> tasks = new ArrayList<>();
    List<TaskRun> runs = new ArrayList<>();
    for (RingRange range : ranges) {
      RangeCopyTask task = copyTask(2, range, List.of("node-a"), "node-t");
      tasks.add(task);
      runs.add(h.run(task));
    }
    tasks.forEach(task -> h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP));

    // A write to every range while all the tasks wait for their fence.
    int feedsBefore = a.feedsOpened();
    long startNanos = System.nanoTime();
    List<byte[]> late = new ArrayList<>();
    for (RingRange range : ranges) {
      byte[] key = keysIn(range, "late", 1).get(0);
      a.put(key, bytes("late value"), 1);
      late.add(key);
    }
    // Looked at after three intervals at the earliest, so that every task had time to read the feed a few times.
    await("every target has the write to its range").atMost(Duration.ofSeconds(30))
        .pollDelay(TAIL.multipliedBy(3)).pollInterval(Duration.ofMillis(10))
        .until(() -> late.stream().allMatch(k -> t.delegate.get(k).isPresent()));
    int feeds = a.feedsOpened() - feedsBefore;
    long intervals = (System.nanoTime() - startNanos) / TAIL.toNanos();

    // A pass starts an interval after the previous one ends, so at most one feed per interval and source; one
    // feed per task would have opened 32 in every interval.
    System.out.printf("SourceTailsTest: %d tasks waiting for their fence; %d feeds opened on the source in %d "
        + "tail intervals%n", TASKS, feeds, intervals);
    assertThat(feeds).as("feeds opened on the source while %d tasks followed it for %d intervals", TASKS, intervals)
        .isLessThanOrEqualTo((int) intervals + 1);

    for (int i = 0; i < tasks.size(); i++) {
      runs.get(i).update(fenceRequested(tasks.get(i)));
    }
    tasks.forEach(task -> h.awaitState(task.getTaskId(), TaskState.VERIFIED));
    assertThat(t.contents(RingRange.whole())).isEqualTo(a.contents(RingRange.whole()))
        .containsEntry(new String(late.get(0), StandardCharsets.UTF_8),
            java.util.HexFormat.of().formatHex(bytes("late value")));
    runs.forEach(h::awaitFinished);
  }

  @Test
  void shouldEndOnlyTheWaitOfTheTaskWhoseTargetStopsAnsweringAndVerifyBothOnceItIsBack() {
    a.fill("k", 1000, 50);
    List<RingRange> halves = RingRange.whole().split(2);
    RangeCopyTask toT = copyTask(2, halves.get(0), List.of("node-a"), "node-t");
    RangeCopyTask toU = copyTask(2, halves.get(1), List.of("node-a"), "node-u");
    TaskRun runT = h.run(toT);
    TaskRun runU = h.run(toU);
    h.awaitState(toT.getTaskId(), TaskState.CAUGHT_UP);
    h.awaitState(toU.getTaskId(), TaskState.CAUGHT_UP);

    u.down();
    byte[] forT = keysIn(halves.get(0), "after", 1).get(0);
    byte[] forU = keysIn(halves.get(1), "after", 1).get(0);
    a.put(forT, bytes("x"), 1);
    a.put(forU, bytes("y"), 1);

    h.awaitStatus(toU.getTaskId(), "blocked on its target", s -> s.getState() == TaskState.BLOCKED
        && s.getBlockedReason() != null && s.getBlockedReason().startsWith("target node-u unreachable"));
    await("the other task still follows and gets its write").atMost(Duration.ofSeconds(30))
        .until(() -> t.delegate.get(forT).isPresent());
    assertThat(h.statuses(toT.getTaskId())).extracting(s -> s.getState()).doesNotContain(TaskState.BLOCKED);

    u.up();
    await("the blocked task catches up again, with the write").atMost(Duration.ofSeconds(30))
        .until(() -> u.delegate.get(forU).isPresent());
    runT.update(fenceRequested(toT));
    runU.update(fenceRequested(toU));
    h.awaitState(toT.getTaskId(), TaskState.VERIFIED);
    h.awaitState(toU.getTaskId(), TaskState.VERIFIED);
    assertThat(t.contents(halves.get(0))).isEqualTo(a.contents(halves.get(0)));
    assertThat(u.contents(halves.get(1))).isEqualTo(a.contents(halves.get(1)));
  }
}
