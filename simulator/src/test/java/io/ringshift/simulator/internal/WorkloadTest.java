package io.ringshift.simulator.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.ringshift.simulator.SimulationParameters;
import io.ringshift.simulator.SimulationResult;
import io.ringshift.simulator.placement.Fleet;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The workload is what docs/simulate.md says it is, and the same for a seed. */
class WorkloadTest {
  private final SimulationParameters p = SimulationParameters.reference().withScale(12, 50_000);
  private final Workload w = Workload.generate(p);

  @Test
  void shouldGenerateUnique16ByteKeys() {
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < w.count; i++) {
      keys.add(w.key(i));
    }
    assertThat(keys).hasSize(w.count);
    assertThat(w.key(0)).matches("key-[0-9a-f]{12}");
  }

  @Test
  void shouldBeTheSameForASeedAndDifferForAnother() {
    Workload again = Workload.generate(p);
    assertThat(again.keyBytes).isEqualTo(w.keyBytes);
    assertThat(again.valueBytes).isEqualTo(w.valueBytes);
    SimulationParameters other = new SimulationParameters(7, 12, 3, 256, 3, 50_000, 4096, 1.0, 1024, 1.0, 2e6);
    assertThat(Workload.generate(other).key(0)).isNotEqualTo(w.key(0));
  }

  @Test
  void shouldSpreadRequestsByZipfOverTheTotalRate() {
    assertThat(Arrays.stream(w.qps).sum()).isCloseTo(p.totalQps(), within(1e-3));
    // Zipf s = 1: rank 1 gets twice rank 2 and ten times rank 10.
    assertThat(w.qps[0] / w.qps[1]).isCloseTo(2.0, within(1e-9));
    assertThat(w.qps[0] / w.qps[9]).isCloseTo(10.0, within(1e-9));
  }

  @Test
  void shouldDrawLogNormalValueSizesAroundTheMedian() {
    SimulationResult.WorkloadSummary s = w.summary(p);
    assertThat((double) s.sampleMedianValueBytes()).isCloseTo(1024, within(40.0));
    // Mean of a log-normal: median * exp(sigma^2 / 2) = 1024 * 1.6487.
    assertThat(s.meanValueBytes()).isCloseTo(1688, within(60.0));
    assertThat(Arrays.stream(w.valueBytes).min().orElseThrow()).isPositive();
  }

  @Test
  void shouldComputeTheIdealAsTheWeightShareGained() {
    Fleet base = Fleet.uniform(12, 3);
    assertThat(base.idealMovedFractionTo(base.plusNewNode())).isCloseTo(1.0 / 13, within(1e-12));
    assertThat(base.idealMovedFractionTo(base.minus(4))).isCloseTo(1.0 / 12, within(1e-12));
    assertThat(base.idealMovedFractionTo(base.withWeight(4, 2.0))).isCloseTo(2.0 / 13 - 1.0 / 12, within(1e-12));
  }
}
