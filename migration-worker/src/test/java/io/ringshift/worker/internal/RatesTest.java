package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RatesTest {

  @Test
  void shouldWriteRatesAndWaitsAsOperatorsReadThem() {
    assertThat(Rates.format(20L << 20)).isEqualTo("20.0 MiB/s");
    assertThat(Rates.format(0)).isEqualTo("unlimited");
    assertThat(Rates.format(1536)).isEqualTo("1.50 KiB/s");
    assertThat(Rates.duration(Duration.ofSeconds(500))).isEqualTo("8 min 20 s");
    assertThat(Rates.duration(Duration.ofMillis(44_001))).isEqualTo("45 s");
    assertThat(Rates.duration(Duration.ofMinutes(125))).isEqualTo("2 h 5 min");
    assertThat(Rates.duration(Duration.ofMinutes(10))).isEqualTo("10 min");
    assertThat(Rates.duration(Duration.ofMillis(50))).isEqualTo("50 ms");
  }
}
