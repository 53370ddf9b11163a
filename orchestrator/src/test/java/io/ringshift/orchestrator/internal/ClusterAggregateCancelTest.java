package io.ringshift.orchestrator.internal;

import static io.ringshift.orchestrator.internal.ClusterAggregateTest.change;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.epochs;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.initialised;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.tasks;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.verifyAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.MembershipChange.Action;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Rejection;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskCancelled;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Transition;
import io.ringshift.ring.RingRange;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link ClusterAggregate#onCancel}: what a cancel undoes, and what it refuses. */
class ClusterAggregateCancelTest {
  private static final long BYTES = 1L << 30;

  static MembershipChange cancel(long epoch, String node) {
    return new MembershipChange(Action.CANCEL, node, null, null, "req-cancel-" + epoch, "alice", 0L, epoch);
  }

  private static String rejection(Transition t) {
    assertThat(t.effects()).singleElement().isInstanceOf(Rejection.class);
    return ((Rejection) t.effects().get(0)).reason();
  }

  @Test
  void shouldCancelAJoinInFlightAndGoBackToTheActiveEpoch() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    List<PlannedTask> planned = joining.inFlight().plan().tasks();

    Transition t = joining.onCancel(cancel(2, "node-12"), BYTES);

    assertThat(epochs(t)).singleElement().satisfies(e -> {
      assertThat(e.state()).isEqualTo(EpochEvent.State.CANCELLED);
      assertThat(e.plan().target().epoch()).isEqualTo(2);
      assertThat(e.cause().action()).isEqualTo(Action.CANCEL);
      assertThat(e.previousChecksum()).isEqualTo(joining.active().checksum());
      assertThat(e.reason()).isEqualTo("cancelled by alice (request req-cancel-2): JOIN of node node-12 abandoned, "
          + planned.size() + " task(s) cancelled; cluster c1 stays on epoch 1");
    });
    assertThat(t.effects()).filteredOn(TaskCancelled.class::isInstance).extracting(e -> ((TaskCancelled) e).taskId())
        .containsExactlyInAnyOrderElementsOf(planned.stream().map(PlannedTask::taskId).toList());
    // What the cancelled copies may have written to node-12 is deleted now, by cleanups of the active epoch.
    List<TaskEvent> cleanups = tasks(t);
    assertThat(cleanups).isNotEmpty().allSatisfy(c -> {
      assertThat(c.epoch()).isEqualTo(1);
      assertThat(c.task().kind()).isEqualTo(PlannedTask.Kind.CLEANUP);
      assertThat(c.task().target()).isEqualTo("node-12");
      assertThat(c.task().sources()).isNotEmpty().doesNotContain("node-12");
    });
    Set<RingRange> copied = planned.stream().map(p -> RingRange.of(p.rangeStart(), p.rangeEnd()))
        .collect(Collectors.toSet());
    assertThat(copied).allSatisfy(range -> assertThat(cleanups).anySatisfy(c ->
        assertThat(RingRange.of(c.task().rangeStart(), c.task().rangeEnd()).intersects(range)).isTrue()));

    ClusterAggregate back = t.next();
    assertThat(back.inFlight()).isNull();
    assertThat(back.active()).isEqualTo(joining.active());
    assertThat(back.strays()).as("deleted now, not again at the next READY").isEmpty();
    assertThat(back.nextEpoch()).as("the cancelled number is never used again").isEqualTo(3);

