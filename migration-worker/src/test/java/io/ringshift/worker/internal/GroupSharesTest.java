package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import io.ringshift.worker.FakeTime;
import io.ringshift.worker.Limits;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A worker's share of its group's budgets (docs/worker.md, "Group budgets"): an equal part among the workers whose
 * fresh COPYING statuses say they copy from the source (or over the zone link), itself included while it sends,
 * and what the worker's buckets do with it.
 */
class GroupSharesTest {
  private static final String GROUP = "workers";
  private static final long MIB = 1 << 20;

  private final FakeTime time = FakeTime.stopped();
  private final ControlState state = new ControlState(null, time);
  private final GroupShares shares = new GroupShares(GROUP, "w1", state, time);

  @Test
  void shouldHaveNoShareWithoutBudgets() {
    copying("t1", "w2", "node-a", "az-2");
    shares.refresh();
    assertThat(shares.sourceShare("node-a", true).limited()).isFalse();
    assertThat(shares.linkShare("az-1>az-2", true).limited()).isFalse();
  }

  @Test
  void shouldDivideASourcesBudgetAmongTheWorkersCopyingFromIt() {
    budgets(12 * MIB, Map.of("node-b", 4 * MIB), 0, Map.of());
    copying("t1", "w2", "node-a", "az-2");
    copying("t2", "w3", "node-a", "az-2");
    copying("t3", "w3", "node-a", "az-3");
    copying("t4", "w2", "node-b", "az-2");
    shares.refresh();

    assertThat(shares.sourceShare("node-a", true)).isEqualTo(new GroupShares.Share(4 * MIB, 12 * MIB, 3));
    assertThat(shares.sourceShare("node-a", false)).as("this worker not sending: the two others")
        .isEqualTo(new GroupShares.Share(6 * MIB, 12 * MIB, 2));
    assertThat(shares.sourceShare("node-b", true)).as("an override").isEqualTo(new GroupShares.Share(2 * MIB,
        4 * MIB, 2));
    assertThat(shares.sourceShare("node-c", true)).as("nobody else: the whole budget")
        .isEqualTo(new GroupShares.Share(12 * MIB, 12 * MIB, 1));
  }

  /**
   * Protocol review of e5d1a4e: node ids are unique only per cluster, and every cluster's workers write to
   * ring.task-status; another cluster's copies from its own node-a shrank this worker's share of its node-a's budget.
   */
  @Test
  void shouldNotCountCopiesFromANodeOfTheSameIdInAnotherCluster() {
    budgets(12 * MIB, Map.of(), 0, Map.of());
    copying("t1", "w2", "node-a", "az-2");
    copying("t2", "w1", "node-a", "az-2"); // this worker's own copy, of cluster c1
    for (String id : List.of("x1", "x2", "x3")) {
      state.onStatus(id, TaskStatus.newBuilder(status(id, "other-" + id, "node-a", TaskState.COPYING))
          .setClusterId("c2").build());
    }
    shares.refresh();

    assertThat(shares.sourceShare("node-a", true)).as("w1 and w2 copy from c1's node-a; c2's workers do not")
        .isEqualTo(new GroupShares.Share(6 * MIB, 12 * MIB, 2));
  }

  @Test
  void shouldNotCountStaleOrFinishedCopies() {
    budgets(12 * MIB, Map.of(), 0, Map.of());
    copying("t1", "w2", "node-a", "az-2");
    time.advance(Duration.ofMillis(GroupShares.FRESH_MILLIS + 1));
    copying("t2", "w3", "node-a", "az-2");
    state.onStatus("t3", status("t3", "w4", "node-a", TaskState.CAUGHT_UP));
    shares.refresh();
    assertThat(shares.sourceShare("node-a", true).workers()).as("w1 and w3; w2 is stale, w4 caught up").isEqualTo(2);
  }

  @Test
  void shouldDivideAZoneLinksBudgetAmongTheWorkersCopyingOverIt() {
    budgets(0, Map.of(), 30 * MIB, Map.of("az-1>az-3", 8 * MIB));
    zones(Map.of("node-a", "az-1", "node-b", "az-2"));
    copying("t1", "w2", "node-a", "az-2");
    copying("t2", "w3", "node-a", "az-2");
    copying("t3", "w3", "node-b", "az-2");
    copying("t4", "w2", "node-a", "az-3");
    shares.refresh();

    assertThat(shares.linkOf("c1", "node-a", "az-2")).contains("az-1>az-2");
    assertThat(shares.linkShare("az-1>az-2", true)).isEqualTo(new GroupShares.Share(10 * MIB, 30 * MIB, 3));
    assertThat(shares.linkShare("az-2>az-2", false)).isEqualTo(new GroupShares.Share(30 * MIB, 30 * MIB, 1));
    assertThat(shares.linkShare("az-1>az-3", false)).isEqualTo(new GroupShares.Share(8 * MIB, 8 * MIB, 1));
    assertThat(shares.sourceShare("node-a", true).limited()).as("no source budget").isFalse();
  }

