package io.ringshift.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.MemoryStore;
import io.ringshift.storage.WriteResult;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The worker's task state machines driven one step at a time on a virtual clock, with no thread of their own: a COPY
 * to VERIFIED through catch-up, the fence request and the digests, with writes to the source in between.
 */
class WorkerCoreTest {
  private static final RingRange HALF = RingRange.of(0, Long.MAX_VALUE);
  private long nowMillis = 1_000_000;

  @Test
  void shouldCopyCatchUpFenceAndVerifyATaskStepByStepOnAVirtualClock() {
    MemoryStore source = MemoryStore.create("node-a", "az-1", "a");
    MemoryStore target = MemoryStore.create("node-t", "az-1", "t");
    for (int i = 0; i < 500; i++) {
      source.put(bytes("k-" + i), bytes("v-" + i), 1);
    }
    List<TaskStatus> statuses = new ArrayList<>();
    Clock clock = new Clock() {
      @Override
      public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return Instant.ofEpochMilli(nowMillis);
      }
    };
    WorkerCore worker = new WorkerCore("w1", NodeStores.of(Map.of("node-a", source, "node-t", target)), clock,
        () -> nowMillis * 1_000_000, TrustedKeys.of(io.ringshift.protocol.SigningKey.generate().publicKey()), TaskTuning.DEFAULTS, Duration.ofMinutes(10),
        Limits.unlimited(), s -> {
          statuses.add(s);
        });
    RangeCopyTask task = RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId("c1", 2, TaskKind.COPY, HALF.start(), HALF.end(), "node-t"))
        .setClusterId("c1").setEpoch(2).setKind(TaskKind.COPY).setRangeStart(HALF.start()).setRangeEnd(HALF.end())
        .setSources(List.of("node-a")).setTarget("node-t").setTargetZone("az-1").setEstimatedBytes(0)
        .setTimestampMillis(0).setFenceRequested(false).build();

    worker.onTaskRecord(task.getTaskId(), task);
    worker.onTask("p0", task.getTaskId(), task);
    assertThat(statuses).as("nothing runs until the driver says so").isEmpty();
    long next = worker.runDue();

    assertThat(last(statuses).getState()).isEqualTo(TaskState.CAUGHT_UP);
    source.put(bytes("k-late"), bytes("written while the task waits for its fence"), 1);
    nowMillis += Duration.ofNanos(next).toMillis() - nowMillis + 1;
    worker.runDue(); // the tail pass applies the late write
    assertThat(target.get(bytes("k-late"))).isPresent();

    RangeCopyTask fence = RangeCopyTask.newBuilder(task).setFenceRequested(true).build();
    worker.onTaskRecord(task.getTaskId(), fence);
    worker.onTask("p0", task.getTaskId(), fence);
    worker.runDue();

    assertThat(last(statuses).getState()).isEqualTo(TaskState.VERIFIED);
    assertThat(source.digest(HALF).sameContentAs(target.digest(HALF))).isTrue();
    assertThat(source.put(bytes("k-1"), bytes("old epoch"), 1)).as("the source is fenced at epoch 2")
        .isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(worker.activeTasks()).isZero();
  }

  private static TaskStatus last(List<TaskStatus> statuses) {
    return statuses.get(statuses.size() - 1);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
