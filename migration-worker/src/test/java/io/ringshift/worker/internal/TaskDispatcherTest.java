package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.CopyRunTest.HALF;
import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static io.ringshift.worker.internal.Harness.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import io.ringshift.worker.Limits;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How task records become runs: new, repeated, already verified, cancelled, revoked, of an unknown kind. */
class TaskDispatcherTest {
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
  }

  @AfterEach
  void tearDown() throws Exception {
    dispatcher.stopAll(Duration.ofSeconds(5));
    scheduler.close();
    h.close();
    nodes.close();
  }

  @Test
  void shouldRunATaskThroughItsFenceRequestToVerified() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    dispatcher.onTask("p0", task.getTaskId(), task);
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);

    dispatcher.onTask("p0", task.getTaskId(), fenceRequested(task));

    h.awaitState(task.getTaskId(), TaskState.VERIFIED);
    assertThat(dispatcher.knows(task.getTaskId())).isTrue();
  }

  @Test
  void shouldRepublishItsStatusWhenTheTaskIsEmittedAgain() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    dispatcher.onTask("p0", task.getTaskId(), task);
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
    long caughtUp = count(task, TaskState.CAUGHT_UP);

    dispatcher.onTask("p0", task.getTaskId(), task);

    await("CAUGHT_UP published again").atMost(Harness.WAIT)
        .until(() -> count(task, TaskState.CAUGHT_UP) > caughtUp);
  }

  @Test
  void shouldNotRunATaskThatIsAlreadyVerified() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    h.control.onStatus(task.getTaskId(), TaskStatus.newBuilder().setTaskId(task.getTaskId()).setClusterId("c1")
        .setEpoch(3).setState(TaskState.VERIFIED).setCopiedBytes(5).setTimestampMillis(1).build());

    dispatcher.onTask("p0", task.getTaskId(), task);

    assertThat(dispatcher.knows(task.getTaskId())).isFalse();
    assertThat(h.statuses()).isEmpty();
  }

  @Test
  void shouldStopATaskOnATombstoneAndWriteNothingMore() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    dispatcher.onTask("p0", task.getTaskId(), task);
    h.awaitStatus(task.getTaskId(), "copying", s -> s.getState() == TaskState.COPYING);
    TaskRun run = dispatcher.run(task.getTaskId());

    dispatcher.onTask("p0", task.getTaskId(), null);

    h.awaitFinished(run);
    int written = h.statuses(task.getTaskId()).size();
    assertThat(dispatcher.knows(task.getTaskId())).isFalse();
    assertThat(h.statuses(task.getTaskId())).hasSize(written);
    assertThat(h.statuses(task.getTaskId()).get(written - 1).getState()).isEqualTo(TaskState.COPYING);
  }

  @Test
  void shouldWriteALastCheckpointWhenItsPartitionIsRevoked() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    RangeCopyTask elsewhere = copyTask(3, CopyRunTest.OTHER_HALF, List.of("node-a"), "node-t");
    dispatcher.onTask("p0", task.getTaskId(), task);
    dispatcher.onTask("p1", elsewhere.getTaskId(), elsewhere);
    h.awaitStatus(task.getTaskId(), "a checkpoint", s -> s.getLastCopiedToken() != null);
    int before = h.statuses(task.getTaskId()).size();

    dispatcher.stopOwned(Set.of("p0"), true, Duration.ofSeconds(10));

    List<TaskStatus> statuses = h.statuses(task.getTaskId());
    assertThat(statuses).hasSizeGreaterThan(before);
    TaskStatus last = statuses.get(statuses.size() - 1);
    assertThat(last.getState()).isEqualTo(TaskState.COPYING);
    assertThat(last.getLastCopiedToken()).isNotNull();
    assertThat(dispatcher.knows(task.getTaskId())).isFalse();
    assertThat(dispatcher.knows(elsewhere.getTaskId())).as("p1's task keeps running").isTrue();
    assertThat(dispatcher.run(elsewhere.getTaskId()).finished()).isFalse();
  }

  @Test
  void shouldLiftItsFencesOnEverySourceWhenATombstoneDropsAFencedTask() {
    StoreFixture.Node b = nodes.node("node-b");
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask task = fencedAndStuck(List.of("node-a", "node-b"));

    dispatcher.onTask("p0", task.getTaskId(), null);

    h.awaitFinished(run);
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-a takes epoch-1 writes again")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(b.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-b (fenced best effort) too")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(a.fences()).isEmpty();
    assertThat(b.fences()).isEmpty();
    assertThat(nodes.node("node-t").fences()).as("the target's fence is lifted too").isEmpty();
  }

  /**
   * A re-plan that turns a COPY into a REPAIR of the same range (another replica died) drops the one and emits the
   * other at the same epoch: fences are keyed by range and epoch, so lifting the dropped task's fence would lift
   * the live task's on the sources they share.
   */
  @Test
  void shouldKeepAFenceThatALiveTaskOfTheSameEpochAndRangeReadsFrom() {
    StoreFixture.Node b = nodes.node("node-b");
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask task = fencedAndStuck(List.of("node-a", "node-b"));
    RangeCopyTask repair = Harness.task(TaskKind.REPAIR, 3, HALF, List.of("node-a"), "node-u");
    h.control.onTask(repair.getTaskId(), repair);
    h.control.onTask(task.getTaskId(), null);

    dispatcher.onTask("p0", task.getTaskId(), null);

    h.awaitFinished(run);
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-a keeps the fence the repair reads behind")
        .isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(b.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-b is no source of the repair")
        .isInstanceOf(WriteResult.Applied.class);
  }

  @Test
  void shouldKeepTheFenceWhenAFencedTasksPartitionIsRevoked() {
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    fencedAndStuck(List.of("node-a"));

    dispatcher.stopOwned(Set.of("p0"), true, Duration.ofSeconds(10));

    assertThat(run.finished()).isTrue();
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).as("another worker continues the task")
        .isInstanceOf(WriteResult.RetryWithEpoch.class);
  }

  @Test
  void shouldNeitherApplyNorPublishAfterAStopThatTimedOutDuringASlowSourceCall() {
    StoreFixture.Node t = nodes.node("node-t");
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    dispatcher.onTask("p0", id, task);
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(id, TaskState.CAUGHT_UP);
    TaskRun tailing = dispatcher.run(id);
    a.stall();
    await("the tailing task is held in a call to node-a").atMost(Harness.WAIT).until(() -> a.stalledCalls() > 0);
    // Written while the call is held: the feed the call returns has them, ready to be applied.
    List<byte[]> late = CopyRunTest.keysIn(HALF, "late", 20);
    late.forEach(k -> a.delegate.put(k, StoreFixture.bytes("v"), 1));

    dispatcher.stopOwned(Set.of("p0"), true, Duration.ofMillis(200));
    int written = h.statuses(id).size();
    a.unstall();

    h.awaitFinished(tailing);
    assertThat(h.statuses(id)).as("statuses after the stop timed out").hasSize(written);
    assertThat(t.contents(HALF)).as("nothing applied after the stop")
        .doesNotContainKey(new String(late.get(0), java.nio.charset.StandardCharsets.UTF_8))
        .hasSize(a.contents(HALF).size() - late.size());
  }

  @Test
  void shouldLiftTheFencesOnBothSourcesWhenATombstoneDropsAVerifiedTask() {
    StoreFixture.Node b = nodes.node("node-b");
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask task = endedFenced(List.of("node-a", "node-b"), false);
    assertThat(h.control.status(task.getTaskId()).orElseThrow().getState()).isEqualTo(TaskState.VERIFIED);
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).isInstanceOf(WriteResult.RetryWithEpoch.class);

    dispatcher.onTask("p0", task.getTaskId(), null);

    await("the fences on node-a and node-b lifted").atMost(Harness.WAIT)
        .until(() -> a.fences().isEmpty() && b.fences().isEmpty());
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-a takes epoch-1 writes again")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(b.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-b too")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(dispatcher.knows(task.getTaskId())).isFalse();
  }

  /** The same for a task that had ended: a live task of the same epoch and range still reads behind node-a's fence. */
  @Test
  void shouldKeepTheFenceALiveTaskReadsBehindWhenATombstoneDropsAnEndedTask() {
    StoreFixture.Node b = nodes.node("node-b");
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask task = endedFenced(List.of("node-a", "node-b"), false);
    RangeCopyTask repair = task(TaskKind.REPAIR, task.getEpoch(), HALF, List.of("node-a"), "node-u");
    h.control.onTask(repair.getTaskId(), repair);

    dispatcher.onTask("p0", task.getTaskId(), null);

    await("the fence on node-b lifted").atMost(Harness.WAIT).until(() -> b.fences().isEmpty());
    await("the lifting done").atMost(Harness.WAIT).until(() -> !dispatcher.lifting());
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).as("node-a keeps the fence the repair reads behind")
        .isInstanceOf(WriteResult.RetryWithEpoch.class);
  }

  @Test
  void shouldLiftTheFencesOnBothSourcesWhenATombstoneDropsATaskBlockedOnADigestMismatchAfterARestart() {
    StoreFixture.Node b = nodes.node("node-b");
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask task = endedFenced(List.of("node-a", "node-b"), true);
    TaskStatus blocked = h.control.status(task.getTaskId()).orElseThrow();
    assertThat(blocked.getState()).isEqualTo(TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).startsWith("range digests differ");
    // A worker that restarted (or got the partition in a rebalance) sees only the tombstone; the record of the task
    // is the one ControlState kept.
    TaskDispatcher restarted = new TaskDispatcher(h.ctx, scheduler);

    restarted.onTask("p0", task.getTaskId(), null);

    await("the fences on node-a, node-b and the target lifted").atMost(Harness.WAIT)
        .until(() -> a.fences().isEmpty() && b.fences().isEmpty() && nodes.node("node-t").fences().isEmpty());
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).isInstanceOf(WriteResult.Applied.class);
    assertThat(b.put(key, StoreFixture.bytes("old-epoch"), 1)).isInstanceOf(WriteResult.Applied.class);
    restarted.stopAll(Duration.ofSeconds(5));
  }

  /**
   * The tombstone of a task of a published epoch (a worker sweeping the epochs it is done with) lifts nothing: those
   * fences refuse only stale writes now, and a node whose ring lags still needs them.
   */
  @Test
  void shouldLiftNoFenceForTheTombstoneOfATaskOfAPublishedEpoch() {
    StoreFixture.Node b = nodes.node("node-b");
    RangeCopyTask task = endedFenced(List.of("node-a", "node-b"), false);
    h.control.onEpoch(CleanupRunTest.signedPublished(Harness.CLUSTER, task.getEpoch()));

    dispatcher.onTask("p0", task.getTaskId(), null);

    assertThat(dispatcher.lifting()).as("no unfence started").isFalse();
    assertThat(a.fences()).hasSize(1);
    assertThat(b.fences()).hasSize(1);
    assertThat(nodes.node("node-t").fences()).hasSize(1);
  }

  @Test
  void shouldSkipASourceThatDoesNotAnswerAndLiftItsFenceAtALaterSweep() {
    StoreFixture.Node b = nodes.node("node-b");
    RangeCopyTask task = endedFenced(List.of("node-a", "node-b"), false);
    b.down();

    dispatcher.onTask("p0", task.getTaskId(), null);

    await("the fence on node-a lifted").atMost(Harness.WAIT).until(() -> a.fences().isEmpty());
    await("lifting done").atMost(Harness.WAIT).until(() -> !dispatcher.lifting());
    b.up();
    assertThat(b.fences()).as("node-b was down").hasSize(1);
    assertThat(h.ctx.lifts().pending()).isEqualTo(1);

    dispatcher.retryFenceLifts();

    await("the fence on node-b lifted at the next sweep").atMost(Harness.WAIT).until(() -> b.fences().isEmpty());
    assertThat(h.ctx.lifts().pending()).isZero();
  }

  /**
   * Protocol review of e5d1a4e: two tasks of cancelled epoch 3 fenced overlapping ranges on one source (a range gaining
   * two replicas). The dispatcher saw both tombstones before the worker's control view did, so each lift kept node-a's
   * fence for the other task, which still looked live, and nothing tried again: clients of the active epoch were
   * refused on that range for good.
   */
  @Test
  void shouldLiftAFenceTwoDroppedTasksOfOneEpochSharedWhenTheControlViewLagsBehindTheTombstones() {
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask toT = endedFenced(List.of("node-a"), false);
    RangeCopyTask toU = endedFencedTo("node-u", List.of("node-a"));
    assertThat(a.fences()).as("one fence of the range at epoch 3, shared").hasSize(1);

    dispatcher.onTask("p0", toT.getTaskId(), null);
    dispatcher.onTask("p0", toU.getTaskId(), null);

    await("the lifting done").atMost(Harness.WAIT).until(() -> !dispatcher.lifting());
    assertThat(a.fences()).as("node-a's fence, which neither dropped task needs").isEmpty();
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).isInstanceOf(WriteResult.Applied.class);
    assertThat(nodes.node("node-t").fences()).isEmpty();
    assertThat(nodes.node("node-u").fences()).isEmpty();
  }

  /**
   * A fence whose task's tombstone this worker never saw (it reached another worker; or the worker restarted after it):
   * once the epoch can no longer be published (CANCELLED, or REJECTED) and no task of it is
   * live, the sweep lifts it, on every node of the cluster; while a task of the epoch is live, its fence stays.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(value = io.ringshift.schemas.avro.EpochState.class,
      names = {"CANCELLED", "REJECTED"})
  void shouldLiftTheFencesOfAnEpochThatCanNoLongerBePublishedAtTheNextSweep(
      io.ringshift.schemas.avro.EpochState end) {
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    RangeCopyTask task = endedFenced(List.of("node-a"), false);
    h.control.onEpoch(epochRecord(task.getEpoch(), end, "node-a", "node-t"));

    dispatcher.retryFenceLifts();
    await("the pass done").atMost(Harness.WAIT).until(() -> !dispatcher.lifting());
    assertThat(a.fences()).as("its task is still live here (its tombstone is on its way)").hasSize(1);

    h.control.onTask(task.getTaskId(), null); // the control view reads the tombstone; this dispatcher never sees it
    // A later epoch is published meanwhile: the cancelled number stays below it, and its fences must still go (found by
    // the protocol simulation, seed 20261775: the lift took "at most the highest published" for published).
    h.control.onEpoch(CleanupRunTest.signedPublished(Harness.CLUSTER, task.getEpoch() + 2));
    dispatcher.retryFenceLifts();

    await("the fences of " + end + " epoch 3 lifted").atMost(Harness.WAIT)
        .until(() -> a.fences().isEmpty() && nodes.node("node-t").fences().isEmpty());
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).isInstanceOf(WriteResult.Applied.class);
  }

  @Test
  void shouldLiftNothingWhenATombstoneDropsATaskThatNeverFenced() {
    RangeCopyTask task = copyTask(3, HALF, List.of("node-a"), "node-t");
    h.control.onTask(task.getTaskId(), task);
    h.control.onStatus(task.getTaskId(), TaskStatus.newBuilder().setTaskId(task.getTaskId()).setClusterId("c1")
        .setEpoch(3).setState(TaskState.BLOCKED).setBlockedReason("target node-t unreachable").setCopiedBytes(5)
        .setTimestampMillis(1).build());
    // A fence of the range at the same epoch that this task did not set (another plan's): it must stay.
    a.fence(HALF, 3);

    dispatcher.onTask("p0", task.getTaskId(), null);

    assertThat(dispatcher.lifting()).as("no unfence started").isFalse();
    assertThat(a.fences()).hasSize(1);
    assertThat(h.statuses()).isEmpty();
  }

  @Test
  void shouldKeepTheFencesOfAVerifiedTaskWhenItsPartitionIsRevoked() {
    byte[] key = CopyRunTest.keysIn(HALF, "client", 1).get(0);
    endedFenced(List.of("node-a"), false);

    dispatcher.stopOwned(Set.of("p0"), true, Duration.ofSeconds(10));

    assertThat(dispatcher.lifting()).isFalse();
    assertThat(a.fences()).hasSize(1);
    assertThat(a.put(key, StoreFixture.bytes("old-epoch"), 1)).as("the range still moves to its new replicas")
        .isInstanceOf(WriteResult.RetryWithEpoch.class);
  }

  /**
   * A task of p0 whose run fenced its target and sources and ended: VERIFIED; or, when {@code corrupt}, BLOCKED on a
   * digest mismatch (the target loses a key behind the worker's back, and keeps losing it) and then stopped, as by a
   * worker shutting down. ControlState gets the task's records as the worker's reader of ring.tasks would give it.
   */
  private RangeCopyTask endedFenced(List<String> sources, boolean corrupt) {
    RangeCopyTask task = copyTask(3, HALF, sources, "node-t");
    h.control.onTask(task.getTaskId(), task);
    dispatcher.onTask("p0", task.getTaskId(), task);
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
    if (corrupt) {
      byte[] lost = CopyRunTest.keysIn(HALF, "k", 1).get(0);
      nodes.node("node-t").delegate.apply(List.of(Entry.of(lost, null, Version.of(4_000_000_000_000L, 0, 1))));
      nodes.node("node-t").loseApplied(new String(lost, java.nio.charset.StandardCharsets.UTF_8)::equals);
    }
    RangeCopyTask fence = fenceRequested(task);
    h.control.onTask(task.getTaskId(), fence);
    dispatcher.onTask("p0", task.getTaskId(), fence);
    TaskRun fenced = dispatcher.run(task.getTaskId());
    if (corrupt) {
      h.awaitStatus(task.getTaskId(), "blocked on the digests", s -> s.getState() == TaskState.BLOCKED
          && s.getBlockedReason().startsWith("range digests differ"));
      dispatcher.stopAll(Duration.ofSeconds(10));
    }
    h.awaitFinished(fenced);
    assertThat(h.control.status(task.getTaskId()).orElseThrow().getFencePosition()).isNotNull();
    for (String node : concat(sources, "node-t")) {
      assertThat(nodes.node(node).fences()).as("fences on " + node).hasSize(1);
    }
    return task;
  }

  /** A second COPY of the same range at epoch 3, to {@code target}, run to VERIFIED: it fences the same range. */
  private RangeCopyTask endedFencedTo(String target, List<String> sources) {
    nodes.node(target);
    RangeCopyTask task = copyTask(3, HALF, sources, target);
    h.control.onTask(task.getTaskId(), task);
    dispatcher.onTask("p0", task.getTaskId(), task);
    h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
    RangeCopyTask fence = fenceRequested(task);
    h.control.onTask(task.getTaskId(), fence);
    dispatcher.onTask("p0", task.getTaskId(), fence);
    h.awaitFinished(dispatcher.run(task.getTaskId()));
    assertThat(h.control.status(task.getTaskId()).orElseThrow().getState()).isEqualTo(TaskState.VERIFIED);
    return task;
  }

  /** An epoch record of cluster {@link Harness#CLUSTER} naming {@code members} (in one zone). */
  private static io.ringshift.schemas.avro.EpochRecord epochRecord(long epoch, io.ringshift.schemas.avro.EpochState state,
      String... members) {
    List<io.ringshift.schemas.avro.MemberSpec> specs = new java.util.ArrayList<>();
    for (String m : members) {
      specs.add(new io.ringshift.schemas.avro.MemberSpec(m, "az-1", 1.0,
          io.ringshift.schemas.avro.MemberSpecState.ACTIVE, List.of()));
    }
    return io.ringshift.schemas.avro.EpochRecord.newBuilder()
        .setClusterId(Harness.CLUSTER).setEpoch(epoch).setState(state).setMembers(specs).setVnodes(1).setReplicas(1)
        .setCause(io.ringshift.schemas.avro.MembershipEvent.newBuilder().setClusterId(Harness.CLUSTER)
            .setNodeId("node-u").setAction(io.ringshift.schemas.avro.MembershipAction.CANCEL).setRequestId("r")
            .setRequestedBy("test").setTimestampMillis(0).setEpoch(epoch).build())
        .setHashId("h").setPolicyId("p").setMembershipDigest(java.nio.ByteBuffer.allocate(32))
        .setTargetChecksum(java.nio.ByteBuffer.allocate(32)).setTimestampMillis(0).build();
  }

  private static List<String> concat(List<String> nodes, String node) {
    List<String> all = new java.util.ArrayList<>(nodes);
    all.add(node);
    return all;
  }

  private TaskRun run;

  /**
   * A task of p0 that fenced its target and sources and keeps running: its target stopped answering digests before
   * the task could verify.
   */
  private RangeCopyTask fencedAndStuck(List<String> sources) {
    RangeCopyTask task = copyTask(3, HALF, sources, "node-t");
    dispatcher.onTask("p0", task.getTaskId(), task);
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
    nodes.node("node-t").failDigests(true);
    dispatcher.onTask("p0", task.getTaskId(), fenceRequested(task));
    h.awaitState(task.getTaskId(), TaskState.FENCED);
    h.awaitStatus(task.getTaskId(), "blocked on the target after the fence",
        s -> s.getState() == TaskState.BLOCKED && s.getBlockedReason().startsWith("target node-t unreachable"));
    run = dispatcher.run(task.getTaskId());
    assertThat(run.finished()).isFalse();
    assertThat(a.fences()).hasSize(1);
    return task;
  }

  @Test
  void shouldReportATaskOfAnUnknownKindBlocked() {
    RangeCopyTask task = task(TaskKind.UNKNOWN, 3, HALF, List.of("node-a"), "node-t");

    dispatcher.onTask("p0", task.getTaskId(), task);

    TaskStatus blocked = h.awaitState(task.getTaskId(), TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).isEqualTo("task kind unknown to this worker version");
    assertThat(a.contents(HALF)).isNotEmpty();
  }

  private long count(RangeCopyTask task, TaskState state) {
    return h.statuses(task.getTaskId()).stream().filter(s -> s.getState() == state).count();
  }
}