  @Test
  void shouldGiveTheBucketsTheLowerOfTheWorkersLimitAndItsShareAndFollowChanges() throws InterruptedException {
    Throttles throttles = new Throttles(Limits.unlimited().withRates(0, 5 * MIB), time);
    throttles.shareWith(shares);
    budgets(12 * MIB, Map.of(), 2 * MIB, Map.of());
    zones(Map.of("node-a", "az-1"));
    copying("t1", "w2", "node-a", "az-2");
    throttles.refresh();

    // Sending makes w1 count: node-a's 12 MiB/s between w1 and w2 is 6, above the worker's own 5 MiB/s.
    throttles.send(List.of(1L), n -> n, "node-a", "az-1>az-2", time, (soFar, holder) -> { }, piece -> { });
    throttles.refresh();
    assertThat(throttles.maxBatchBytes("node-a")).isEqualTo(TokenBucket.maxRequestBytes(5 * MIB));
    // Over the link az-1>az-2, w1's share of 2 MiB/s (w2 copies over it too) is lower still.
    assertThat(throttles.maxBatchBytes("node-a", "az-1>az-2")).isEqualTo(TokenBucket.maxRequestBytes(MIB));

    copying("t2", "w3", "node-a", "az-3");
    copying("t3", "w4", "node-a", "az-3");
    throttles.refresh();
    assertThat(throttles.maxBatchBytes("node-a")).as("four workers: 3 MiB/s each")
        .isEqualTo(TokenBucket.maxRequestBytes(3 * MIB));

    budgets(0, Map.of(), 0, Map.of());
    throttles.refresh();
    assertThat(throttles.maxBatchBytes("node-a", "az-1>az-2")).as("budgets lifted: the worker's own limit")
        .isEqualTo(TokenBucket.maxRequestBytes(5 * MIB));
  }

  private void budgets(long perSource, Map<String, Long> sources, long perLink, Map<String, Long> links) {
    state.onBudgets(GROUP, WorkerBudgets.newBuilder().setGroupId(GROUP).setPerSourceBytesPerSecond(perSource)
        .setSourceBytesPerSecond(Map.copyOf(sources)).setPerZoneLinkBytesPerSecond(perLink)
        .setZoneLinkBytesPerSecond(Map.copyOf(links)).setTimestampMillis(time.millis()).build());
  }

  private void zones(Map<String, String> zones) {
    io.ringshift.protocol.RecordSerdes.trustGeneratedClasses();
    List<MemberSpec> members = zones.entrySet().stream().map(e -> MemberSpec.newBuilder().setId(e.getKey())
        .setZone(e.getValue()).setWeight(1.0).setState(MemberSpecState.ACTIVE).build()).toList();
    state.onEpoch(EpochRecord.newBuilder().setClusterId("c1").setEpoch(2).setState(EpochState.PLANNED)
        .setCause(MembershipEvent.newBuilder().setClusterId("c1").setNodeId("node-t").setAction(MembershipAction.JOIN)
            .setZone("az-2").setRequestId("r").setRequestedBy("test").setTimestampMillis(0).build())
        .setMembers(members).setVnodes(8).setReplicas(3).setHashId("h").setPolicyId("p")
        .setMembershipDigest(ByteBuffer.allocate(32)).setTargetChecksum(ByteBuffer.allocate(32))
        .setTimestampMillis(time.millis()).build());
  }

  private void copying(String taskId, String worker, String source, String targetZone) {
    state.onTask(taskId, RangeCopyTask.newBuilder().setTaskId(taskId).setClusterId("c1").setEpoch(2)
        .setKind(TaskKind.COPY).setRangeStart(0).setRangeEnd(1).setSources(List.of(source)).setTarget("node-t")
        .setTargetZone(targetZone).setEstimatedBytes(0).setTimestampMillis(time.millis()).setFenceRequested(false)
        .build());
    state.onStatus(taskId, status(taskId, worker, source, TaskState.COPYING));
  }

  private TaskStatus status(String taskId, String worker, String source, TaskState taskState) {
    return TaskStatus.newBuilder().setTaskId(taskId).setClusterId("c1").setEpoch(2).setState(taskState)
        .setCopiedBytes(0).setWorkerId(worker).setSource(source).setTimestampMillis(time.millis()).build();
  }
}
