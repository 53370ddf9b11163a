package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DevNodesTest {
  @Test
  void shouldPadNodeIdsToTheWidthOfTheCountWithAtLeastTwoDigits() {
    assertThat(DevNodes.id(1, 1)).isEqualTo("node-01");
    assertThat(DevNodes.id(5, 9)).isEqualTo("node-05");
    assertThat(DevNodes.id(12, 12)).isEqualTo("node-12");
    assertThat(DevNodes.id(7, 100)).isEqualTo("node-007");
  }

  @Test
  void shouldPlaceNodesInThreeZonesRoundRobin() {
    assertThat(IntStream.rangeClosed(1, 7).mapToObj(DevNodes::zone))
        .containsExactly("az-1", "az-2", "az-3", "az-1", "az-2", "az-3", "az-1");
  }

  @Test
  void shouldPrintTheGraceAsTheOptionTakesIt() {
    assertThat(DevCommand.shortDuration(Duration.ofMinutes(10))).isEqualTo("10min");
    assertThat(DevCommand.shortDuration(Duration.ofHours(2))).isEqualTo("2h");
    assertThat(DevCommand.shortDuration(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(DevCommand.shortDuration(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(DevCommand.shortDuration(Duration.ZERO)).isEqualTo("0s");
  }
}
