package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@link RingSnapshot#replica(int, int)} reads the same replicas as the per-range {@link ReplicaSet}s. */
class FlatReplicaTableTest {
  @Test
  void shouldReadTheSameReplicasAsTheReplicaSets() {
    RingBuilder builder = RingSnapshot.builder().vnodes(32).replicas(3);
    for (int i = 0; i < 12; i++) {
      builder.addMember("node-" + i, "az-" + (i % 3));
    }
    RingSnapshot ring = builder.build();

    assertThat(ring.replicasPerRange()).isEqualTo(3);
    for (int r = 0; r < ring.tokenCount(); r++) {
      ReplicaSet set = ring.replicasOfRange(r);
      for (int i = 0; i < set.size(); i++) {
        assertThat(ring.replica(r, i)).as("range %d replica %d", r, i).isSameAs(set.get(i));
      }
    }
  }

  @Test
  void shouldHaveFewerReplicasPerRangeWhenNodesAreShort() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(4).replicas(3).addMember("a", "z1").addMember("b", "z2")
        .build();

    assertThat(ring.replicasPerRange()).isEqualTo(2);
    assertThatThrownBy(() -> ring.replica(0, 2))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("replica 2 of ranges with 2 replicas");
  }
}
