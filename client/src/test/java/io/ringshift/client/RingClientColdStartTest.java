package io.ringshift.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.client.internal.SnapshotFile;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Starting from the persist file with no Kafka at all: the bootstrap servers point at a closed port, so every
 * snapshot the client routes by here came from the file.
 */
class RingClientColdStartTest {
  private static final SigningKey PUBLISHER = SigningKey.generate();
  private static final long PUBLISHED = 1_700_000_000_000L;
  private static final Clock NOW = Clock.fixed(Instant.ofEpochMilli(PUBLISHED + 90_000), ZoneOffset.UTC);

  @TempDir
  Path dir;

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final List<RingClient> clients = new ArrayList<>();
  private Path file;
  private String nowhere;

  @BeforeEach
  void setUp() throws IOException {
    file = dir.resolve("snapshot.bin");
    try (ServerSocket socket = new ServerSocket(0)) {
      nowhere = "127.0.0.1:" + socket.getLocalPort();
    }
  }

  @AfterEach
  void closeClients() {
    clients.forEach(RingClient::close);
  }

  private RingClient start() {
    RingClient client = new RingClient(RingClientConfig.builder()
        .bootstrapServers(nowhere).clusterId(TestSnapshots.CLUSTER)
        .trustedKeys(TrustedKeys.of(PUBLISHER.publicKey()))
        .persistFile(file).meterRegistry(registry).clock(NOW)
        .build());
    clients.add(client);
    return client.start();
  }

  private double refusals(RefusalReason reason) {
    return registry.get("ringshift.client.refusals").tag("reason", reason.name()).counter().count();
  }

  @Test
  void shouldRouteFromThePersistFileBeforeKafkaAnswers() throws IOException {
    PublishedSnapshot snapshot = TestSnapshots.chain(PUBLISHER, 3).get(2);
    SnapshotFile.write(file, TestSnapshots.encode(snapshot), PUBLISHED);

    RingClient client = start();

    assertThat(client.epoch()).isEqualTo(3);
    assertThat(client.current()).contains(snapshot);
    assertThat(client.placement("user:42").ownerIds()).isEqualTo(snapshot.ring().replicasOf("user:42").ids());
    assertThat(client.snapshotAge()).contains(Duration.ofSeconds(90));
    assertThat(client.publishedAt()).contains(Instant.ofEpochMilli(PUBLISHED));
    assertThat(registry.get("ringshift.client.snapshot.age").gauge().value()).isEqualTo(90.0);
    assertThat(registry.get("ringshift.client.epoch").tag("cluster", TestSnapshots.CLUSTER).gauge().value())
        .isEqualTo(3.0);
    assertThat(registry.get("ringshift.client.swaps").counter().count()).isEqualTo(1.0);
  }

  @Test
  void shouldTellSwapListenersAddedBeforeStartAboutThePersistedSnapshot() throws IOException {
    PublishedSnapshot snapshot = TestSnapshots.chain(PUBLISHER, 2).get(1);
    SnapshotFile.write(file, TestSnapshots.encode(snapshot), PUBLISHED);
    List<SnapshotSwap> swaps = new ArrayList<>();
    RingClient client = new RingClient(RingClientConfig.builder()
        .bootstrapServers(nowhere).clusterId(TestSnapshots.CLUSTER)
        .trustedKeys(TrustedKeys.of(PUBLISHER.publicKey())).persistFile(file).build());
    clients.add(client);
    client.addSwapListener(swaps::add);

    client.start();

    assertThat(swaps).containsExactly(new SnapshotSwap(RingClient.NO_EPOCH, 2, snapshot));
  }

  @Test
  void rejectsAPersistFileSignedByAnUntrustedKey() throws IOException {
    PublishedSnapshot forged = TestSnapshots.chain(SigningKey.generate(), 3).get(2);
    SnapshotFile.write(file, TestSnapshots.encode(forged), PUBLISHED);

    RingClient client = start();

    assertThat(client.epoch()).isEqualTo(RingClient.NO_EPOCH);
    assertThat(client.current()).isEmpty();
    assertThat(client.snapshotAge()).isEmpty();
    assertThat(refusals(RefusalReason.UNKNOWN_KEY)).isEqualTo(1.0);
    assertThat(registry.get("ringshift.client.snapshot.age").gauge().value()).isNaN();
    assertThatThrownBy(() -> client.placement("user:42")).isInstanceOf(RingClientException.class)
        .hasMessageContaining("no verified snapshot of cluster " + TestSnapshots.CLUSTER)
        .hasMessageContaining(file.toString());
  }

  @Test
  void rejectsAPersistFileWhoseSnapshotWasAltered() throws IOException {
    PublishedSnapshot snapshot = TestSnapshots.chain(PUBLISHER, 3).get(2);
    byte[] bytes = TestSnapshots.alter(snapshot, r -> r.setReplicas(2));
    SnapshotFile.write(file, bytes, PUBLISHED); // a valid frame around a snapshot that no longer checks

    RingClient client = start();

    assertThat(client.epoch()).isEqualTo(RingClient.NO_EPOCH);
    assertThat(refusals(RefusalReason.CHECKSUM)).isEqualTo(1.0);
  }

