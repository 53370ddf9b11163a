package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The replica walk: distinct nodes, distinct zones while unused zones remain, and honest under-replication. */
class ReplicaPlacementTest {

  @Test
  void shouldTakeNodesPassedOverInTheFirstLapWhenZonesAreFewerThanReplicas() {
    // One token each: whatever the order, some range meets a1 and a2 back to back and must skip the second
    // (its zone is used) before b1 completes the zones; only a second lap reaches it again.
    RingSnapshot ring = RingSnapshot.builder()
        .vnodes(1)
        .replicas(3)
        .addMember("a1", "az-1")
        .addMember("a2", "az-1")
        .addMember("b1", "az-2")
        .build();

    for (int r = 0; r < ring.tokenCount(); r++) {
      assertThat(ring.replicasOfRange(r).ids())
          .as("range %d", r)
          .containsExactlyInAnyOrder("a1", "a2", "b1");
      assertThat(ring.replicasOfRange(r).shortfall()).isEqualTo(UnderReplication.Reason.FEWER_ZONES_THAN_REPLICAS);
    }
  }
}
