package io.ringshift.health.internal;

import static io.ringshift.health.internal.Records.epoch;
import static io.ringshift.health.internal.Records.event;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import org.junit.jupiter.api.Test;

class MembershipViewTest {
  private final MembershipView view = new MembershipView(Records.CLUSTER);

  @Test
  void shouldWatchNobodyBeforeTheClusterHasAnEpoch() {
    view.onEpoch(epoch(1, EpochState.PLANNED, MembershipAction.INIT, "", "a", "b", "c"));

    assertThat(view.activeEpoch()).isEqualTo(-1);
    assertThat(view.members()).containsExactly("a", "b", "c"); // the plan in flight of the first epoch
  }

  @Test
  void shouldWatchTheActiveMembersAndThoseOfThePlanInFlight() {
    view.onEpoch(epoch(1, EpochState.PLANNED, MembershipAction.INIT, "", "a", "b", "c"));
    view.onEpoch(epoch(1, EpochState.READY, MembershipAction.INIT, "", "a", "b", "c"));
    view.onEpoch(epoch(2, EpochState.PLANNED, MembershipAction.DRAIN, "c", "a", "b"));
    view.onEpoch(epoch(1, EpochState.PUBLISHED, MembershipAction.INIT, "", "a", "b", "c"));

    assertThat(view.activeEpoch()).isEqualTo(1);
    assertThat(view.members()).as("the draining node is still watched").containsExactly("a", "b", "c");

    view.onEpoch(epoch(2, EpochState.READY, MembershipAction.DRAIN, "c", "a", "b"));
    view.onEpoch(epoch(3, EpochState.PLANNED, MembershipAction.JOIN, "d", "a", "b", "d"));

    assertThat(view.activeEpoch()).isEqualTo(2);
    assertThat(view.members()).as("drained node gone, joining node watched").containsExactly("a", "b", "d");
  }

  @Test
  void shouldFallBackToThePublishedMembersWhenThePublisherRejectsTheActiveEpoch() {
    view.onEpoch(epoch(1, EpochState.PUBLISHED, MembershipAction.INIT, "", "a", "b", "c"));
    view.onEpoch(epoch(2, EpochState.READY, MembershipAction.JOIN, "d", "a", "b", "c", "d"));
    view.onEpoch(epoch(2, EpochState.REJECTED, MembershipAction.JOIN, "d", "a", "b", "c", "d"));

    assertThat(view.activeEpoch()).isEqualTo(1);
    assertThat(view.members()).containsExactly("a", "b", "c");
  }

  /**
   * Found by the protocol simulation (seed 20261322): the view kept the PLANNED record of an epoch the publisher then
   * rejected (or a re-plan superseded) as the plan in flight, so a refused FAIL of a node that plan removed looked
   * taken, and the FAIL was never sent again. A rejected or superseded plan removes nobody.
   */
  @Test
  void shouldForgetAPlanThatWasRejectedOrSupersededForTheFailsItWouldTake() {
    view.onEpoch(epoch(1, EpochState.PUBLISHED, MembershipAction.INIT, "", "a", "b", "c", "d"));
    view.onMembershipEvent(event(MembershipAction.FAIL, "c", "hm-1"));
    view.onEpoch(epoch(2, EpochState.PLANNED, MembershipAction.FAIL, "c", "a", "b", "d"));
    view.onRejected(Records.CLUSTER, "hm-1");
    assertThat(view.declared("c")).as("the plan in flight removes c anyway").isTrue();

    view.onEpoch(epoch(2, EpochState.REJECTED, MembershipAction.FAIL, "c", "a", "b", "d"));
    assertThat(view.declared("c")).as("rejected: nothing removes c, watch it again").isFalse();

    view.onEpoch(epoch(3, EpochState.PLANNED, MembershipAction.FAIL, "c", "a", "b", "d"));
    assertThat(view.declared("c")).isTrue();
    view.onEpoch(epoch(3, EpochState.SUPERSEDED, MembershipAction.FAIL, "c", "a", "b", "d"));
    assertThat(view.declared("c")).as("superseded: the same").isFalse();
  }

  /** A join cancelled because nobody started the node: watching it would fail a node that never existed. */
  @Test
  void shouldStopWatchingTheJoiningNodeOfACancelledPlan() {
    view.onEpoch(epoch(1, EpochState.PUBLISHED, MembershipAction.INIT, "", "a", "b", "c"));
    view.onEpoch(epoch(2, EpochState.PLANNED, MembershipAction.JOIN, "d", "a", "b", "c", "d"));
    assertThat(view.members()).contains("d");

    view.onEpoch(epoch(2, EpochState.CANCELLED, MembershipAction.CANCEL, "d", "a", "b", "c", "d"));

    assertThat(view.members()).containsExactly("a", "b", "c");
  }

  @Test
  void shouldDeclareANodeWhoseLatestEventIsAFailOrARemoveUntilItJoinsAgain() {
    view.onMembershipEvent(event(MembershipAction.SET_WEIGHT, "a", "r1"));
    view.onMembershipEvent(event(MembershipAction.FAIL, "b", "r2"));
    view.onMembershipEvent(event(MembershipAction.REMOVE, "c", "r3"));

    assertThat(view.declared("a")).isFalse();
    assertThat(view.declared("b")).isTrue();
    assertThat(view.declared("c")).isTrue();
    assertThat(view.hasRead("r2")).isTrue();

    view.onMembershipEvent(event(MembershipAction.JOIN, "b", "r4"));

    assertThat(view.declared("b")).as("a new life after a join").isFalse();
    assertThat(view.hasRead("r2")).as("read, though a later event covers it").isTrue();
    assertThat(view.hasRead("r9")).isFalse();
  }

  @Test
  void shouldIgnoreOtherClusters() {
    MembershipView other = new MembershipView("other");
    other.onEpoch(epoch(1, EpochState.READY, MembershipAction.INIT, "", "a"));
    other.onMembershipEvent(event(MembershipAction.FAIL, "a", "r1"));

    assertThat(other.members()).isEmpty();
    assertThat(other.declared("a")).isFalse();
  }
}
