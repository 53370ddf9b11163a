package io.ringshift.client;

import static io.ringshift.client.TestSnapshots.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The client against a real broker: a publisher writes signed chains, forgers write everything else. */
class RingClientIT {
  @RegisterExtension
  static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final SigningKey PUBLISHER = SigningKey.generate();
  private static final SigningKey STRANGER = SigningKey.generate();

  @TempDir
  Path dir;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private String topic;
  private SnapshotPublisherStub publisher;

  @BeforeEach
  void createTopic() {
    topic = KAFKA.topic("ring.snapshots");
    KAFKA.kafka().createTopics(List.of(new NewTopic(topic, 1, (short) 1)
        .configs(Map.of("cleanup.policy", "compact"))));
    publisher = open(SnapshotPublisherStub.publisher(KAFKA.bootstrapServers(), topic, KAFKA.applicationId()));
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  private <T extends AutoCloseable> T open(T closeable) {
    closeables.add(closeable);
    return closeable;
  }

  private RingClientConfig.Builder config() {
    return RingClientConfig.builder().bootstrapServers(KAFKA.bootstrapServers()).clusterId(CLUSTER).topic(topic)
        .trustedKeys(TrustedKeys.of(PUBLISHER.publicKey())).meterRegistry(registry);
  }

  private RingClient start(RingClientConfig config, List<SnapshotSwap> swaps) {
    RingClient client = open(new RingClient(config));
    client.addSwapListener(swaps::add);
    return client.start();
  }

  private RingClient start(UnaryOperator<RingClientConfig.Builder> settings) {
    return start(settings.apply(config()).build(), new CopyOnWriteArrayList<>());
  }

  private double count(String name) {
    return registry.get(name).counter().count();
  }

  private double refusals(RefusalReason reason) {
    return registry.get("ringshift.client.refusals").tag("reason", reason.name()).counter().count();
  }

  private double allRefusals() {
    return registry.get("ringshift.client.refusals").counters().stream().mapToDouble(c -> c.count()).sum();
  }

  private static void awaitEpoch(RingClient client, long epoch) throws InterruptedException {
    assertThat(client.awaitEpoch(epoch, TIMEOUT)).as("epoch %d within %s; at %d", epoch, TIMEOUT, client.epoch())
        .isTrue();
  }

  @Test
  void shouldCatchUpToTheLastSnapshotOfAChainInOneSwapThenFollowsNewEpochs() throws InterruptedException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 6);
    chain.subList(0, 4).forEach(publisher::publish);
    List<SnapshotSwap> swaps = new CopyOnWriteArrayList<>();

    RingClient client = start(config().build(), swaps);
    awaitEpoch(client, 4);
    // Listeners run right after the swap, on the client's thread: awaitEpoch can return before they do.
    await("the swap listener saw epoch 4").atMost(TIMEOUT).until(() -> swaps.size() == 1);

    assertThat(swaps).containsExactly(new SnapshotSwap(RingClient.NO_EPOCH, 4, chain.get(3)));
    assertThat(count("ringshift.client.swaps")).isEqualTo(1.0);
    assertThat(client.placement("user:42").ownerIds()).isEqualTo(chain.get(3).ring().replicasOf("user:42").ids());

    publisher.publish(chain.get(4));
    publisher.publish(chain.get(5));
    awaitEpoch(client, 6);
    await("the swap listener saw epoch 6").atMost(TIMEOUT).until(() -> swaps.size() == 3);

