package io.ringshift.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The same seed gives the same run: every event and every record written, hashed, is the same twice. */
class DeterminismTest {
  @Test
  void shouldRunTheSameSeedTheSameWayTwice() {
    for (long seed : new long[] {1, 27, 20_261_207L}) {
      ProtocolSimulation.Result first = ProtocolSimulation.run(seed, false);
      ProtocolSimulation.Result second = ProtocolSimulation.run(seed, true);

      assertThat(second.trace()).as("trace hash of seed %d", seed).isEqualTo(first.trace());
      assertThat(second.steps()).isEqualTo(first.steps());
      assertThat(second.counts()).isEqualTo(first.counts());
      assertThat(first.steps()).as("it ran").isGreaterThan(1_000);
    }
  }

  @Test
  void shouldRunAnotherSeedAnotherWay() {
    assertThat(ProtocolSimulation.run(2, false).trace()).isNotEqualTo(ProtocolSimulation.run(3, false).trace());
  }
}
