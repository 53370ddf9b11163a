package io.ringshift.demo;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class DemoSettingsTest {
  static Stream<Arguments> badSettings() {
    return Stream.of(
        bad("too few nodes", s -> s.withNodes(5), "--nodes was 5; it must be 6..120"),
        bad("too many nodes", s -> s.withNodes(121), "--nodes was 121; it must be 6..120"),
        bad("no keys", s -> s.withKeys(0), "--keys was 0; it must be 1..10000000"),
        bad("rate 1", s -> s.withRate(1), "--rate was 1; it must be 2..100000"),
        bad("negative throttle", s -> s.withThrottle(-1), "--throttle was -1 bytes/s; it must be 0"),
        bad("tiny throttle", s -> s.withThrottle(1000), "--throttle was 1000 bytes/s; give at least 64KiB/s"),
        bad("vnodes 0", s -> s.withVnodes(0), "--vnodes was 0; it must be 1..4096"),
        bad("workers 0", s -> s.withWorkers(0), "--workers was 0; it must be 1..16"),
        bad("negative grace", s -> s.withGrace(Duration.ofSeconds(-1)), "--grace was PT-1S"),
        bad("dashboard port", s -> s.withDashboardPort(70_000), "--dashboard-port was 70000"));
  }

  private static Arguments bad(String name, UnaryOperator<DemoSettings> change, String message) {
    return Arguments.of(name, change, message);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badSettings")
  void shouldRefuseABadSettingNamingTheOptionAndTheRule(String name, UnaryOperator<DemoSettings> change,
      String message) {
    assertThatThrownBy(() -> change.apply(DemoSettings.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @Test
  void shouldDefaultToTwelveNodesTwoHundredThousandKeysAndTwoThousandOperations() {
    DemoSettings d = DemoSettings.defaults();
    assertThat(d.nodes()).isEqualTo(12);
    assertThat(d.keys()).isEqualTo(200_000);
    assertThat(d.rate()).isEqualTo(2_000);
    assertThat(d.workers()).isEqualTo(2);
    assertThat(d.withSeed(5).seed()).isEqualTo(5);
  }

  @Test
  void shouldWarnOfALargeShapeAtAHighRateOnAFewCoresAndAdviseTheRateThatRunsIt() {
    DemoSettings reference = DemoSettings.defaults().withNodes(120).withVnodes(256);
    assertThat(reference.loadWarning(2)).isEqualTo("note: 120 nodes serving 2,000 operations/s in one process on 2 "
        + "cores leave the broker little CPU, and each change can take many minutes; --rate 200 runs this shape in a "
        + "few minutes");
    assertThat(reference.withRate(200).loadWarning(2)).as("the advised rate").isNull();
    assertThat(reference.loadWarning(8)).as("a machine with room").isNull();
    assertThat(DemoSettings.defaults().loadWarning(2)).as("the default shape").isNull();
  }
}
