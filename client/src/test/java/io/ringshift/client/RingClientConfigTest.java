package io.ringshift.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingClientConfigTest {
  private static final SigningKey KEY = SigningKey.generate();

  @TempDir
  Path dir;

  private static RingClientConfig.Builder valid() {
    return RingClientConfig.builder().bootstrapServers("localhost:9092").clusterId("c1")
        .trustedKeys(TrustedKeys.of(KEY.publicKey()));
  }

  @Test
  void shouldHaveSensibleDefaults() {
    RingClientConfig config = valid().build();

    assertThat(config.topic()).isEqualTo("ring.snapshots");
    assertThat(config.persistFile()).isNull();
    assertThat(config.meterRegistry()).isInstanceOf(SimpleMeterRegistry.class);
    assertThat(config.consumerProperties()).isEmpty();
    assertThat(config.requestTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.retryBackoff()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.probeInterval()).isEqualTo(Duration.ofSeconds(15));
  }

  @Test
  void shouldReadTrustedKeysFromPemFiles() throws IOException {
    KEY.write(dir.resolve("publisher.key"), dir.resolve("publisher.pub"));

    RingClientConfig config = valid().trustedKeyFiles(dir.resolve("publisher.pub")).build();

    assertThat(config.trustedKeys().ids()).containsExactly(KEY.id());
  }

  @Test
  void rejectsAMissingTrustedKeyFileNamingIt() {
    Path missing = dir.resolve("nope.pub");

    assertThatThrownBy(() -> valid().trustedKeyFiles(missing).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(missing.toString())
        .hasMessageContaining("does not exist");
  }

  @Test
  void rejectsATrustedKeyFileWithoutAPublicKeyNamingIt() throws IOException {
    Path file = Files.writeString(dir.resolve("garbage.pub"), "hello");

    assertThatThrownBy(() -> valid().trustedKeyFiles(file).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(file.toString());
  }

  @Test
  void rejectsAConfigurationWithoutTrustedKeys() {
    assertThatThrownBy(() -> RingClientConfig.builder().bootstrapServers("localhost:9092").clusterId("c1").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trustedKeys was not set");
  }

  @Test
  void rejectsMissingBootstrapServersAndClusterId() {
    assertThatThrownBy(() -> valid().bootstrapServers(null).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bootstrapServers was not set");
    assertThatThrownBy(() -> valid().clusterId("  ").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clusterId was \"  \"");
  }

  @Test
  void rejectsAnIllegalTopicNamingIt() {
    assertThatThrownBy(() -> valid().topic("ring snapshots").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("\"ring snapshots\"")
        .hasMessageContaining("[a-zA-Z0-9._-]");
  }

  @Test
  void rejectsConsumerPropertiesTheClientSetsItself() {
    assertThatThrownBy(() -> valid().consumerProperty("isolation.level", "read_uncommitted").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("isolation.level=read_uncommitted").hasMessageContaining("read_committed");
    assertThatThrownBy(() -> valid().consumerProperty("bootstrap.servers", "x:1").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bootstrapServers(...)");
  }

  @Test
  void shouldAcceptOtherConsumerProperties() {
    RingClientConfig config = valid().consumerProperty("security.protocol", "SSL").build();

    assertThat(config.consumerProperties()).containsEntry("security.protocol", "SSL");
  }

  @Test
  void rejectsNonPositiveDurationsNamingThem() {
    assertThatThrownBy(() -> valid().retryBackoff(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryBackoff was PT0S");
    assertThatThrownBy(() -> valid().requestTimeout(Duration.ofSeconds(-1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("requestTimeout was PT-1S");
  }

  @Test
  void rejectsAnInvalidConsumerPropertyWhenTheClientStarts() {
    RingClientConfig config = valid().consumerProperty("fetch.max.bytes", "lots").build();

    try (RingClient client = new RingClient(config)) {
      assertThatThrownBy(client::start).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("fetch.max.bytes");
    }
  }
}
