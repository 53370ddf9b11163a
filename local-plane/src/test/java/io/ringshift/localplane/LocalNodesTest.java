package io.ringshift.localplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LocalNodesTest {
  @Test
  void shouldPadNodeIdsToTheWidthOfTheCountWithAtLeastTwoDigits() {
    assertThat(LocalNodes.id(1, 1)).isEqualTo("node-01");
    assertThat(LocalNodes.id(5, 9)).isEqualTo("node-05");
    assertThat(LocalNodes.id(12, 12)).isEqualTo("node-12");
    assertThat(LocalNodes.id(7, 100)).isEqualTo("node-007");
  }

  @Test
  void shouldPlaceNodesInThreeZonesRoundRobin() {
    assertThat(IntStream.rangeClosed(1, 7).mapToObj(LocalNodes::zone))
        .containsExactly("az-1", "az-2", "az-3", "az-1", "az-2", "az-3", "az-1");
  }
}