  @Test
  void rejectsACorruptPersistFile() throws IOException {
    SnapshotFile.write(file, TestSnapshots.encode(TestSnapshots.chain(PUBLISHER, 1).get(0)), PUBLISHED);
    byte[] all = Files.readAllBytes(file);
    all[all.length / 2] ^= 0x10;
    Files.write(file, all);

    RingClient client = start();

    assertThat(client.epoch()).isEqualTo(RingClient.NO_EPOCH);
    assertThat(refusals(RefusalReason.MALFORMED)).isEqualTo(1.0);
  }

  @Test
  void rejectsAPersistFileOfAnotherCluster() throws IOException {
    PublishedSnapshot other = PublishedSnapshot.unsigned(TestSnapshots.ring("other", 1, 4), null, List.of())
        .signedBy(PUBLISHER);
    SnapshotFile.write(file, TestSnapshots.encode(other), PUBLISHED);

    RingClient client = start();

    assertThat(client.epoch()).isEqualTo(RingClient.NO_EPOCH);
    assertThat(refusals(RefusalReason.WRONG_CLUSTER)).isEqualTo(1.0);
  }

  @Test
  void shouldRouteFromAFileProvisionedOutOfBand() throws IOException {
    PublishedSnapshot snapshot = TestSnapshots.chain(PUBLISHER, 2).get(1);
    RingClient.writePersistFile(file, snapshot, Instant.ofEpochMilli(PUBLISHED));

    RingClient client = start();

    assertThat(client.current()).contains(snapshot);
    assertThat(client.publishedAt()).contains(Instant.ofEpochMilli(PUBLISHED));
  }

  /**
   * A client whose report to the transition barrier Kafka never acknowledged (no Kafka here) holds no lease: in a
   * transition stage it stops serving the ranges the transition moves, and serves the others; one that does not
   * participate (a tool) serves all.
   */
  @Test
  void shouldStopServingTheMovingRangesOfATransitionWithoutALease() throws IOException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 4);
    PublishedSnapshot readOld = PublishedSnapshot.transition(chain.get(3).ring(), chain.get(2).ring(),
        TransitionStage.WRITE_BOTH_READ_OLD).signedBy(PUBLISHER);
    SnapshotFile.write(file, TestSnapshots.encode(readOld), PUBLISHED);
    String moving = key(k -> !readOld.ring().replicasOf(k).ids().equals(readOld.previous().replicasOf(k).ids()));
    String staying = key(k -> readOld.ring().replicasOf(k).ids().equals(readOld.previous().replicasOf(k).ids()));

    RingClient client = start();

    assertThat(client.current()).contains(readOld);
    assertThatThrownBy(() -> client.placement(moving)).isInstanceOf(RingClientException.class)
        .hasMessageContaining("is in transition stage WRITE_BOTH_READ_OLD and this client's lease in the barrier "
            + "lapsed (no report acknowledged on ring.participants since it started)");
    assertThat(client.placement(staying).ownerIds()).isEqualTo(readOld.ring().replicasOf(staying).ids());
    assertThat(registry.get("ringshift.client.stage").gauge().value()).isEqualTo(1.0);
    assertThat(registry.get("ringshift.client.participant.lease.held").gauge().value()).isZero();
    assertThat(registry.get("ringshift.client.participant.report.age").gauge().value()).isNaN();

    RingClient tool = new RingClient(RingClientConfig.builder()
        .bootstrapServers(nowhere).clusterId(TestSnapshots.CLUSTER)
        .trustedKeys(TrustedKeys.of(PUBLISHER.publicKey()))
        .persistFile(file).meterRegistry(registry).clock(NOW).noParticipation()
        .build());
    clients.add(tool);
    tool.start();
    assertThat(tool.placement(moving).moving()).isTrue();
  }

  private static String key(java.util.function.Predicate<String> test) {
    for (int i = 0; ; i++) {
      if (test.test("user:" + i)) {
        return "user:" + i;
      }
    }
  }

  @Test
  void shouldStartWithoutAPersistFile() {
    RingClient client = start();

    assertThat(client.epoch()).isEqualTo(RingClient.NO_EPOCH);
    assertThat(Files.exists(file)).isFalse();
  }

  @Test
  void shouldGiveUpAwaitingAnEpochAfterTheTimeoutWithoutASnapshot() throws InterruptedException {
    RingClient client = start();

    assertThat(client.awaitEpoch(0, Duration.ofMillis(50))).isFalse();
  }

  @Test
  void shouldReturnAtOnceWhenAwaitingAnEpochAlreadyRoutedBy() throws IOException, InterruptedException {
    SnapshotFile.write(file, TestSnapshots.encode(TestSnapshots.chain(PUBLISHER, 2).get(1)), PUBLISHED);
    RingClient client = start();

    assertThat(client.awaitEpoch(2, Duration.ZERO)).isTrue();
    assertThat(client.awaitEpoch(3, Duration.ZERO)).isFalse();
  }

  @Test
  void shouldRemoveTheMetersOnCloseAndKeepLookupsAnswering() throws IOException {
    SnapshotFile.write(file, TestSnapshots.encode(TestSnapshots.chain(PUBLISHER, 2).get(1)), PUBLISHED);
    RingClient client = start();

    client.close();
    client.close();

    assertThat(registry.find("ringshift.client.epoch").gauge()).isNull();
    assertThat(registry.find("ringshift.client.refusals").counters()).isEmpty();
    assertThat(client.placement(new byte[] {1, 2, 3}).epoch()).isEqualTo(2);
    assertThatThrownBy(client::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }
}
