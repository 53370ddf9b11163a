package io.ringshift.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.orchestrator.MembershipChange.Action;
import io.ringshift.orchestrator.MembershipChange.Applied;
import io.ringshift.orchestrator.MembershipChange.Refused;
import io.ringshift.ring.Member;
import java.util.List;
import org.junit.jupiter.api.Test;

class MembershipChangeTest {
  private static final List<Member> MEMBERS = List.of(Member.of("a", "z1"), Member.of("b", "z2"));

  private static MembershipChange.Outcome apply(Action action, String node, String zone, Double weight) {
    return new MembershipChange(action, node, zone, weight, "req-1").applyTo("c1", MEMBERS);
  }

  @Test
  void shouldAddAJoiningNodeWithWeightOneByDefault() {
    assertThat(apply(Action.JOIN, "c", "z3", null)).isEqualTo(new Applied(List.of(Member.of("a", "z1"),
        Member.of("b", "z2"), Member.of("c", "z3"))));
  }

  @Test
  void refusesTheJoinOfAPresentNode() {
    assertThat(apply(Action.JOIN, "a", "z1", null))
        .isEqualTo(new Refused("JOIN of node a: it is already a member of cluster c1"));
  }

  @Test
  void refusesTheDrainOfAnAbsentNode() {
    assertThat(apply(Action.DRAIN, "x", null, null))
        .isEqualTo(new Refused("DRAIN of node x: it is not a member of cluster c1"));
  }

  @Test
  void refusesABlankNodeIdAndAMissingZone() {
    assertThat(apply(Action.JOIN, " ", "z1", null))
        .isEqualTo(new Refused("node id was \" \"; a node id must not be blank"));
    assertThat(apply(Action.JOIN, "c", null, null))
        .isEqualTo(new Refused("JOIN of node c: zone was missing; a joining node needs a zone"));
  }

  @Test
  void refusesANonPositiveWeightWithTheRingsMessage() {
    assertThat(apply(Action.SET_WEIGHT, "a", null, -1.0)).isInstanceOf(Refused.class)
        .extracting(o -> ((Refused) o).reason()).asString().contains("weight was -1.0").contains("> 0");
    assertThat(apply(Action.JOIN, "c", "z1", Double.NaN)).isInstanceOf(Refused.class);
  }

  @Test
  void refusesRemovingTheLastMember() {
    MembershipChange drain = new MembershipChange(Action.DRAIN, "a", null, null, "r");
    assertThat(drain.applyTo("c1", List.of(Member.of("a", "z1"))))
        .isEqualTo(new Refused("DRAIN of node a: it is the last member of cluster c1; a cluster needs at least one"));
  }

  @Test
  void shouldChangeOnlyTheWeight() {
    assertThat(apply(Action.SET_WEIGHT, "b", null, 2.0))
        .isEqualTo(new Applied(List.of(Member.of("a", "z1"), Member.of("b", "z2", 2.0))));
  }
}
