package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Size limits that keep a tiny, corrupt or mistyped membership from exhausting memory, and range fractions. */
class RingLimitsTest {
  @Test
  void rejectsRingsWithMoreTokensThanTheLimit() {
    RingBuilder builder = RingSnapshot.builder().vnodes(1 << 20).replicas(3);
    for (int i = 0; i < 3; i++) {
      builder.addMember("n" + i, "az-" + i);
    }
    assertThatThrownBy(builder::build)
        .isInstanceOf(RingException.class)
        .hasMessageContaining("3145728 tokens")
        .hasMessageContaining("at most 2097152 tokens");
  }

  @Test
  void rejectsReplicaTablesLargerThanTheLimit() {
    RingBuilder builder = RingSnapshot.builder().vnodes(1 << 16).replicas(64);
    for (int i = 0; i < 20; i++) {
      builder.addMember("n" + i, "az-" + i);
    }
    assertThatThrownBy(builder::build)
        .isInstanceOf(RingException.class)
        .hasMessageContaining("1310720 tokens x 20 replicas")
        .hasMessageContaining("at most 8388608");
  }

  @Test
  void shouldGiveTheWholeRingToRangeZeroWhenEveryTokenIsEqual() {
    RingHash constant = new RingHash() {
      @Override
      public String id() {
        return "test/constant";
      }

      @Override
      public long hash(byte[] bytes, int offset, int length) {
        return 42;
      }
    };
    RingSnapshot ring = RingSnapshot.builder().hash(constant).vnodes(4).addMember("a", "z1").addMember("b", "z2")
        .build();

    assertThat(ring.rangeFraction(0)).isEqualTo(1.0);
    double total = 0;
    for (int r = 0; r < ring.tokenCount(); r++) {
      total += ring.rangeFraction(r);
    }
    assertThat(total).isEqualTo(1.0);
  }

  @Test
  void shouldSumRangeFractionsToOne() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(64).addMember("a", "z1").addMember("b", "z2")
        .addMember("c", "z3").build();
    double total = 0;
    for (int r = 0; r < ring.tokenCount(); r++) {
      total += ring.rangeFraction(r);
    }
    assertThat(total).isCloseTo(1.0, within(1e-9));
    assertThat(RingSnapshot.builder().vnodes(1).addMember("solo", "z1").build().rangeFraction(0)).isEqualTo(1.0);
  }

  @Test
  void shouldReportPerNodeIdealMovementForAWeightChange() {
    RingSnapshot from = RingSnapshot.builder().vnodes(128).replicas(1).addMember("a", "z1").addMember("b", "z2")
        .build();
    RingSnapshot to = from.toBuilder().epoch(1).members(java.util.List.of(Member.of("a", "z1", 3.0),
        Member.of("b", "z2"))).build();

    RingDiff diff = from.diffTo(to);

    assertThat(diff.perNode().get("a").idealGained()).isCloseTo(0.25, within(1e-12));
    assertThat(diff.perNode().get("b").idealLost()).isCloseTo(0.25, within(1e-12));
    assertThat(diff.perNode().get("a").gained()).isCloseTo(0.25, within(0.08));
  }
}
