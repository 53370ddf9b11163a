package io.ringshift.client;

import static io.ringshift.client.TestSnapshots.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.EmbeddedKafka;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client while its broker is down: it keeps routing by its last good snapshot, and follows new epochs once
 * a broker serves the same address and data again. Its own broker, because it stops it.
 */
class RingClientOutageIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String TOPIC = "ring.snapshots";

  @TempDir
  Path dir;

  @Test
  void shouldKeepRoutingWhileTheBrokerIsDownAndFollowsNewEpochsWhenItIsBack() throws IOException, InterruptedException {
    SigningKey publisherKey = SigningKey.generate();
    List<PublishedSnapshot> chain = TestSnapshots.chain(publisherKey, 3);
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path data = dir.resolve("kafka");
    RingClientConfig config = RingClientConfig.builder().bootstrapServers("127.0.0.1:" + port).clusterId(CLUSTER)
        .trustedKeys(TrustedKeys.of(publisherKey.publicKey()))
        .requestTimeout(Duration.ofSeconds(2)).retryBackoff(Duration.ofMillis(200))
        .probeInterval(Duration.ofMillis(500)).build();

    try (RingClient client = new RingClient(config)) {
      try (EmbeddedKafka kafka = EmbeddedKafka.builder().port(port).dataDir(data).build().start()) {
        kafka.createTopics(TOPIC);
        try (SnapshotPublisherStub publisher = SnapshotPublisherStub.publisher(kafka.bootstrapServers(), TOPIC,
            "publisher")) {
          publisher.publish(chain.get(0));
          publisher.publish(chain.get(1));
        }
        client.start();
        assertThat(client.awaitEpoch(2, TIMEOUT)).as("epoch 2 before the outage").isTrue();
      }

      Placement before = client.placement("user:42");
      await("lookups keep answering from epoch 2 while the broker is down").during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(10))
          .until(() -> client.epoch() == 2 && client.placement("user:42") == before);

      try (EmbeddedKafka kafka = EmbeddedKafka.builder().port(port).dataDir(data).build().start();
          SnapshotPublisherStub publisher = SnapshotPublisherStub.publisher(kafka.bootstrapServers(), TOPIC,
              "publisher")) {
        publisher.publish(chain.get(2));
        assertThat(client.awaitEpoch(3, TIMEOUT)).as("epoch 3 after the broker is back").isTrue();
      }
      assertThat(client.placement("user:42").ownerIds())
          .isEqualTo(chain.get(2).ring().replicasOf("user:42").ids());
    }
  }
}
