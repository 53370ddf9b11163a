package io.ringshift.health.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.health.internal.Debounce.Change;
import io.ringshift.health.internal.Debounce.Probe;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class DebounceTest {
  private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");

  @Test
  void shouldBeDueOnlyWithEnoughMissesSpanningTheWindow() {
    Debounce debounce = new Debounce(3, Duration.ofSeconds(10));

    assertThat(debounce.observe("a", Probe.missed("timeout"), T0)).isEqualTo(Change.SUSPECTED);
    assertThat(debounce.observe("a", Probe.missed("timeout"), T0.plusSeconds(9))).isEqualTo(Change.NONE);
    assertThat(debounce.due()).as("2 misses over 9 s").isEmpty();

    debounce.observe("a", Probe.missed("refused"), T0.plusSeconds(9).plusMillis(500));
    assertThat(debounce.due()).as("3 misses over 9.5 s").isEmpty();

    debounce.observe("a", Probe.missed("refused"), T0.plusSeconds(10));
    assertThat(debounce.due()).singleElement().satisfies(d -> {
      assertThat(d.node()).isEqualTo("a");
      assertThat(d.misses()).isEqualTo(4);
      assertThat(d.down()).isEqualTo(Duration.ofSeconds(10));
      assertThat(d.reason()).isEqualTo("refused");
    });
  }

  @Test
  void shouldStartAgainFromZeroAfterOneAnswer() {
    Debounce debounce = new Debounce(2, Duration.ofSeconds(5));
    debounce.observe("a", Probe.missed("timeout"), T0);
    debounce.observe("a", Probe.missed("timeout"), T0.plusSeconds(4));

    assertThat(debounce.observe("a", Probe.answered(), T0.plusSeconds(5))).isEqualTo(Change.RECOVERED);
    assertThat(debounce.misses("a")).isZero();

    debounce.observe("a", Probe.missed("timeout"), T0.plusSeconds(6));
    debounce.observe("a", Probe.missed("timeout"), T0.plusSeconds(10));
    assertThat(debounce.due()).as("the new run spans 4 s, not 10").isEmpty();
    assertThat(debounce.observe("a", Probe.answered(), T0.plusSeconds(11))).isEqualTo(Change.RECOVERED);
    assertThat(debounce.observe("a", Probe.answered(), T0.plusSeconds(12))).isEqualTo(Change.NONE);
  }

  @Test
  void shouldForgetNodesNoLongerWatched() {
    Debounce debounce = new Debounce(1, Duration.ZERO);
    debounce.observe("a", Probe.missed("timeout"), T0);
    debounce.observe("b", Probe.missed("timeout"), T0);

    debounce.retain(java.util.Set.of("b"));

    assertThat(debounce.due()).extracting(Debounce.Due::node).containsExactly("b");
  }

  @Test
  void shouldRefuseSettingsThatWouldFailOnOneTimeout() {
    assertThatThrownBy(() -> new Debounce(0, Duration.ofSeconds(10)))
        .hasMessage("misses was 0; it must be at least 1");
    assertThatThrownBy(() -> new Debounce(3, Duration.ofSeconds(-1)))
        .hasMessage("minDown was PT-1S; it must be 0 or more");
  }
}