    Transition next = back.onChange(change(Action.JOIN, "node-13", "az-3"), BYTES);
    assertThat(epochs(next)).singleElement().satisfies(e -> {
      assertThat(e.state()).isEqualTo(EpochEvent.State.PLANNED);
      assertThat(e.plan().target().epoch()).isEqualTo(3);
      assertThat(e.previousChecksum()).isEqualTo(joining.active().checksum());
    });
    assertThat(verifyAll(next.next()).next().active().epoch()).isEqualTo(3);
  }

  /**
   * Protocol review of e5d1a4e: DRAIN node-05 (epoch 2), JOIN node-05 again (epoch 3: its tokens are derived from its
   * id, so the same ranges come back), CANCEL epoch 3. The cancel's cleanups of node-05's ranges had the ids of epoch
   * 2's own cleanups of the same ranges: a worker either never ran them (that id was already VERIFIED, so the partial
   * copies stayed on node-05 for good) or replaced the drain cleanup waiting out its grace period with one that
   * deletes 30 s after it is seen.
   */
  @Test
  void shouldGiveTheCleanupsOfACancelIdsOfTheirOwnAndMarkTheirClass() {
    Transition drained = verifyAll(initialised().onChange(change(Action.DRAIN, "node-05", null), BYTES).next());
    Set<String> drainCleanups = tasks(drained).stream().filter(t -> t.task().kind() == PlannedTask.Kind.CLEANUP)
        .map(t -> t.task().taskId()).collect(Collectors.toSet());
    assertThat(drainCleanups).isNotEmpty();
    ClusterAggregate rejoining = drained.next().onChange(change(Action.JOIN, "node-05", "az-3"), BYTES).next();
    assertThat(rejoining.inFlight().plan().target().epoch()).isEqualTo(3);

    Transition t = rejoining.onCancel(cancel(3, "node-05"), BYTES);

    List<TaskEvent> cleanups = tasks(t);
    assertThat(cleanups).isNotEmpty().allSatisfy(c -> {
      assertThat(c.epoch()).isEqualTo(2);
      assertThat(c.task().target()).isEqualTo("node-05");
      assertThat(c.task().cancelledEpoch()).as("the class of the cleanup, said on the task").isEqualTo(3L);
      assertThat(drainCleanups).as("an id of epoch 2's own cleanups").doesNotContain(c.task().taskId());
      assertThat(io.ringshift.protocol.RecordKeys.parseTaskId(c.task().taskId()).cancelledEpoch()).isEqualTo(3L);
    });
    assertThat(tasks(drained)).allSatisfy(c -> assertThat(c.task().cancelledEpoch()).isNull());
  }

  /**
   * Protocol review of e5d1a4e: JOIN node-12 is READY as epoch 2 and DRAIN node-05 in flight behind it; the publisher
   * rejects epoch 2 and the re-plan merges both into epoch 4, whose cause names the JOIN only. A CANCEL naming node-12
   * abandoned the DRAIN too, with nothing to its requester and nothing queued. Now only the named change is abandoned:
   * the other one is planned again on its own, with its own request as the cause, so its requester sees an outcome.
   */
  @Test
  void shouldPlanTheOtherChangesOfAMergedReplanAgainWhenACancelAbandonsOneOfThem() {
    ClusterAggregate state = initialised();
    state = state.onPublished(1, ClusterAggregateTest.initial().checksum(), false, ClusterAggregateTest::initial)
        .next();
    Transition joined = verifyAll(state.onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next());
    EpochEvent joinReady = epochs(joined).stream().filter(e -> e.state() == EpochEvent.State.READY).findFirst()
        .orElseThrow();
    MembershipChange drain = change(Action.DRAIN, "node-05", null);
    ClusterAggregate draining = joined.next().onChange(drain, BYTES).next();
    assertThat(draining.inFlight().cause()).isEqualTo(drain);
    Transition merged = draining.onRejected(2, joinReady.plan().target().checksum(), "TASKS: for the test", BYTES);
    ClusterAggregate replanned = merged.next();
    long epoch = replanned.inFlight().plan().target().epoch();
    assertThat(replanned.inFlight().plan().target().member("node-12")).isNotNull();
    assertThat(replanned.inFlight().plan().target().member("node-05")).as("merged").isNull();

    Transition t = replanned.onCancel(cancel(epoch, "node-12"), BYTES);

    assertThat(t.effects()).filteredOn(Rejection.class::isInstance).isEmpty();
    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .containsExactly("CANCELLED@" + epoch, "PLANNED@" + (epoch + 1));
    assertThat(epochs(t).get(0).reason()).contains("JOIN of node node-12 abandoned",
        "DRAIN of node node-05 (request req-DRAIN-node-05) is planned again on its own");
    EpochEvent again = epochs(t).get(1);
    assertThat(again.cause()).as("the drain's requester sees its own outcome").isEqualTo(drain);
    assertThat(again.plan().target().member("node-05")).isNull();
    assertThat(again.plan().target().member("node-12")).isNull();

    Transition byDrain = replanned.onCancel(cancel(epoch, "node-05"), BYTES);
    assertThat(epochs(byDrain)).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .as("a cancel may name any change the merged plan carries out")
        .containsExactly("CANCELLED@" + epoch, "PLANNED@" + (epoch + 1));
    assertThat(epochs(byDrain).get(1).cause().nodeId()).isEqualTo("node-12");
    assertThat(rejection(replanned.onCancel(cancel(epoch, "node-07"), BYTES))).isEqualTo("CANCEL of epoch " + epoch
        + ": it names node node-07, but the plan carries out JOIN of node node-12 and DRAIN of node node-05 (a "
        + "re-plan after a rejection merged them); a cancel is keyed by the node of the change it cancels");
  }

  /**
   * Found by the protocol simulation (seed 30000057): JOIN node-12 is READY as epoch 2, DRAIN node-05 in flight as
   * epoch 3, CANCEL epoch 3; then the publisher rejects epoch 2. The re-plan took number 3 again, the number of the
   * cancelled epoch: workers, which take a CANCELLED epoch's number for dead for good, dropped its copies and lifted
   * its fences, and the DRAIN never completed. A cancelled number is never used again, also after a rollback.
   */
  @Test
  void shouldNeverReuseACancelledNumberWhenARejectionRollsBack() {
    ClusterAggregate state = initialised();
    state = state.onPublished(1, ClusterAggregateTest.initial().checksum(), false, ClusterAggregateTest::initial)
        .next();
    Transition joined = verifyAll(state.onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next());
    EpochEvent joinReady = epochs(joined).stream().filter(e -> e.state() == EpochEvent.State.READY).findFirst()
        .orElseThrow();
    ClusterAggregate draining = joined.next().onChange(change(Action.DRAIN, "node-05", null), BYTES).next();
    assertThat(draining.inFlight().plan().target().epoch()).isEqualTo(3);
    ClusterAggregate cancelled = draining.onCancel(cancel(3, "node-05"), BYTES).next();
    assertThat(cancelled.inFlight()).isNull();

    Transition rolled = cancelled.onRejected(2, joinReady.plan().target().checksum(), "TASKS: for the test", BYTES);

    assertThat(epochs(rolled)).filteredOn(e -> e.state() == EpochEvent.State.PLANNED)
        .extracting(e -> e.plan().target().epoch()).as("neither 2 (rejected) nor 3 (cancelled)").containsExactly(4L);
    assertThat(rolled.next().inFlight().plan().target().epoch()).isEqualTo(4);
  }

  @Test
  void shouldPlanTheQueuedChangesFromTheActiveEpochAndRefuseThoseThatNeededTheCancelledOne() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    ClusterAggregate queued = joining
        .onChange(new MembershipChange(Action.SET_WEIGHT, "node-12", null, 2.0, "req-weight"), BYTES).next()
        .onChange(change(Action.DRAIN, "node-03", null), BYTES).next();
    assertThat(queued.queue()).hasSize(2);

    Transition t = queued.onCancel(cancel(2, "node-12"), BYTES);

    assertThat(t.effects()).filteredOn(Rejection.class::isInstance).singleElement().satisfies(r -> {
      assertThat(((Rejection) r).origin().requestId()).isEqualTo("req-weight");
      assertThat(((Rejection) r).reason()).contains("node-12", "not a member");
    });
    assertThat(epochs(t)).extracting(e -> e.state() + "@" + e.plan().target().epoch())
        .containsExactly("CANCELLED@2", "PLANNED@3");
    assertThat(t.next().inFlight().plan().target().member("node-03")).isNull();
    assertThat(t.next().inFlight().plan().target().member("node-12")).isNull();
    assertThat(t.next().queue()).isEmpty();
  }

  @Test
  void shouldRefuseToCancelAnEpochThatIsNotInFlight() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();

    assertThat(rejection(joining.onCancel(cancel(1, "node-12"), BYTES))).isEqualTo("CANCEL of epoch 1: it is READY "
        + "or published, and only a plan in flight can be cancelled (the epoch in flight is 2); undo its change with "
        + "the opposite change, for example a drain of a node that joined");
    assertThat(rejection(joining.onCancel(cancel(5, "node-12"), BYTES))).isEqualTo("CANCEL of epoch 5: cluster c1 "
        + "has no plan of that epoch in flight (the epoch in flight is 2)");
    assertThat(rejection(initialised().onCancel(cancel(2, "node-12"), BYTES))).isEqualTo("CANCEL of epoch 2: "
        + "cluster c1 has no plan of that epoch in flight (nothing is in flight; cluster c1 is on epoch 1)");
    assertThat(joining.onCancel(cancel(1, "node-12"), BYTES).next()).isEqualTo(joining);
  }

  @Test
  void shouldRefuseACancelThatNamesAnotherNodeThanTheChangeItCancels() {
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();

    Transition t = joining.onCancel(cancel(2, "node-03"), BYTES);

    assertThat(rejection(t)).isEqualTo("CANCEL of epoch 2: it names node node-03, but the plan carries out JOIN of "
        + "node node-12; a cancel is keyed by the node of the change it cancels");
    assertThat(t.next()).isEqualTo(joining);
  }

  @Test
  void shouldRefuseToCancelTheRepairOfAFailure() {
    ClusterAggregate repairing = initialised().onChange(change(Action.FAIL, "node-03", null), BYTES).next();
    long repair = repairing.inFlight().plan().target().epoch();

    Transition t = repairing.onCancel(cancel(repair, "node-03"), BYTES);

    assertThat(rejection(t)).isEqualTo("CANCEL of epoch " + repair + ": it repairs the failure of node-03; a failure "
        + "cannot be cancelled, because its replicas are rebuilt from the survivors and clients already route "
        + "without the dead node: cancelling would leave its ranges under-replicated");
    assertThat(t.next()).isEqualTo(repairing);

    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    ClusterAggregate joinThenFail = joining.onChange(change(Action.FAIL, "node-04", null), BYTES).next();
    long replanned = joinThenFail.inFlight().plan().target().epoch();
    assertThat(rejection(joinThenFail.onCancel(cancel(replanned, "node-04"), BYTES)))
        .startsWith("CANCEL of epoch " + replanned + ": it repairs the failure of node-04;");
  }

  @Test
  void shouldRefuseACancelOfAnUnknownCluster() {
    assertThat(rejection(ClusterAggregate.uninitialised().onCancel(cancel(2, "node-12"), BYTES)))
        .isEqualTo("CANCEL of epoch 2: the cluster is unknown");
  }
}
