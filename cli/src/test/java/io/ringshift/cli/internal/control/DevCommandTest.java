package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DevCommandTest {
  @Test
  void shouldPrintTheGraceAsTheOptionTakesIt() {
    assertThat(DevCommand.shortDuration(Duration.ofMinutes(10))).isEqualTo("10min");
    assertThat(DevCommand.shortDuration(Duration.ofHours(2))).isEqualTo("2h");
    assertThat(DevCommand.shortDuration(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(DevCommand.shortDuration(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(DevCommand.shortDuration(Duration.ZERO)).isEqualTo("0s");
  }
}
