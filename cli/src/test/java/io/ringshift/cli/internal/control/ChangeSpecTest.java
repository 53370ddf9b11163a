package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.cli.BadInputException;
import io.ringshift.ring.Member;
import io.ringshift.schemas.avro.MembershipAction;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChangeSpecTest {
  private static final List<Member> MEMBERS = List.of(Member.of("a", "z1"), Member.of("b", "z2"));

  @Test
  void shouldApplyEachChangeAsTheOrchestratorDoes() {
    assertThat(new ChangeSpec(MembershipAction.JOIN, "c", "z3", 2.0).applyTo("k", MEMBERS))
        .containsExactly(Member.of("a", "z1"), Member.of("b", "z2"), Member.of("c", "z3", 2.0));
    assertThat(new ChangeSpec(MembershipAction.DRAIN, "a", null, null).applyTo("k", MEMBERS))
        .containsExactly(Member.of("b", "z2"));
    assertThat(new ChangeSpec(MembershipAction.SET_WEIGHT, "b", null, 3.0).applyTo("k", MEMBERS))
        .containsExactly(Member.of("a", "z1"), Member.of("b", "z2", 3.0));
  }

  @Test
  void shouldRefuseWhatTheOrchestratorRefusesWithItsReason() {
    assertThatThrownBy(() -> new ChangeSpec(MembershipAction.JOIN, "a", "z1", null).applyTo("k", MEMBERS))
        .isInstanceOf(BadInputException.class).hasMessage("JOIN of node a: it is already a member of cluster k");
    assertThatThrownBy(() -> new ChangeSpec(MembershipAction.FAIL, "x", null, null).applyTo("k", MEMBERS))
        .hasMessage("FAIL of node x: it is not a member of cluster k");
    assertThatThrownBy(() -> new ChangeSpec(MembershipAction.DRAIN, "a", null, null)
        .applyTo("k", List.of(Member.of("a", "z1"))))
        .hasMessage("DRAIN of node a: it is the last member of cluster k; a cluster needs at least one");
  }

  @Test
  void shouldWriteTheEventTheOrchestratorReads() {
    var event = new ChangeSpec(MembershipAction.JOIN, "c", "z3", null).toEvent("k", "r-1", "alice", 42);

    assertThat(event.getAction()).isEqualTo(MembershipAction.JOIN);
    assertThat(event.getNodeId()).isEqualTo("c");
    assertThat(event.getZone()).isEqualTo("z3");
    assertThat(event.getWeight()).as("absent means the default weight").isNull();
    assertThat(event.getRequestId()).isEqualTo("r-1");
    assertThat(event.getRequestedBy()).isEqualTo("alice");
  }

  @Test
  void shouldDescribeTheChange() {
    assertThat(new ChangeSpec(MembershipAction.JOIN, "c", "z3", null).describe())
        .isEqualTo("JOIN of c (zone z3, weight 1.0)");
    assertThat(new ChangeSpec(MembershipAction.SET_WEIGHT, "c", null, 0.5).describe())
        .isEqualTo("SET_WEIGHT of c (weight 0.5)");
    assertThat(new ChangeSpec(MembershipAction.FAIL, "c", null, null).describe()).isEqualTo("FAIL of c");
    assertThat(ChangeSpec.action("set-weight")).isEqualTo(MembershipAction.SET_WEIGHT);
  }
}
