package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Skewed rings take the replica planner's shortcuts (skipping a node's run of tokens, jumping to the next
 * token of an unused zone); they must give exactly the placement of the plain walk, which the reference model
 * implements literally.
 */
class SkewedRingTest {
  @Test
  void shouldPlaceLikeThePlainWalkWhenOneZoneHasFewTokens() {
    RingBuilder builder = RingSnapshot.builder().vnodes(64).replicas(3);
    for (int i = 0; i < 40; i++) {
      builder.addMember("big-" + i, "az-" + (i % 2 + 1));
    }
    builder.addMember("rare-0", "az-rare", 0.02); // one token in its own zone: walks cross most of the ring
    RingSnapshot ring = builder.build();

    RingInvariants.checkSnapshot(ring, new Random(7));
    assertThat(ring.replicasOfRange(0).size()).isEqualTo(3);
    for (int r = 0; r < ring.tokenCount(); r++) {
      assertThat(ring.replicasOfRange(r).contains("rare-0")).as("range %d", r).isTrue();
    }
  }

  @Test
  void shouldPlaceLikeThePlainWalkWhenOneNodeOwnsLongRuns() {
    RingSnapshot ring = RingSnapshot.builder()
        .vnodes(16)
        .replicas(3)
        .addMember("heavy", "az-1", 400.0)
        .addMember("light-a", "az-1")
        .addMember("light-b", "az-2")
        .addMember("light-c", "az-2")
        .build();

    RingInvariants.checkSnapshot(ring, new Random(11));
    assertThat(ring.tokenCount()).isEqualTo(6400 + 48);
  }

  @Test
  void shouldPlaceLikeThePlainWalkWithFewerZonesThanReplicas() {
    RingSnapshot ring = RingSnapshot.builder()
        .vnodes(8)
        .replicas(4)
        .addMember("a1", "az-1", 50.0)
        .addMember("a2", "az-1")
        .addMember("b1", "az-2", 0.125)
        .build();

    RingInvariants.checkSnapshot(ring, new Random(13));
    for (int r = 0; r < ring.tokenCount(); r++) {
      assertThat(ring.replicasOfRange(r).size()).isEqualTo(3);
    }
  }
}
