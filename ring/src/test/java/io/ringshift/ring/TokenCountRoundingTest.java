package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The token count is {@code Math.round(weight * V)}: the IEEE-754 double product, rounded half up. These are
 * the facts docs/placement.md states for ports to other languages.
 */
class TokenCountRoundingTest {

  @ParameterizedTest(name = "weight {0} at V={1} gives {2} tokens")
  @CsvSource({
      "1.0, 256, 256",
      "0.5, 1, 1", // 0.5 rounds up
      "0.5, 5, 3", // 2.5 rounds up, not to even
      "1.25, 2, 3", // 2.5 again
      "1.5, 3, 5", // 4.5
      "0.145, 100, 14", // the double product is 14.499999999999998, so 14 and not the decimal 15
      "2.675, 100, 268", // here the product is exactly 267.5
      "0.004, 256, 1", // 1.024
  })
  void shouldRoundTheDoubleProductHalfUp(double weight, int vnodes, int expectedTokens) {
    RingSnapshot ring = RingSnapshot.builder().vnodes(vnodes).addMember("n1", "az-1", weight).build();

    assertThat(ring.tokenCount(0)).isEqualTo(expectedTokens);
    assertThat(ring.tokenCount()).isEqualTo(expectedTokens);
  }

  @Test
  void shouldAgreeWithFloorOfXPlusHalfForEveryProductThatGivesATokenCount() {
    // Math.round and floor(x + 0.5) in doubles part only at x = 0.49999999999999994 (x + 0.5 rounds up to 1.0)
    // and at x >= 2^52; the first gives no token in Java (rejected), the second is far above MAX_TOKENS.
    assertThat(Math.round(Math.nextDown(0.5))).isZero();
    assertThat(Math.floor(Math.nextDown(0.5) + 0.5)).isEqualTo(1.0);
    long seed = Seeded.runSeed("shouldAgreeWithFloorOfXPlusHalfForEveryProductThatGivesATokenCount");
    Random rnd = new Random(seed);
    for (int i = 0; i < 200_000; i++) {
      // Uniform doubles up to the token limit, and values packed just around the .5 boundaries.
      double x = rnd.nextBoolean()
          ? 0.5 + rnd.nextDouble() * RingBuilder.MAX_TOKENS
          : stepAround(rnd.nextInt(RingBuilder.MAX_TOKENS) + 0.5, rnd.nextInt(7) - 3);
      if (Math.round(x) < 1) {
        continue; // no token count: the builder rejects it (the next test), so the rules need not agree there
      }
      RingInvariants.check((long) Math.floor(x + 0.5) == Math.round(x),
          () -> "floor(x + 0.5) != Math.round(x) for x = " + x + " (seed " + seed + ")");
    }
  }

  @Test
  void shouldRejectAWeightJustBelowHalfATokenThatFloorOfXPlusHalfWouldAccept() {
    double weight = Math.nextDown(0.5);

    assertThatThrownBy(() -> RingSnapshot.builder().vnodes(1).addMember("n1", "az-1", weight).build())
        .isInstanceOf(RingException.class)
        .hasMessageContaining("gives round(weight * vnodes) = 0 tokens");
  }

  private static double stepAround(double x, int ulps) {
    double value = x;
    for (int i = 0; i < Math.abs(ulps); i++) {
      value = ulps > 0 ? Math.nextUp(value) : Math.nextDown(value);
    }
    return value;
  }
}
