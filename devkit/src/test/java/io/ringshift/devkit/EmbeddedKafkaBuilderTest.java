package io.ringshift.devkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Builder validation and state rules: none of these starts a broker. */
class EmbeddedKafkaBuilderTest {
  @Test
  void rejectsPortsOutsideTheTcpRange() {
    assertThatThrownBy(() -> EmbeddedKafka.builder().port(65_536))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port was 65536; must be 0 (any free port) or 1..65535");
    assertThatThrownBy(() -> EmbeddedKafka.builder().port(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void rejectsBrokerPropertiesTheDevkitOwns() {
    assertThatThrownBy(() -> EmbeddedKafka.builder().brokerProperty("listeners", "PLAINTEXT://:9092"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("broker property 'listeners' is set by the devkit; use port(...) or dataDir(...)");
    assertThatThrownBy(() -> EmbeddedKafka.builder().brokerProperty("log.dirs", "/tmp/x"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void acceptsOtherBrokerProperties() {
    assertThat(EmbeddedKafka.builder().brokerProperty("log.retention.ms", "60000").build()).isNotNull();
  }

  @Test
  void rejectsANonPositiveStartupTimeout() {
    assertThatThrownBy(() -> EmbeddedKafka.builder().startupTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("startupTimeout was PT0S; must be positive");
  }

  @Test
  void refusesAccessorsBeforeStart() {
    EmbeddedKafka kafka = EmbeddedKafka.builder().build();

    assertThatThrownBy(kafka::bootstrapServers)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("EmbeddedKafka is new, not running; call start() first");
  }

  @Test
  void closingAnUnstartedBrokerIsHarmlessAndFinal() {
    EmbeddedKafka kafka = EmbeddedKafka.builder().build();
    kafka.close();
    kafka.close();

    assertThatThrownBy(kafka::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already closed; build a new one");
  }
}
