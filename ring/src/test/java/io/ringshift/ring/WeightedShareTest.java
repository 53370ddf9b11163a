package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Weights buy tokens, {@code round(weight * V)}, and tokens buy keyspace. */
class WeightedShareTest {
  private static final int KEYS = 200_000;

  private static RingSnapshot oneTwoFour() {
    return RingSnapshot.builder()
        .vnodes(256)
        .replicas(1)
        .addMember("node-1", "az-1", 1.0)
        .addMember("node-2", "az-2", 2.0)
        .addMember("node-4", "az-3", 4.0)
        .build();
  }

  @Test
  void shouldGiveWeightsOneTwoFourTheirTokenCounts() {
    RingSnapshot ring = oneTwoFour();

    assertThat(ring.tokenCount(ring.memberIndex("node-1"))).isEqualTo(256);
    assertThat(ring.tokenCount(ring.memberIndex("node-2"))).isEqualTo(512);
    assertThat(ring.tokenCount(ring.memberIndex("node-4"))).isEqualTo(1024);
  }

  @Test
  void shouldRealiseWeightsOneTwoFourWithinTenPercentByKeyspaceFraction() {
    RingSnapshot ring = oneTwoFour();
    Map<String, Double> owned = new HashMap<>();
    for (int r = 0; r < ring.tokenCount(); r++) {
      // A token equal to its predecessor closes an empty range; (t, t] would otherwise read as the whole ring.
      double width = ring.rangeStart(r) == ring.rangeEnd(r) ? 0
          : RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)).fraction();
      owned.merge(ring.replicasOfRange(r).primary().id(), width, Double::sum);
    }

    assertThat(owned.values().stream().mapToDouble(Double::doubleValue).sum()).isCloseTo(1.0, within(1e-9));
    assertShares(owned);
  }

  @Test
  void shouldRealiseWeightsOneTwoFourWithinTenPercentBySampledKeys() {
    RingSnapshot ring = oneTwoFour();
    Map<String, Double> owned = new HashMap<>();
    for (int i = 0; i < KEYS; i++) {
      owned.merge(ring.ownerOf("key-" + i).id(), 1.0 / KEYS, Double::sum);
    }

    assertShares(owned);
  }

  private static void assertShares(Map<String, Double> owned) {
    System.out.printf("1:2:4 at V=256: node-1 %.4f (1/7 = %.4f), node-2 %.4f (2/7 = %.4f), node-4 %.4f (4/7 = %.4f)%n",
        owned.get("node-1"), 1 / 7.0, owned.get("node-2"), 2 / 7.0, owned.get("node-4"), 4 / 7.0);
    assertThat(owned.get("node-1")).as("share of weight 1").isCloseTo(1 / 7.0, within(0.1 / 7));
    assertThat(owned.get("node-2")).as("share of weight 2").isCloseTo(2 / 7.0, within(0.2 / 7));
    assertThat(owned.get("node-4")).as("share of weight 4").isCloseTo(4 / 7.0, within(0.4 / 7));
  }
}
