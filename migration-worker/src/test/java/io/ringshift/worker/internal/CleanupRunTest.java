package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.CopyRunTest.HALF;
import static io.ringshift.worker.internal.CopyRunTest.OTHER_HALF;
import static io.ringshift.worker.internal.Harness.CLUSTER;
import static io.ringshift.worker.internal.Harness.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.SigningKey;
import io.ringshift.worker.FakeTime;
import io.ringshift.worker.Limits;
import io.ringshift.worker.NodeStores;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CLEANUP gating: the range is deleted from the old replica only once the epoch is PUBLISHED, the grace period
 * has passed on the injected clock, and every new replica answers with its copy VERIFIED; each unmet condition
 * is named in blockedReason, and nothing is deleted before all are met.
 */
class CleanupRunTest {
  static final long EPOCH = 7;
  static final Duration GRACE = Duration.ofMinutes(10);
  static final Instant PUBLISHED = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node old;
  StoreFixture.Node n4;
  StoreFixture.Node n5;
  FakeTime clock;
  Harness h;
  RangeCopyTask cleanup;
  RangeCopyTask copyTo4;
  RangeCopyTask copyTo5;

  @BeforeEach
  void setUp() {
    nodes = new StoreFixture(dir);
    old = nodes.node("node-old");
    n4 = nodes.node("node-4");
    n5 = nodes.node("node-5");
    old.fill("k", 400, 50);
    clock = FakeTime.stoppedAt(PUBLISHED.minus(Duration.ofMinutes(1)));
    h = new Harness(nodes.stores(), Limits.unlimited(), Harness.FAST, clock, GRACE);
    cleanup = task(TaskKind.CLEANUP, EPOCH, HALF, List.of("node-4", "node-5"), "node-old");
    // The epoch's copies to the new replicas: one overlaps the cleanup range, so does the other (it wraps).
    copyTo4 = task(TaskKind.COPY, EPOCH, RingRange.of(10, 1000), List.of("node-old"), "node-4");
    copyTo5 = task(TaskKind.REPAIR, EPOCH, RingRange.of(-100, 5), List.of("node-old"), "node-5");
    RangeCopyTask elsewhere = task(TaskKind.COPY, EPOCH, RingRange.of(Long.MAX_VALUE, -200), List.of("node-old"),
        "node-4");
    RangeCopyTask otherTarget = task(TaskKind.COPY, EPOCH, RingRange.of(10, 1000), List.of("node-old"), "node-9");
    RangeCopyTask otherEpoch = task(TaskKind.COPY, EPOCH - 1, RingRange.of(10, 1000), List.of("node-old"), "node-4");
    for (RangeCopyTask t : List.of(copyTo4, copyTo5, elsewhere, otherTarget, otherEpoch)) {
      h.control.onTask(t.getTaskId(), t);
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    h.close();
    nodes.close();
  }

  @Test
  void shouldWaitForTheEpochToBePublished() {
    verify(copyTo4, copyTo5);
    assertThat(gate()).isEqualTo("waiting for epoch 7 to be published");
  }

  /**
   * The grace period, and a thousandth more for a clock that runs fast (the protocol simulation's drifting clocks
   * deleted 3 ms inside a 2 min grace period by the publisher's clock).
   */
  @Test
  void shouldWaitOutTheGracePeriodAndAThousandthMoreOnTheInjectedClock() {
    verify(copyTo4, copyTo5);
    clock.advance(Duration.ofMinutes(1));
    publish(); // seen at PUBLISHED: the grace period runs from here
    clock.advance(Duration.ofSeconds(100)); // 1 min 40 s after publishing
    assertThat(gate()).isEqualTo("grace period ends in 8 min 21 s");
    clock.advance(Duration.ofSeconds(500));
    assertThat(gate()).as("10 min: the thousandth to go").isEqualTo("grace period ends in 600 ms");
    clock.advance(Duration.ofMillis(600));
    assertThat(gate()).isNull();
  }

  @Test
  void shouldWaitForEveryNewReplicaToAnswer() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));
    n4.down();
    assertThat(gate()).isEqualTo("node-4 (new replica) unreachable: node-4: connection refused");
  }

  @Test
  void shouldWaitForEveryOverlappingCopyToANewReplicaToBeVerified() {
    verify(copyTo4);
    h.control.onStatus(copyTo5.getTaskId(), status(copyTo5, TaskState.CAUGHT_UP));
    publish();
    clock.advance(GRACE.plusMinutes(1));
    assertThat(gate()).isEqualTo("task " + copyTo5.getTaskId() + " not VERIFIED (CAUGHT_UP)");
    h.control.onStatus(copyTo5.getTaskId(), null);
    assertThat(gate()).isEqualTo("task " + copyTo5.getTaskId() + " not VERIFIED (no status)");
  }

  @Test
  void shouldNameEveryUnmetConditionAtOnceAndAskTheReplicasOnlyAfterTheGracePeriod() {
    publish();
    n5.down();
    // During the grace period the new replicas are not asked: their health counts when the delete happens.
    assertThat(gate()).isEqualTo("grace period ends in 10 min 1 s; task " + copyTo4.getTaskId()
        + " not VERIFIED (no status); task " + copyTo5.getTaskId() + " not VERIFIED (no status)");
    clock.advance(GRACE.plusMinutes(1));
    assertThat(gate()).isEqualTo("node-5 (new replica) unreachable: node-5: connection refused; task "
        + copyTo4.getTaskId() + " not VERIFIED (no status); task " + copyTo5.getTaskId()
        + " not VERIFIED (no status)");
  }

  @Test
  void shouldNeverDeleteFromOneOfTheNewReplicasOrWithoutOne() {
    publish();
    clock.advance(GRACE.plusMinutes(1));
    RangeCopyTask own = task(TaskKind.CLEANUP, EPOCH, HALF, List.of("node-4", "node-old"), "node-old");
    assertThat(gateOf(own)).isEqualTo("node-old is one of the range's new replicas [node-4, node-old]; its copy "
        + "is not deleted");
    RangeCopyTask none = task(TaskKind.CLEANUP, EPOCH, HALF, List.of(), "node-old");
    assertThat(gateOf(none)).isEqualTo("the cleanup names no new replica of the range; nothing is deleted without one");
  }

  @Test
  void shouldDeleteOnlyOnceEveryConditionHoldsThenReportVerified() {
    var before = old.contents(HALF);
    var outside = old.contents(OTHER_HALF);
    assertThat(before).isNotEmpty();
    TaskRun run = h.run(cleanup);
    String id = cleanup.getTaskId();

    assertThat(h.awaitState(id, TaskState.BLOCKED).getBlockedReason()).isEqualTo("waiting for epoch 7 to be published");
    publish();
    h.awaitStatus(id, "waiting out the grace period", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("grace period ends in 10 min 1 s;"));
    clock.advance(GRACE.plusMinutes(2));
    h.awaitStatus(id, "waiting for the copies", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("task "));
    verify(copyTo4);
    n5.down();
    verify(copyTo5);
    h.awaitStatus(id, "waiting for node-5", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("node-5 (new replica) unreachable"));
    assertThat(old.contents(HALF)).as("nothing deleted while any condition waits").isEqualTo(before);

    n5.up();
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
    assertThat(old.contents(HALF)).isEmpty();
    assertThat(old.contents(OTHER_HALF)).as("the rest of the node is kept").isEqualTo(outside);
    assertThat(h.statuses(id)).filteredOn(s -> s.getState() == TaskState.VERIFIED).hasSize(1);
  }

  /**
   * An epoch that moved by transition stages: clients of its second stage still write the old copies, so its cleanup
   * waits, besides everything else, until every live participant routes by the FINAL ring (CONVERGED 3), and says so;
   * CONVERGED 1 is not enough. It then deletes.
   */
  @Test
  void shouldWaitForAStagedEpochsParticipantsToRouteByItsFinalRing() {
    h.control.onEpoch(Harness.epochRecord(EPOCH, EpochState.STAGED, 1));
    h.control.onEpoch(Harness.epochRecord(EPOCH, EpochState.CONVERGED, 1));
    verify(copyTo4, copyTo5);
    publish();
    String waiting = "waiting for every live participant to route by the FINAL ring of epoch 7 (no CONVERGED record "
        + "of stage 3 yet): the epoch moved by transition stages, and clients of its second stage still write the old "
        + "copies";
    assertThat(gate()).as("during the grace period, both").isEqualTo("grace period ends in 10 min 1 s; " + waiting);
    clock.advance(GRACE.plusMinutes(1));
    var before = old.contents(HALF);
    TaskRun run = h.run(cleanup);
    String id = cleanup.getTaskId();

    TaskStatus blocked = h.awaitState(id, TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).isEqualTo(waiting);
    assertThat(WorkerMetrics.BlockReason.of(blocked.getBlockedReason()))
        .isEqualTo(WorkerMetrics.BlockReason.WAITING_FOR_CONVERGENCE);
    assertThat(old.contents(HALF)).as("nothing deleted").isEqualTo(before);

    h.control.onEpoch(Harness.epochRecord(EPOCH, EpochState.CONVERGED, 3));
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
    assertThat(old.contents(HALF)).isEmpty();
  }

  /** An epoch cut over at the fence (or not known to be staged) does not wait for any CONVERGED record. */
  @Test
  void shouldNotWaitForConvergenceWhenTheEpochIsNotStaged() {
    h.control.onEpoch(Harness.epochRecord(EPOCH, EpochState.FENCE_CUTOVER, null));
    h.control.onEpoch(Harness.epochRecord(EPOCH + 1, EpochState.STAGED, 1)); // another epoch's stages
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));

    assertThat(gate()).isNull();
  }

  /** A join followed within the grace period by the drain of the same node hands the ranges back. */
  /**
   * node-5 restarted on an empty data dir under the same id after its copy verified: it answers, but it is another
   * store, and deleting the old copy would leave the range with one replica fewer than the ring says. The cleanup
   * used to delete.
   */
  @Test
  void shouldNotDeleteWhileANewReplicaIsAnotherStoreThanTheOneItsTaskVerified() {
    String n4Now = n4.info().incarnation();
    String n5Now = n5.info().incarnation();
    h.control.onStatus(copyTo4.getTaskId(), verifiedAs(copyTo4, n4Now));
    h.control.onStatus(copyTo5.getTaskId(), verifiedAs(copyTo5, "the-store-before-the-wipe"));
    publish();
    clock.advance(GRACE.plusMinutes(1));

    assertThat(gate()).isEqualTo("node-5 (new replica) is not the store its task " + copyTo5.getTaskId()
        + " verified: its incarnation is " + n5Now + ", the task verified the-store-before-the-wipe (restarted on an "
        + "empty data dir?); the old copies stay: declare the node failed to repair it");
    h.control.onStatus(copyTo5.getTaskId(), verifiedAs(copyTo5, n5Now));
    assertThat(gate()).isNull();
  }

  /**
   * The cleanup's target routes by a later epoch (a FAIL published meanwhile) that makes it a replica of the range
   * again: the node refuses the delete, the task FAILS with the node's reason, and the keys stay. The cleanup used
   * to delete them whatever the node's ring said.
   */
  @Test
  void shouldFailWithoutDeletingWhenTheTargetsOwnRingMakesItAReplicaOfTheRangeAgain() {
    io.ringshift.ring.RingSnapshot later = io.ringshift.ring.RingSnapshot.builder().clusterId(CLUSTER)
        .epoch(EPOCH + 1).vnodes(16).replicas(3).members(List.of(io.ringshift.ring.Member.of("node-x", "az-1"),
            io.ringshift.ring.Member.of("node-4", "az-2"), io.ringshift.ring.Member.of("node-5", "az-3"))).build();
    StoreFixture.Node x = nodes.nodeBehind("node-x",
        store -> io.ringshift.storage.OwnershipCheckedStore.wrap(store, () -> later));
    x.fill("k", 400, 50);
    var before = x.contents(HALF);
    RangeCopyTask fromX = task(TaskKind.CLEANUP, EPOCH, HALF, List.of("node-4", "node-5"), "node-x");
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));

    TaskRun run = h.run(fromX);
    TaskStatus failed = h.awaitState(fromX.getTaskId(), TaskState.VERIFIED);
    h.awaitFinished(run);

    assertThat(failed.getError()).startsWith("nothing deleted: node-x refused the delete: range delete of " + HALF + " for epoch 7 "
        + "refused, nothing deleted: this node (node-x) routes by the ring of epoch 8, in which it is a replica of ");
    assertThat(x.contents(HALF)).as("nothing deleted").isEqualTo(before);
  }

  private static TaskStatus verifiedAs(RangeCopyTask t, String incarnation) {
    return TaskStatus.newBuilder(status(t, TaskState.VERIFIED)).setTargetIncarnation(incarnation).build();
  }

  /**
   * Found by the fault-injection suite (ChaosIT, seed 5408179149318937766): a weight change took ranges from node-09,
   * a later one gave part of them back, and the first epoch's cleanups deleted nothing at all, leaving 29 keys on
   * node-09 that no ring placed there. Only the part a later epoch gives back stays.
   */
  @Test
  void shouldDeleteAllButWhatALaterEpochGivesBackToTheTarget() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));
    RangeCopyTask unrelated = task(TaskKind.COPY, EPOCH + 1, OTHER_HALF, List.of("node-4"), "node-old");
    RangeCopyTask earlier = task(TaskKind.COPY, EPOCH - 1, HALF, List.of("node-4"), "node-old");
    RingRange firstQuarter = RingRange.of(HALF.start(), HALF.start() + ((HALF.end() - HALF.start()) >>> 1));
    RingRange secondQuarter = RingRange.of(firstQuarter.end(), HALF.end());
    RangeCopyTask back = task(TaskKind.COPY, EPOCH + 1, firstQuarter, List.of("node-4"), "node-old");
    h.control.onTask(unrelated.getTaskId(), unrelated);
    h.control.onTask(earlier.getTaskId(), earlier);
    assertThat(new CleanupRun(cleanup, null, h.ctx).handedBack()).as("no later epoch overlaps").isNull();
    h.control.onTask(back.getTaskId(), back);
    var kept = old.contents(firstQuarter);
    var outside = old.contents(OTHER_HALF);
    assertThat(kept).isNotEmpty();
    assertThat(old.contents(secondQuarter)).isNotEmpty();

    h.awaitFinished(h.run(cleanup));

    h.awaitState(cleanup.getTaskId(), TaskState.VERIFIED);
    assertThat(old.contents(firstQuarter)).as("given back by epoch 8").isEqualTo(kept);
    assertThat(old.contents(secondQuarter)).as("deleted").isEmpty();
    assertThat(old.contents(OTHER_HALF)).isEqualTo(outside);
  }

  /**
   * Found by the protocol simulation (seed 20261349): a cancel's cleanup deletes what the cancelled tasks copied to a
   * node, 30 s after it is seen; where that node had just lost the range in a published epoch, it also holds the old
   * copy clients of the previous epoch may still read, and deleted it 50 s after publication, inside the grace period.
   * What an ordinary cleanup of the same node still waits to delete is left to it.
   */
  @Test
  void shouldLeaveToAnOrdinaryCleanupOfTheSameNodeWhatItStillWaitsToDelete() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));
    RingRange firstQuarter = RingRange.of(HALF.start(), HALF.start() + ((HALF.end() - HALF.start()) >>> 1));
    RingRange secondQuarter = RingRange.of(firstQuarter.end(), HALF.end());
    RangeCopyTask waiting = task(TaskKind.CLEANUP, EPOCH + 1, firstQuarter, List.of("node-4"), "node-old");
    h.control.onTask(waiting.getTaskId(), waiting);
    RangeCopyTask afterCancel = RangeCopyTask.newBuilder(cleanup).setCancelledEpoch(EPOCH + 2).build();
    var kept = old.contents(firstQuarter);
    assertThat(kept).isNotEmpty();
    assertThat(old.contents(secondQuarter)).isNotEmpty();

    TaskRun run = h.run(afterCancel);
    h.awaitStatus(cleanup.getTaskId(), "waiting for the cancelled copies to settle",
        st -> st.getBlockedReason() != null && st.getBlockedReason().startsWith("the cancelled copies settle"));
    clock.advance(CleanupRun.CANCELLED_COPY_SETTLE.plusSeconds(1));
    h.awaitFinished(run);

    h.awaitState(cleanup.getTaskId(), TaskState.VERIFIED);
    assertThat(old.contents(firstQuarter)).as("left to the ordinary cleanup of epoch 8").isEqualTo(kept);
    assertThat(old.contents(secondQuarter)).as("deleted").isEmpty();
  }

  /**
   * Found by the protocol simulation (seed 20261769): a worker cut off from Kafka kept running a cleanup on a view that
   * aged; a later epoch had given the range back to the node and taken it away again seconds before, which the view did
   * not show, and the delete removed that epoch's copy inside its grace period. A cleanup deletes only on a fresh view.
   */
  @Test
  void shouldNotDeleteOnAViewOfTheControlPlaneThatHasAged() {
    verify(copyTo4, copyTo5);
    publish();
    h.control.viewCaughtUpAt(clock.millis());
    clock.advance(GRACE.plusMinutes(1));

    assertThat(gate()).isEqualTo("this worker's view of the control plane is 11 min old (is it cut off from Kafka?); a "
        + "cleanup deletes only on a view at most 15 s old");

    h.control.viewCaughtUpAt(clock.millis() - 15_000);
    assertThat(gate()).as("caught up 15 s ago").isNull();
  }

  @Test
  void shouldDeleteNothingWhenLaterEpochsGiveTheWholeRangeBack() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));
    RingRange firstQuarter = RingRange.of(HALF.start(), HALF.start() + ((HALF.end() - HALF.start()) >>> 1));
    RangeCopyTask back = task(TaskKind.COPY, EPOCH + 1, RingRange.of(HALF.start() - 5, firstQuarter.end()),
        List.of("node-4"), "node-old");
    RangeCopyTask rest = task(TaskKind.REPAIR, EPOCH + 2, RingRange.of(firstQuarter.end() - 9, HALF.end() + 3),
        List.of("node-4"), "node-old");
    h.control.onTask(back.getTaskId(), back);
    h.control.onTask(rest.getTaskId(), rest);
    var before = old.contents(HALF);

    h.awaitFinished(h.run(cleanup));

    TaskStatus last = h.awaitState(cleanup.getTaskId(), TaskState.VERIFIED);
    assertThat(last.getError()).startsWith("nothing deleted: epoch ").contains("gives the range back to node-old")
        .endsWith(" and 1 more tasks");
    assertThat(old.contents(HALF)).as("nothing deleted").isEqualTo(before);
  }

  @Test
  void shouldSubtractRangesAcrossTheTopOfTheRing() {
    RingRange wrapping = RingRange.of(-100, 100);
    assertThat(CleanupRun.minus(wrapping, List.of(RingRange.of(-50, 50))))
        .containsExactly(RingRange.of(-100, -50), RingRange.of(50, 100));
    assertThat(CleanupRun.minus(wrapping, List.of(RingRange.of(-200, -90), RingRange.of(90, 300))))
        .containsExactly(RingRange.of(-90, 90));
    assertThat(CleanupRun.minus(wrapping, List.of(RingRange.of(200, 300)))).containsExactly(wrapping);
    assertThat(CleanupRun.minus(wrapping, List.of(RingRange.whole()))).isEmpty();
    assertThat(CleanupRun.minus(RingRange.whole(), List.of(RingRange.of(10, 20))))
        .containsExactly(RingRange.of(0, 10), RingRange.of(20, 0));
    assertThat(CleanupRun.minus(RingRange.of(5, 5), List.of(RingRange.of(10, 20))))
        .containsExactly(RingRange.of(5, 10), RingRange.of(20, 5));
  }

  /**
   * Found by the fault-injection suite (ChaosIT, seed -1034082104627984221): a cleanup of node-07 waited for good for
   * the node, which had been declared failed (killed for good) before the cleanup could run.
   */
  @Test
  void shouldEndACleanupOfANodeDeclaredFailedWithoutWaitingForIt() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));
    EpochRecord failure = EpochRecord.newBuilder(unsignedPublished(CLUSTER, EPOCH + 1))
        .setCause(MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId("node-old")
            .setAction(MembershipAction.FAIL).setRequestId("f").setRequestedBy("test").setTimestampMillis(0).build())
        .build();
    h.control.onEpoch(EpochRecords.signedBy(failure, Harness.PUBLISHER));
    var before = old.contents(HALF);

    h.awaitFinished(h.run(cleanup));

    TaskStatus last = h.awaitState(cleanup.getTaskId(), TaskState.VERIFIED);
    assertThat(last.getError()).isEqualTo("nothing deleted: node-old was declared failed and removed by published "
        + "epoch 8; its data is written off");
    assertThat(old.contents(HALF)).isEqualTo(before);
    // Joined again later: its cleanups run again.
    h.control.onEpoch(EpochRecords.signedBy(EpochRecord.newBuilder(unsignedPublished(CLUSTER, EPOCH + 2))
        .setMembers(List.of(new io.ringshift.schemas.avro.MemberSpec("node-old", "az-1", 1.0,
            io.ringshift.schemas.avro.MemberSpecState.ACTIVE, java.util.List.of()))).build(), Harness.PUBLISHER));
    assertThat(h.control.failedIn(CLUSTER, "node-old")).isEmpty();
  }

  /**
   * Found by the protocol simulation (seed 50006913): node-old failed in epoch 5, joined again in epoch 6 and lost the
   * range in epoch 7. The worker, which had not read epoch 6's publication yet, took the failure for the end of the
   * node's current life: the cleanup of epoch 7 ended at once, "written off", and deleted nothing. The copy stayed, and
   * a cancel's cleanup of the range deleted it later, inside epoch 7's grace period. A failure writes off only what the
   * node held from then on: one older than the cleanup's epoch is of an earlier life.
   */
  @Test
  void shouldCleanUpANodeWhoseFailureIsOlderThanTheCleanupsEpoch() {
    verify(copyTo4, copyTo5);
    EpochRecord failure = EpochRecord.newBuilder(unsignedPublished(CLUSTER, EPOCH - 2))
        .setCause(MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId("node-old")
            .setAction(MembershipAction.FAIL).setRequestId("f").setRequestedBy("test").setTimestampMillis(0).build())
        .build();
    h.control.onEpoch(EpochRecords.signedBy(failure, Harness.PUBLISHER));
    publish();
    clock.advance(GRACE.plusMinutes(1));

    h.awaitFinished(h.run(cleanup));

    TaskStatus last = h.awaitState(cleanup.getTaskId(), TaskState.VERIFIED);
    assertThat(last.getError()).isNull();
    assertThat(old.contents(HALF)).isEmpty();
  }

  @Test
  void shouldBeIdempotentWhenRunAgain() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(1));
    var outside = old.contents(OTHER_HALF);
    h.awaitFinished(h.run(cleanup));
    h.control.onStatus(cleanup.getTaskId(), null); // as if the VERIFIED status were lost

    h.awaitFinished(h.run(cleanup));

    assertThat(h.statuses(cleanup.getTaskId())).filteredOn(s -> s.getState() == TaskState.VERIFIED).hasSize(2);
    assertThat(old.contents(HALF)).isEmpty();
    assertThat(old.contents(OTHER_HALF)).isEqualTo(outside);
  }

  @Test
  void rejectsAnUnsignedPublishedRecordWithAnOldTimestampForTheCleanupGate() throws Exception {
    verify(copyTo4, copyTo5);
    // A forger writes a PUBLISHED record dated long ago, so that the grace period seems over at once.
    h.control.onEpoch(EpochRecord.newBuilder(publishedRecord())
        .setTimestampMillis(PUBLISHED.minus(Duration.ofDays(30)).toEpochMilli()).build());
    var before = old.contents(HALF);

    assertThat(gate()).isEqualTo("waiting for epoch 7 to be published");
    TaskRun run = h.run(cleanup);
    h.awaitStatus(cleanup.getTaskId(), "blocked on the gate", s -> s.getState() == TaskState.BLOCKED);
    run.stop(TaskControl.Stop.CANCEL);
    h.awaitFinished(run);
    assertThat(old.contents(HALF)).isEqualTo(before);
  }

  @Test
  void rejectsAPublishedRecordSignedByAKeyTheWorkerDoesNotTrust() {
    verify(copyTo4, copyTo5);
    h.control.onEpoch(EpochRecords.signedBy(publishedRecord(), SigningKey.generate()));

    assertThat(gate()).isEqualTo("waiting for epoch 7 to be published");
  }

  @Test
  void shouldTimeTheGracePeriodFromWhenTheWorkerSawTheRecordNotFromItsTimestamp() {
    verify(copyTo4, copyTo5);
    h.control.onEpoch(EpochRecords.signedBy(EpochRecord.newBuilder(publishedRecord())
        .setTimestampMillis(PUBLISHED.minus(Duration.ofDays(30)).toEpochMilli()).build(), Harness.PUBLISHER));

    assertThat(gate()).isEqualTo("grace period ends in 10 min 1 s");
  }

  /**
   * Found by the fault-injection suite (ChaosIT, seed 8207477040424177854): a new replica failed after the epoch was
   * published, and the cleanup waited for it for good. A later published epoch without it leaves it out of the wait;
   * without any of the new replicas the old copy stays.
   */
  @Test
  void shouldLeaveOutANewReplicaALaterPublishedEpochNoLongerHasAndKeepTheCopyWhenNoneIsLeft() {
    verify(copyTo4);
    h.control.onStatus(copyTo5.getTaskId(), status(copyTo5, TaskState.COPYING));
    publish();
    clock.advance(GRACE.plusMinutes(1));
    n5.down();
    assertThat(gate()).contains("node-5 (new replica) unreachable", "not VERIFIED (COPYING)");

    h.control.onEpoch(EpochRecords.signedBy(publishedWith(EPOCH + 1, "node-4", "node-old"), Harness.PUBLISHER));
    assertThat(gate()).as("node-5 failed: the copy on node-4 is enough").isNull();

    h.control.onEpoch(EpochRecords.signedBy(publishedWith(EPOCH + 2, "node-old", "node-9"), Harness.PUBLISHER));
    assertThat(gate()).isEqualTo("every new replica of the range [node-4, node-5] has left the ring since (published "
        + "epoch 9): the old copy on node-old stays");
  }

  /**
   * A cancel plans CLEANUP tasks of the active epoch, long published, for what the cancelled copies wrote: they wait
   * for the cancelled runs to stop ({@link CleanupRun#CANCELLED_COPY_SETTLE} from when the worker saw the task), not
   * for the epoch's grace period, which is long over.
   */
  @Test
  void shouldWaitOnlyForTheCancelledCopiesToSettleWhenTheTaskNamesTheCancelledEpoch() {
    verify(copyTo4, copyTo5);
    publish();
    clock.advance(GRACE.plusMinutes(5));
    RangeCopyTask afterCancel = RangeCopyTask.newBuilder(cleanup).setCancelledEpoch(EPOCH + 1).build();
    CleanupRun run = new CleanupRun(afterCancel, null, h.ctx);
    assertThat(run.gate()).isEqualTo("the cancelled copies settle in 30 s");
    clock.advance(CleanupRun.CANCELLED_COPY_SETTLE.minusSeconds(1));
    assertThat(run.gate()).isEqualTo("the cancelled copies settle in 1 s");
    clock.advance(Duration.ofSeconds(1));
    assertThat(run.gate()).isNull();
    assertThat(gate()).as("a cleanup planned before the epoch was published waits for its grace only").isNull();
  }

  /**
   * Protocol review of e5d1a4e: the worker told a cancel's cleanup from an ordinary one by comparing the task's
   * timestamp (a READY epoch's cleanups carry the Kafka timestamp of the last VERIFIED status, a worker's clock) with
   * the PUBLISHED record's (the publisher's clock). A worker clock a second ahead made an ordinary cleanup look like a
   * cancel's, and the old replica was deleted 30 s after publication, under clients still routing by the previous ring.
   */
  @Test
  void shouldWaitOutTheGracePeriodWhateverClocksStampedTheTaskAndThePublishedRecord() {
    verify(copyTo4, copyTo5);
    clock.advance(Duration.ofMinutes(1));
    publish(); // the publisher's clock stamps PUBLISHED
    RangeCopyTask stampedAhead = RangeCopyTask.newBuilder(cleanup)
        .setTimestampMillis(PUBLISHED.plusSeconds(1).toEpochMilli()).build(); // a worker's clock, a second ahead
    RangeCopyTask stampedLongAfter = RangeCopyTask.newBuilder(cleanup)
        .setTimestampMillis(PUBLISHED.plus(Duration.ofDays(1)).toEpochMilli()).build();
    CleanupRun ahead = new CleanupRun(stampedAhead, null, h.ctx);
    CleanupRun longAfter = new CleanupRun(stampedLongAfter, null, h.ctx);

    clock.advance(CleanupRun.CANCELLED_COPY_SETTLE.plusSeconds(1));

    assertThat(ahead.gate()).isEqualTo("grace period ends in 9 min 30 s");
    assertThat(longAfter.gate()).isEqualTo("grace period ends in 9 min 30 s");
    clock.advance(GRACE);
    assertThat(ahead.gate()).isNull();
  }

  /** A re-emitted record cannot turn a cleanup under way into one of another class (or back). */
  @Test
  void shouldKeepTheClassOfACleanupWhenARecordOfTheSameIdSaysOtherwise() {
    verify(copyTo4, copyTo5);
    clock.advance(Duration.ofMinutes(1));
    publish();
    CleanupRun ordinary = new CleanupRun(cleanup, null, h.ctx);
    ordinary.update(RangeCopyTask.newBuilder(cleanup).setCancelledEpoch(EPOCH + 1).build());
    clock.advance(CleanupRun.CANCELLED_COPY_SETTLE.plusSeconds(1));

    assertThat(ordinary.gate()).isEqualTo("grace period ends in 9 min 30 s");
  }

  /**
   * The cancel of a join of a node nobody started (not in the node directory): its copies never reached it, and a
   * cleanup that waited for it to answer would stay BLOCKED for good.
   */
  @Test
  void shouldDeleteNothingFromATargetThatIsNotInTheDirectoryNorInThePublishedRing() throws Exception {
    try (Harness known = new Harness(NodeStores.of(java.util.Map.of("node-4", n4, "node-5", n5, "node-old", old)),
        Limits.unlimited(), Harness.FAST, clock, GRACE)) {
      known.control.onEpoch(EpochRecords.signedBy(publishedWith(EPOCH, "node-4", "node-5", "node-old"),
          Harness.PUBLISHER));
      RangeCopyTask toNobody = task(TaskKind.CLEANUP, EPOCH, HALF, List.of("node-4", "node-5"), "node-07");

      known.awaitFinished(known.run(toNobody));

      TaskStatus last = known.awaitState(toNobody.getTaskId(), TaskState.VERIFIED);
      assertThat(last.getError()).isEqualTo("nothing deleted: node-07 is not in this worker's node directory and "
          + "published epoch 7 does not place it, so no copy can have reached it");
    }
  }

  private static EpochRecord publishedWith(long epoch, String... members) {
    List<io.ringshift.schemas.avro.MemberSpec> specs = new java.util.ArrayList<>();
    for (String m : members) {
      specs.add(new io.ringshift.schemas.avro.MemberSpec(m, "az-1", 1.0,
          io.ringshift.schemas.avro.MemberSpecState.ACTIVE, java.util.List.of()));
    }
    return EpochRecord.newBuilder(unsignedPublished(CLUSTER, epoch)).setMembers(specs).build();
  }

  private String gate() {
    return gateOf(cleanup);
  }

  private String gateOf(RangeCopyTask task) {
    return new CleanupRun(task, null, h.ctx).gate();
  }

  private void publish() {
    h.control.onEpoch(EpochRecords.signedBy(publishedRecord(), Harness.PUBLISHER));
  }

  private static EpochRecord publishedRecord() {
    return unsignedPublished(CLUSTER, EPOCH);
  }

  /** A PUBLISHED record of {@code epoch}, signed by the key the harness trusts. */
  static EpochRecord signedPublished(String cluster, long epoch) {
    return EpochRecords.signedBy(unsignedPublished(cluster, epoch), Harness.PUBLISHER);
  }

  private static EpochRecord unsignedPublished(String cluster, long epoch) {
    return EpochRecord.newBuilder()
        .setClusterId(cluster).setEpoch(epoch).setState(EpochState.PUBLISHED)
        .setCause(MembershipEvent.newBuilder().setClusterId(cluster).setNodeId("node-4")
            .setAction(MembershipAction.JOIN).setZone("az-1").setRequestId("r").setRequestedBy("test")
            .setTimestampMillis(0).build())
        .setMembers(List.of()).setVnodes(1).setReplicas(1).setHashId("h").setPolicyId("p")
        .setMembershipDigest(ByteBuffer.allocate(32)).setTargetChecksum(ByteBuffer.allocate(32))
        .setTimestampMillis(PUBLISHED.toEpochMilli())
        .build();
  }

  private void verify(RangeCopyTask... tasks) {
    for (RangeCopyTask t : tasks) {
      h.control.onStatus(t.getTaskId(), status(t, TaskState.VERIFIED));
    }
  }

  private static TaskStatus status(RangeCopyTask t, TaskState state) {
    return TaskStatus.newBuilder().setTaskId(t.getTaskId()).setClusterId(t.getClusterId()).setEpoch(t.getEpoch())
        .setState(state).setCopiedBytes(0).setTimestampMillis(0).build();
  }
}
