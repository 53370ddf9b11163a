package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.CopyRunTest.HALF;
import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.worker.Limits;
import io.ringshift.worker.internal.WorkerMetrics.BlockReason;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker's meters follow its tasks (docs/metrics.md). */
class WorkerMetricsTest {
  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  Harness h;
  TaskScheduler scheduler;
  TaskDispatcher dispatcher;

  @BeforeEach
  void setUp() {
    nodes = new StoreFixture(dir);
    a = nodes.node("node-a");
    nodes.node("node-t");
    a.fill("k", 1000, 100);
    h = new Harness(nodes.stores(), Limits.unlimited().withRates(0, 100 * 1024), Harness.FAST,
        Clock.systemUTC(), Duration.ZERO);
    scheduler = new TaskScheduler("test", 8);
    dispatcher = new TaskDispatcher(h.ctx, scheduler);
    h.metrics.view(new WorkerMetrics.View() {
      @Override
      public List<TaskRun> runs() {
        return dispatcher.runs();
      }

      @Override
      public long highestPublished(String clusterId) {
        return h.control.highestPublished(clusterId);
      }
    });
  }

  @AfterEach
  void tearDown() throws Exception {
    dispatcher.stopAll(Duration.ofSeconds(5));
    scheduler.close();
    h.close();
    nodes.close();
  }

  private double gauge(String name, String tag, String value) {
    return h.registry.get(name).tag(tag, value).gauge().value();
  }

  @Test
  void shouldCountTheBytesCopiedTheTasksByStateTheThrottleWaitAndTheFenceHeld() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    dispatcher.onTask("p0", task.getTaskId(), task);

    // Both read at one poll: the throttled copy of 50 KB ends within a second, and a loaded machine can pause that
    // long between two reads (a fresh-clone run saw the copy CAUGHT_UP by the second read).
    await().atMost(Harness.WAIT).until(() -> gauge(WorkerMetrics.BLOCKED, "reason", "throttled") == 1
        && gauge(WorkerMetrics.TASKS, "state", "COPYING") == 1);
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
    await().atMost(Harness.WAIT).until(() -> gauge(WorkerMetrics.TASKS, "state", "CAUGHT_UP") == 1);
    assertThat(h.registry.get(WorkerMetrics.FENCES_HELD).gauge().value()).isZero();

    dispatcher.onTask("p0", task.getTaskId(), fenceRequested(task));
    TaskStatus verified = h.awaitState(task.getTaskId(), TaskState.VERIFIED);

    await().atMost(Harness.WAIT).until(() -> gauge(WorkerMetrics.TASKS, "state", "VERIFIED") == 1);
    assertThat(gauge(WorkerMetrics.TASKS, "state", "COPYING")).isZero();
    assertThat(h.registry.get(WorkerMetrics.BYTES_COPIED).counter().count())
        .isEqualTo(verified.getCopiedBytes()).isPositive();
    assertThat(h.registry.get(WorkerMetrics.FENCES_HELD).gauge().value())
        .as("verified, its epoch not published: the fence is held").isEqualTo(1);
    assertThat(h.registry.get(WorkerMetrics.BLOCKED).gauges()).allSatisfy(g -> assertThat(g.value()).isZero());
    assertThat(h.registry.get(WorkerMetrics.CATCHUP_LAG).gauge().value()).isGreaterThanOrEqualTo(0);
  }

  @Test
  void shouldClassifyBlockedReasonsIntoAFixedSet() {
    assertThat(BlockReason.of("throttled: source node-a at 100.0 KiB/s")).isEqualTo(BlockReason.THROTTLED);
    assertThat(BlockReason.of("waiting for a copy slot: 4 tasks running in this worker (max 4)"))
        .isEqualTo(BlockReason.WAITING_FOR_SLOT);
    assertThat(BlockReason.of("no source reachable: node-a (refused)")).isEqualTo(BlockReason.NODE_UNREACHABLE);
    assertThat(BlockReason.of("target node-t unreachable: connection refused"))
        .isEqualTo(BlockReason.NODE_UNREACHABLE);
    assertThat(BlockReason.of("store error, retrying: target node-t unreachable"))
        .as("what it starts with decides first").isEqualTo(BlockReason.STORE_ERROR);
    assertThat(BlockReason.of("the task names no source: no replica of the range survives"))
        .isEqualTo(BlockReason.NO_SOURCE);
    assertThat(BlockReason.of("source node-a's change log (WAL retention) does not reach back to the watermark 5"))
        .isEqualTo(BlockReason.FEED_LOST);
    assertThat(BlockReason.of("range digests differ after draining to fence position 9: source ...; verifying "
        + "again in 2 s (attempt 1)")).isEqualTo(BlockReason.DIGEST_MISMATCH);
    assertThat(BlockReason.of("waiting for epoch 4 to be published; grace period ends in 10 min"))
        .isEqualTo(BlockReason.WAITING_FOR_PUBLICATION);
    assertThat(BlockReason.of("grace period ends in 8 min 20 s")).isEqualTo(BlockReason.GRACE_PERIOD);
    assertThat(BlockReason.of("task c1/4/COPY/1/2/node-t not VERIFIED (COPYING)"))
        .isEqualTo(BlockReason.COPIES_NOT_VERIFIED);
    assertThat(BlockReason.of("waiting for every live participant to route by stage 1 of epoch 2 before fencing "
        + "(no CONVERGED record yet): ...")).isEqualTo(BlockReason.WAITING_FOR_CONVERGENCE);
    assertThat(BlockReason.of("waiting for every live participant to route by the FINAL ring of epoch 7 (no "
        + "CONVERGED record of stage 3 yet): ...")).isEqualTo(BlockReason.WAITING_FOR_CONVERGENCE);
    assertThat(BlockReason.of(UnknownKindRun.REASON)).isEqualTo(BlockReason.UNKNOWN_KIND);
    assertThat(BlockReason.of("something new")).isEqualTo(BlockReason.OTHER);
    assertThat(BlockReason.of(null)).isEqualTo(BlockReason.OTHER);
  }

  @Test
  void shouldRemoveItsMetersOnClose() {
    h.metrics.close();

    assertThat(h.registry.getMeters()).isEmpty();
  }
}
