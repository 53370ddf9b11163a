package io.ringshift.worker;

import static io.ringshift.worker.ItKafka.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.protocol.TrustedKeys;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.worker.internal.StoreFixture;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker against a real broker, with real RocksDB stores in this JVM: tasks come from {@code ring.tasks},
 * progress goes to {@code ring.task-status}, the fence request is a re-emitted task, a restarted worker resumes
 * from the checkpoints on the topic, and a cleanup waits for the PUBLISHED record on {@code ring.epochs}.
 */
class MigrationWorkerIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  static final RingRange LOW = RingRange.of(0, Long.MAX_VALUE);
  static final RingRange HIGH = RingRange.of(Long.MAX_VALUE, 0);
  static final TaskTuning FAST = TaskTuning.DEFAULTS.withBatch(16 * 1024, 100)
      .withCheckpoints(64 * 1024, Duration.ofMillis(200))
      .withIntervals(Duration.ofMillis(50), Duration.ofMillis(100));

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  StoreFixture.Node b;
  StoreFixture.Node t;
  ItKafka kafka;

  @BeforeEach
  void setUp() {
    nodes = new StoreFixture(dir.resolve("nodes"));
    a = nodes.node("node-a");
    b = nodes.node("node-b");
    t = nodes.node("node-t");
    a.fill("k", 2000, 100);
    b.fill("k", 2000, 100);
    kafka = new ItKafka(KAFKA.bootstrapServers(), KAFKA.topicPrefix());
  }

  @AfterEach
  void tearDown() {
    kafka.close();
    nodes.close();
  }

  private MigrationWorker worker(String id, Limits limits) {
    WorkerConfig config = WorkerConfig.of(KAFKA.bootstrapServers(), id, NodeDirectory.empty())
        .withTopics(kafka.topics).withGroupId(KAFKA.applicationId()).withLimits(limits).withTuning(FAST)
        .withGrace(Duration.ZERO).withTrustedKeys(TrustedKeys.of(ItKafka.PUBLISHER.publicKey()));
    return new MigrationWorker(config, nodes.stores(), Clock.systemUTC()).start();
  }

  @Test
  void shouldRunCopyAndRepairTasksFromTheTopicToVerified() {
    RangeCopyTask copy = task(TaskKind.COPY, 2, LOW, List.of("node-a"), "node-t");
    RangeCopyTask repair = task(TaskKind.REPAIR, 2, HIGH, List.of("node-b"), "node-t");
    try (MigrationWorker worker = worker("worker-1", Limits.unlimited().withRates(0, 20 * 1024))) {
      kafka.emit(copy, repair);
      TaskStatus throttled = kafka.awaitStatus(copy.getTaskId(), "throttled",
          s -> s.getBlockedReason() != null && s.getBlockedReason().startsWith("throttled"));
      worker.setLimits(Limits.unlimited());
      kafka.awaitStatus(copy.getTaskId(), "caught up", s -> s.getState() == TaskState.CAUGHT_UP);
      kafka.awaitStatus(repair.getTaskId(), "caught up", s -> s.getState() == TaskState.CAUGHT_UP);

      kafka.requestFence(copy, repair);
      TaskStatus copied = kafka.awaitStatus(copy.getTaskId(), "verified", s -> s.getState() == TaskState.VERIFIED);
      TaskStatus repaired = kafka.awaitStatus(repair.getTaskId(), "verified",
          s -> s.getState() == TaskState.VERIFIED);

      assertThat(throttled.getState()).isEqualTo(TaskState.COPYING);
      assertThat(throttled.getBlockedReason()).isEqualTo("throttled: source node-a at 20.0 KiB/s");
      assertThat(copied.getWorkerId()).isEqualTo("worker-1");
      assertThat(repaired.getSource()).isEqualTo("node-b");
      assertThat(t.contents(LOW)).isEqualTo(a.contents(LOW));
      assertThat(t.contents(HIGH)).isEqualTo(b.contents(HIGH));
    }
  }

  @Test
  void shouldResumeFromTheCheckpointAfterARestartAndNotRunVerifiedTasksAgain() {
    RangeCopyTask copy = task(TaskKind.COPY, 3, LOW, List.of("node-a"), "node-t");
    TaskStatus last;
    try (MigrationWorker worker = worker("worker-1", Limits.unlimited().withRates(0, 100 * 1024))) {
      kafka.emit(copy);
      kafka.awaitStatus(copy.getTaskId(), "a checkpoint", s -> s.getLastCopiedToken() != null);
    }
    List<TaskStatus> before = kafka.statusesToEnd(copy.getTaskId());
    last = before.get(before.size() - 1);
    assertThat(last.getState()).isEqualTo(TaskState.COPYING);

    try (MigrationWorker worker = worker("worker-2", Limits.unlimited())) {
      TaskStatus resumed = kafka.awaitStatus(copy.getTaskId(), "from worker-2",
          s -> "worker-2".equals(s.getWorkerId()));
      kafka.awaitStatus(copy.getTaskId(), "caught up", s -> s.getState() == TaskState.CAUGHT_UP);
      kafka.requestFence(copy);
      kafka.awaitStatus(copy.getTaskId(), "verified", s -> s.getState() == TaskState.VERIFIED);

      assertThat(resumed.getWatermark()).isEqualTo(last.getWatermark());
      assertThat(resumed.getCopiedBytes()).isEqualTo(last.getCopiedBytes());
      assertThat(resumed.getLastCopiedToken()).isEqualTo(last.getLastCopiedToken());
    }

    RangeCopyTask probe = task(TaskKind.COPY, 3, HIGH, List.of("node-b"), "node-t");
    try (MigrationWorker worker = worker("worker-3", Limits.unlimited())) {
      kafka.emit(probe);
      kafka.awaitStatus(probe.getTaskId(), "caught up", s -> s.getState() == TaskState.CAUGHT_UP);
      assertThat(kafka.statuses(copy.getTaskId())).as("the VERIFIED task is not run again")
          .noneMatch(s -> "worker-3".equals(s.getWorkerId()));
    }
  }

  /**
   * Epoch 4 (a copy and a cleanup) is verified, published and cleaned up; once epoch 5 is published too, the worker
   * tombstones epoch 4's tasks on ring.tasks and their statuses on ring.task-status (and forgets them), so that a
   * starting worker no longer reads them. Without the sweep they stayed on both topics for good.
   */
  @Test
  void shouldTombstoneTheTasksAndStatusesOfAnEpochItIsDoneWith() {
    RangeCopyTask copy = task(TaskKind.COPY, 4, LOW, List.of("node-a"), "node-t");
    RangeCopyTask cleanup = task(TaskKind.CLEANUP, 4, LOW, List.of("node-t"), "node-a");
    WorkerConfig config = WorkerConfig.of(KAFKA.bootstrapServers(), "worker-1", NodeDirectory.empty())
        .withTopics(kafka.topics).withGroupId(KAFKA.applicationId()).withTuning(FAST).withGrace(Duration.ZERO)
        .withTrustedKeys(TrustedKeys.of(ItKafka.PUBLISHER.publicKey())).withSweepInterval(Duration.ofMillis(200));
    try (MigrationWorker worker = new MigrationWorker(config, nodes.stores(), Clock.systemUTC()).start()) {
      kafka.emit(copy, cleanup);
      kafka.awaitStatus(copy.getTaskId(), "caught up", s -> s.getState() == TaskState.CAUGHT_UP);
      kafka.requestFence(copy);
      kafka.awaitStatus(copy.getTaskId(), "verified", s -> s.getState() == TaskState.VERIFIED);
      kafka.published(4, System.currentTimeMillis());
      kafka.awaitStatus(cleanup.getTaskId(), "deleted", s -> s.getState() == TaskState.VERIFIED);
      assertThat(kafka.tombstonesOnTasks()).as("epoch 4 is the latest published: kept").isEmpty();

      kafka.published(5, System.currentTimeMillis());

      await("epoch 4's tasks and statuses tombstoned").atMost(ItKafka.TIMEOUT)
          .until(() -> kafka.tombstonesOnTasks().containsAll(List.of(copy.getTaskId(), cleanup.getTaskId()))
              && kafka.tombstonedStatuses().containsAll(List.of(copy.getTaskId(), cleanup.getTaskId())));
    }
  }

  @Test
  void shouldDeleteAnOldReplicaOnlyAfterTheEpochIsPublished() {
    RangeCopyTask copy = task(TaskKind.COPY, 4, LOW, List.of("node-a"), "node-t");
    RangeCopyTask cleanup = task(TaskKind.CLEANUP, 4, LOW, List.of("node-t"), "node-a");
    try (MigrationWorker worker = worker("worker-1", Limits.unlimited())) {
      kafka.emit(copy, cleanup);
      kafka.awaitStatus(cleanup.getTaskId(), "waiting for the epoch",
          s -> "waiting for epoch 4 to be published".equals(s.getBlockedReason()));
      kafka.awaitStatus(copy.getTaskId(), "caught up", s -> s.getState() == TaskState.CAUGHT_UP);
      kafka.requestFence(copy);
      kafka.awaitStatus(copy.getTaskId(), "verified", s -> s.getState() == TaskState.VERIFIED);
      assertThat(a.contents(LOW)).as("not deleted before the epoch is published").isNotEmpty();

      kafka.published(4, System.currentTimeMillis());
      kafka.awaitStatus(cleanup.getTaskId(), "deleted", s -> s.getState() == TaskState.VERIFIED);

      assertThat(a.contents(LOW)).isEmpty();
      assertThat(t.contents(LOW)).isNotEmpty();
      assertThat(a.contents(HIGH)).isNotEmpty();
    }
  }
}
