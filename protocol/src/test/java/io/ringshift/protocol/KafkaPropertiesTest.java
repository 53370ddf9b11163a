package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaPropertiesTest {
  @TempDir Path dir;

  @Test
  void shouldReadAPropertiesFileAndPutItUnderTheClientsOwnSettings() throws Exception {
    Path file = dir.resolve("client.properties");
    Files.writeString(file, "# SASL over TLS\nsecurity.protocol = SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        + "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"rs\" "
        + "password=\"secret\";\nssl.truststore.location=/etc/ringshift/truststore.p12\n");

    KafkaProperties properties = KafkaProperties.load(file);

    assertThat(properties.values()).containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.mechanism", "SCRAM-SHA-512").containsKey("sasl.jaas.config").hasSize(4);
    Properties client = new Properties();
    properties.applyTo(client);
    assertThat(client).containsEntry("ssl.truststore.location", "/etc/ringshift/truststore.p12");
    assertThat(properties.toString()).as("no secret in logs").doesNotContain("secret")
        .contains("sasl.jaas.config");
  }

  @Test
  void shouldRefuseThePropertiesRingshiftSetsItselfAlsoUnderAStreamsClientPrefix() {
    assertThatThrownBy(() -> KafkaProperties.of(Map.of("isolation.level", "read_uncommitted")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Kafka client property isolation.level is set by ringshift itself: every reader of the control "
            + "plane reads committed records only");
    assertThatThrownBy(() -> KafkaProperties.of(Map.of("main.consumer.isolation.level", "read_uncommitted")))
        .hasMessageStartingWith("Kafka client property main.consumer.isolation.level is set by ringshift itself");
    assertThatThrownBy(() -> KafkaProperties.of(Map.of("producer.transactional.id", "x")))
        .hasMessageContaining("--transactional-id");
    assertThatThrownBy(() -> KafkaProperties.of(Map.of("bootstrap.servers", "h:1")))
        .hasMessageContaining("--bootstrap (or RINGSHIFT_BOOTSTRAP)");
    assertThatThrownBy(() -> KafkaProperties.of(Map.of(" ", "x"))).hasMessage("a Kafka client property had a blank name");
  }

  @Test
  void shouldNameTheFileWhenItIsMissingOrHoldsAReservedProperty() throws Exception {
    assertThatThrownBy(() -> KafkaProperties.load(dir.resolve("none.properties")))
        .hasMessage("Kafka client properties file " + dir.resolve("none.properties") + " does not exist");
    Path file = Files.writeString(dir.resolve("bad.properties"), "acks=1\n");
    assertThatThrownBy(() -> KafkaProperties.load(file))
        .hasMessageStartingWith(file + ": Kafka client property acks is set by ringshift itself");
  }

  @Test
  void shouldBeEmptyWithoutProperties() {
    assertThat(KafkaProperties.none().values()).isEmpty();
    assertThat(KafkaProperties.of(Map.of())).isSameAs(KafkaProperties.none());
  }
}