    assertThat(swaps).extracting(SnapshotSwap::previousEpoch, SnapshotSwap::epoch)
        .containsExactly(tuple(-1L, 4L), tuple(4L, 5L), tuple(5L, 6L));
    assertThat(client.current()).contains(chain.get(5));
    assertThat(client.placement("user:42".getBytes(StandardCharsets.UTF_8)).epoch()).isEqualTo(6);
    assertThat(count("ringshift.client.swaps")).isEqualTo(3.0);
    assertThat(registry.get("ringshift.client.epoch").tag("cluster", CLUSTER).gauge().value()).isEqualTo(6.0);
    assertThat(count("ringshift.client.gaps")).isZero();
    assertThat(allRefusals()).isZero();
    assertThat(client.awaitEpoch(7, Duration.ofMillis(100))).isFalse();
  }

  /**
   * A client reports what it routes by to the transition barrier, keyed cluster/participant: the epoch and stage of
   * every swap, a stage included, renewed under its lease; and a tombstone when it closes.
   */
  @Test
  void shouldReportWhatItRoutesByToTheBarrierAndLeaveOnClose() {
    String participants = KAFKA.topic("ring.participants");
    KAFKA.kafka().createTopics(List.of(new NewTopic(participants, 1, (short) 1)
        .configs(Map.of("cleanup.policy", "compact"))));
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 3);
    publisher.publish(chain.get(0));
    RingClient client = start(config().participantsTopic(participants).participantId("app-1")
        .participantLease(Duration.ofSeconds(3)).build(), new ArrayList<>());
    Map<String, Object> props = Map.of("bootstrap.servers", KAFKA.bootstrapServers(), "auto.offset.reset", "earliest",
        "group.id", KAFKA.applicationId() + "-participants");
    try (org.apache.kafka.clients.consumer.KafkaConsumer<String, byte[]> consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(props,
            new org.apache.kafka.common.serialization.StringDeserializer(),
            new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
      consumer.subscribe(List.of(participants));
      List<io.ringshift.schemas.avro.ParticipantReport> reports = new CopyOnWriteArrayList<>();
      List<String> tombstones = new CopyOnWriteArrayList<>();
      Runnable read = () -> consumer.poll(Duration.ofMillis(200)).forEach(r -> {
        assertThat(r.key()).isEqualTo(CLUSTER + "/app-1");
        if (r.value() == null) {
          tombstones.add(r.key());
        } else {
          reports.add(io.ringshift.protocol.RecordSerdes.participantReport().deserialize(r.value()));
        }
      });
      await("a report of epoch 1, FINAL").atMost(TIMEOUT).until(() -> {
        read.run();
        return reports.stream().anyMatch(r -> r.getEpoch() == 1 && r.getStage() == 3);
      });
      PublishedSnapshot readOld = PublishedSnapshot.transition(chain.get(1).ring(), chain.get(0).ring(),
          io.ringshift.protocol.TransitionStage.WRITE_BOTH_READ_OLD).signedBy(PUBLISHER);
      publisher.publish(readOld);
      await("a report of epoch 2 in stage WRITE_BOTH_READ_OLD").atMost(TIMEOUT).until(() -> {
        read.run();
        return reports.stream().anyMatch(r -> r.getEpoch() == 2 && r.getStage() == 1);
      });
      io.ringshift.schemas.avro.ParticipantReport report = reports.get(reports.size() - 1);
      assertThat(report.getKind()).isEqualTo(io.ringshift.schemas.avro.ParticipantKind.CLIENT);
      assertThat(report.getLeaseMillis()).isEqualTo(3_000);
      assertThat(report.getStagesSupported()).isTrue();
      assertThat(report.getChecksum()).isEqualTo(ByteBuffer.wrap(chain.get(1).checksum()));
      int before = reports.size();
      await("renewed within a lease").atMost(TIMEOUT).until(() -> {
        read.run();
        return reports.size() > before;
      });
      assertThat(registry.get("ringshift.client.participant.lease.held").gauge().value()).isEqualTo(1.0);
      assertThat(registry.get("ringshift.client.stage").gauge().value()).isEqualTo(1.0);
      assertThat(client.placement("user:42").readableIds()).as("a held lease: moving ranges served too")
          .isEqualTo(chain.get(0).ring().replicasOf("user:42").ids());

      client.close();
      await("a tombstone once it closed").atMost(TIMEOUT).until(() -> {
        read.run();
        return !tombstones.isEmpty();
      });
    }
  }

  /** A client that reports its hot keys writes them to its topic, keyed cluster/client, hottest first. */
  @Test
  void shouldReportItsHotKeysToKafka() throws InterruptedException {
    String hotKeys = KAFKA.topic("ring.hot-keys");
    KAFKA.kafka().createTopics(List.of(new NewTopic(hotKeys, 1, (short) 1)
        .configs(Map.of("cleanup.policy", "compact"))));
    publisher.publish(TestSnapshots.chain(PUBLISHER, 1).get(0));
    RingClient client = start(config().trackHotKeys(64).reportHotKeys("web-1", Duration.ofSeconds(1))
        .hotKeysTopic(hotKeys).build(), new ArrayList<>());
    awaitEpoch(client, 1);
    for (int i = 0; i < 20_000; i++) {
      client.placement(i % 2 == 0 ? "hot" : "user:" + i);
    }
    Map<String, Object> props = Map.of("bootstrap.servers", KAFKA.bootstrapServers(), "auto.offset.reset", "earliest",
        "group.id", KAFKA.applicationId() + "-hot-keys");
    try (org.apache.kafka.clients.consumer.KafkaConsumer<String, byte[]> consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(props,
            new org.apache.kafka.common.serialization.StringDeserializer(),
            new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
      consumer.subscribe(List.of(hotKeys));
      List<io.ringshift.schemas.avro.HotKeysReport> reports = new ArrayList<>();
      await("a hot-key report on " + hotKeys).atMost(TIMEOUT).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> {
          assertThat(r.key()).isEqualTo(CLUSTER + "/web-1");
          reports.add(io.ringshift.protocol.RecordSerdes.hotKeysReport().deserialize(r.value()));
        });
        return !reports.isEmpty();
      });
      io.ringshift.schemas.avro.HotKeysReport report = reports.get(0);
      assertThat(report.getClientId()).isEqualTo("web-1");
      assertThat(report.getLookups()).isPositive();
      assertThat(report.getKeys()).isNotEmpty().hasSizeLessThanOrEqualTo(20);
      assertThat(StandardCharsets.UTF_8.decode(report.getKeys().get(0).getKey()).toString()).isEqualTo("hot");
      assertThat(report.getKeys().get(0).getShare()).isBetween(0.4, 0.6);
    }
  }

  /**
   * Compaction has left only an old, genuinely signed snapshot (epoch 3) of the cluster on the snapshots topic: a
   * replay, while epoch 5 is the latest the publisher signed PUBLISHED on the epochs topic. A client that starts
   * without a persist file takes its floor from the epochs topic, refuses epoch 3 and routes by nothing until
   * epoch 5 or later arrives. It used to route by epoch 3.
   */
  @Test
  void rejectsAReplayedOldSnapshotOnAColdStartBelowTheLatestSignedPublishedEpoch() throws InterruptedException {
    String epochs = KAFKA.topic("ring.epochs");
    KAFKA.kafka().createTopics(List.of(new NewTopic(epochs, 1, (short) 1)));
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 6);
    try (SnapshotPublisherStub audit = SnapshotPublisherStub.forger(KAFKA.bootstrapServers(), epochs)) {
      for (PublishedSnapshot s : chain.subList(0, 5)) {
        audit.sendRaw(CLUSTER, TestSnapshots.publishedRecord(s));
      }
      // Neither an unsigned record nor one by a stranger's key can raise the floor.
      audit.sendRaw(CLUSTER, TestSnapshots.publishedRecord(TestSnapshots.chain(STRANGER, 9).get(8)));
    }
    publisher.publish(chain.get(2));

    List<SnapshotSwap> swaps = new CopyOnWriteArrayList<>();
    RingClient client = start(config().epochsTopic(epochs).build(), swaps);
    // A client without the floor swaps to epoch 3 within milliseconds of its start.
    await("routing by nothing below the floor").during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
        .until(() -> client.epoch() == RingClient.NO_EPOCH);

    publisher.publish(chain.get(4));
    awaitEpoch(client, 5);
    publisher.publish(chain.get(5));
    awaitEpoch(client, 6);
    // Listeners run right after the swap, on the client's thread: awaitEpoch can return before they do.
    await("the swap listener saw epoch 6").atMost(TIMEOUT).until(() -> swaps.size() == 2);
    assertThat(swaps).extracting(SnapshotSwap::epoch).containsExactly(5L, 6L);
  }

  @Test
  void rejectsForgedSnapshotsCountsThemAndKeepsItsEpoch() throws InterruptedException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 4);
    chain.subList(0, 3).forEach(publisher::publish);
    RingClient client = start(b -> b);
    awaitEpoch(client, 3);
    PublishedSnapshot three = chain.get(2);
    RingSnapshot fourRing = chain.get(3).ring();

    SnapshotPublisherStub forger = open(SnapshotPublisherStub.forger(KAFKA.bootstrapServers(), topic));
    forger.publish(PublishedSnapshot.unsigned(fourRing, three.checksum(), List.of()).signedBy(STRANGER));
    forger.publish(PublishedSnapshot.unsigned(fourRing, three.checksum(), List.of()));
    forger.publish(PublishedSnapshot.unsigned(fourRing, new byte[32], List.of()).signedBy(PUBLISHER));
    forger.sendRaw(CLUSTER, TestSnapshots.alter(chain.get(3), r -> {
      byte[] signature = chain.get(3).signature();
      signature[0] ^= 1;
      r.setSignature(ByteBuffer.wrap(signature));
    }));
    forger.publish(chain.get(1));
    forger.sendRaw(CLUSTER, "not a snapshot".getBytes(StandardCharsets.UTF_8));
    forger.sendRaw(CLUSTER, TestSnapshots.encode(PublishedSnapshot.unsigned(TestSnapshots.ring("other", 4, 5),
        three.checksum(), List.of()).signedBy(PUBLISHER)));
    forger.publish(three); // a byte-identical duplicate: ignored, not refused

    await("seven refusals").atMost(TIMEOUT).until(() -> allRefusals() == 7.0);
    for (RefusalReason reason : List.of(RefusalReason.UNKNOWN_KEY, RefusalReason.UNSIGNED,
        RefusalReason.BROKEN_CHAIN, RefusalReason.BAD_SIGNATURE, RefusalReason.OLDER_EPOCH, RefusalReason.MALFORMED,
        RefusalReason.WRONG_CLUSTER)) {
      assertThat(refusals(reason)).as(reason.name()).isEqualTo(1.0);
    }
    assertThat(refusals(RefusalReason.CHECKSUM)).isZero();
    assertThat(client.epoch()).isEqualTo(3);
    assertThat(client.current()).contains(three);
    assertThat(count("ringshift.client.swaps")).isEqualTo(1.0);

    publisher.publish(chain.get(3));
    awaitEpoch(client, 4);
    assertThat(client.current()).contains(chain.get(3));
    assertThat(allRefusals()).isEqualTo(7.0);
  }

  @Test
  void shouldIgnoreASnapshotOfAnAbortedTransaction() throws InterruptedException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 4);
    chain.subList(0, 3).forEach(publisher::publish);
    RingClient client = start(b -> b);
    awaitEpoch(client, 3);
    // A genuine, signed epoch 4 that the publisher then aborted: it was never published.
    PublishedSnapshot aborted = PublishedSnapshot.unsigned(TestSnapshots.ring(CLUSTER, 4, 12), chain.get(2).checksum(),
        List.of()).signedBy(PUBLISHER);

    publisher.publishAborted(aborted);
    publisher.publish(chain.get(3));
    awaitEpoch(client, 4);

    assertThat(client.current()).contains(chain.get(3));
    assertThat(allRefusals()).isZero();
  }

  @Test
  void shouldAcceptAGapOnItsSignatureAndCountsIt() throws InterruptedException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 5);
    publisher.publish(chain.get(0));
    publisher.publish(chain.get(1));
    RingClient client = start(b -> b);
    awaitEpoch(client, 2);

    publisher.publish(chain.get(4)); // 3 and 4 compacted away, or never seen
    awaitEpoch(client, 5);

    assertThat(count("ringshift.client.gaps")).isEqualTo(1.0);
    assertThat(allRefusals()).isZero();
  }

  @Test
  void shouldColdStartsFromThePersistFileWithoutABrokerAndReportsTheAge() throws IOException, InterruptedException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 3);
    long published = 1_700_000_000_000L;
    for (PublishedSnapshot s : chain) {
      publisher.publish(s, published + s.epoch());
    }
    Path file = dir.resolve("state/snapshot.bin");
    RingClient first = start(b -> b.persistFile(file));
    awaitEpoch(first, 3);
    await("the persist file of epoch 3").atMost(TIMEOUT).until(() -> Files.exists(file));
    first.close();

    String closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = "127.0.0.1:" + socket.getLocalPort();
    }
    MeterRegistry coldRegistry = new SimpleMeterRegistry();
    Clock clock = Clock.fixed(Instant.ofEpochMilli(published + 3 + 45_000), ZoneOffset.UTC);
    RingClient cold = start(RingClientConfig.builder().bootstrapServers(closedPort).clusterId(CLUSTER)
        .trustedKeys(TrustedKeys.of(PUBLISHER.publicKey())).persistFile(file).meterRegistry(coldRegistry)
        .clock(clock).requestTimeout(Duration.ofMillis(500)).build(), new ArrayList<>());

    assertThat(cold.epoch()).isEqualTo(3);
    assertThat(cold.placement("user:42").ownerIds()).isEqualTo(chain.get(2).ring().replicasOf("user:42").ids());
    assertThat(cold.snapshotAge()).contains(Duration.ofSeconds(45));
    assertThat(coldRegistry.get("ringshift.client.snapshot.age").gauge().value()).isEqualTo(45.0);
  }

  @Test
  void shouldRestartFromThePersistFileAndCatchesUpWithoutCountingHistory() throws InterruptedException {
    List<PublishedSnapshot> chain = TestSnapshots.chain(PUBLISHER, 5);
    publisher.publish(chain.get(0));
    publisher.publish(chain.get(1));
    Path file = dir.resolve("snapshot.bin");
    RingClient first = start(b -> b.persistFile(file));
    awaitEpoch(first, 2);
    await("the persist file").atMost(TIMEOUT).until(() -> Files.exists(file));
    first.close();
    chain.subList(2, 5).forEach(publisher::publish);

    List<SnapshotSwap> swaps = new CopyOnWriteArrayList<>();
    MeterRegistry restartRegistry = new SimpleMeterRegistry();
    RingClient restarted = start(config().persistFile(file).meterRegistry(restartRegistry).build(), swaps);
    assertThat(swaps).as("routes by the file before Kafka answers").hasSize(1);
    awaitEpoch(restarted, 5);
    await("the swap listener saw epoch 5").atMost(TIMEOUT).until(() -> swaps.size() == 2);

    assertThat(swaps).extracting(SnapshotSwap::epoch).containsExactly(2L, 5L);
    assertThat(restartRegistry.get("ringshift.client.refusals").counters().stream().mapToDouble(c -> c.count())
        .sum()).as("epoch 1 is history, epoch 2 a duplicate").isZero();
    assertThat(restartRegistry.get("ringshift.client.gaps").counter().count()).isZero();
  }
}
