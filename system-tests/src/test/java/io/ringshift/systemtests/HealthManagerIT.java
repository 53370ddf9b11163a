package io.ringshift.systemtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.health.HealthListener;
import io.ringshift.health.HealthManager;
import io.ringshift.health.HealthManagerConfig;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.ReadToEnd;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.storage.NodeServer;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failure detection end to end (issue 12): the orchestrator, the publisher and six real storage nodes (RocksDB behind
 * HTTP) on the test's broker, and one or two {@link HealthManager}s probing the nodes' {@code /health} over HTTP. A
 * node's server is stopped for good, or stopped and started again on the same port; what counts is what lands on
 * {@code ring.membership} and {@code ring.epochs}.
 *
 * <p>The debounce is shortened for the test: a probe every 200 ms, a FAIL after 3 misses over at least 3 s; the
 * lease times out after 6 s (the brokers' minimum session timeout).
 */
class HealthManagerIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final String CLUSTER = "c1";
  private static final Duration MIN_DOWN = Duration.ofSeconds(3);
  private static final Duration TIMEOUT = ClusterDriver.TIMEOUT;

  @TempDir Path dir;

  private ClusterDriver cluster;
  private LocalNodes nodes;
  private final List<String> events = new CopyOnWriteArrayList<>();

  @BeforeEach
  void startTheCluster() {
    cluster = new ClusterDriver(KAFKA, dir, CLUSTER, "HealthManagerIT", "hm-it-", SigningKey.generate());
    nodes = cluster.nodes();
    cluster.initCluster(6, 16, 3);
    cluster.tail().awaitEpoch(1, EpochState.PUBLISHED);
  }

  @AfterEach
  void closeEverything() throws Exception {
    System.out.println("health manager events: " + events);
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void shouldFailANodeStoppedForGoodOnceAfterTheDebounce() throws Exception {
    HealthManager manager = startManager("hm-a");
    awaitDeciding(manager);

    long stopped = System.nanoTime();
    nodes.node("node-04").server().close();

    EpochRecord failure = awaitFailureEpoch("node-04");
    Duration detected = Duration.ofNanos(System.nanoTime() - stopped);
    System.out.printf("node-04 stopped: failure epoch %d PUBLISHED %d ms later%n", failure.getEpoch(),
        detected.toMillis());
    assertThat(detected).as("never before the debounce window").isGreaterThanOrEqualTo(MIN_DOWN);
    assertThat(failure.getCause().getRequestedBy()).isEqualTo(HealthManagerConfig.REQUESTED_BY);
    assertThat(failure.getMembers()).extracting(m -> m.getId()).doesNotContain("node-04").hasSize(5);

    await("nothing more is written while node-04 stays down").during(MIN_DOWN.multipliedBy(2))
        .atMost(MIN_DOWN.multipliedBy(2).plus(TIMEOUT)).until(() -> fails().size() == 1);
    assertThat(fails("node-04")).hasSize(1);
    assertThat(failureEpochs("node-04")).hasSize(1);
    assertThat(manager.failedNodes()).containsExactly("node-04");
    assertThat(fails()).as("no other node failed").hasSize(1);
  }

  @Test
  void shouldNotFailANodePausedShorterThanTheWindow() throws Exception {
    HealthManager manager = startManager("hm-a");
    awaitDeciding(manager);

    LocalNodes.Node node = nodes.node("node-02");
    int port = Integer.parseInt(node.hostPort().substring(node.hostPort().lastIndexOf(':') + 1));
    node.server().close();
    await("node-02 suspected").atMost(TIMEOUT).until(() -> events.contains("suspected node-02"));
    await("node-02 down for half the window, not failed").during(MIN_DOWN.dividedBy(2))
        .atMost(MIN_DOWN.plus(TIMEOUT)).until(() -> fails().isEmpty());
    cluster.own(NodeServer.start(node.store(), new InetSocketAddress("127.0.0.1", port)));
    await("node-02 recovered").atMost(TIMEOUT).until(() -> events.stream().anyMatch(e ->
        e.startsWith("recovered node-02")));

    await("node-02 never failed after it came back").during(MIN_DOWN.multipliedBy(3))
        .atMost(MIN_DOWN.multipliedBy(3).plus(TIMEOUT)).until(() -> fails().isEmpty());
    assertThat(fails()).isEmpty();
    assertThat(manager.failedNodes()).isEmpty();
    assertThat(cluster.tail().epochRecords()).extracting(EpochRecord::getEpoch).containsOnly(1L);
  }

  @Test
  void shouldFailOnceWithTwoManagersAndNotAgainAfterATakeover() throws Exception {
    HealthManager a = startManager("hm-a");
    HealthManager b = startManager("hm-b");
    await("one manager decides").atMost(TIMEOUT).until(() -> a.deciding() || b.deciding());
    assertThat(a.holdsLease() && b.holdsLease()).as("one lease holder").isFalse();

    nodes.node("node-05").server().close();
    awaitFailureEpoch("node-05");
    await("node-05 failed once while the decider runs").during(MIN_DOWN).atMost(MIN_DOWN.plus(TIMEOUT))
        .until(() -> fails("node-05").size() == 1);

    // The decider stops; the standby, which probed node-05 all along, takes over from what Kafka says.
    HealthManager decider = a.deciding() ? a : b;
    HealthManager standby = decider == a ? b : a;
    decider.close();
    awaitDeciding(standby);
    await("the standby does not fail node-05 again").during(MIN_DOWN.multipliedBy(3))
        .atMost(MIN_DOWN.multipliedBy(3).plus(TIMEOUT)).until(() -> fails("node-05").size() == 1);

    assertThat(fails("node-05")).hasSize(1);
    assertThat(failureEpochs("node-05")).hasSize(1);
    assertThat(a.failedNodes().size() + b.failedNodes().size()).isEqualTo(1);
    assertThat(standby.failedNodes()).isEmpty();
  }

  private HealthManager startManager(String id) {
    Map<String, String> addresses = new TreeMap<>();
    nodes.clientPorts().nodes().forEach((node, address) -> addresses.put(node, address.toString()));
    HealthManagerConfig config = HealthManagerConfig.of(KAFKA.bootstrapServers(), CLUSTER, id, addresses)
        .withTopics(cluster.topics())
        .withTransactionalId(KAFKA.applicationId() + "-health")
        .withDebounce(Duration.ofMillis(200), Duration.ofMillis(300), 3, MIN_DOWN)
        .withLeaseTimeout(Duration.ofSeconds(6))
        .withTimeout(Duration.ofSeconds(10));
    HealthManager manager = new HealthManager(config, new HealthListener() {
      @Override
      public void suspected(String node, String reason) {
        events.add("suspected " + node);
      }

      @Override
      public void recovered(String node, int misses) {
        events.add("recovered " + node + " after " + misses);
      }

      @Override
      public void failed(String node, String requestId, int misses, String reason) {
        events.add(id + " failed " + node + ": " + reason);
      }

      @Override
      public void activeChanged(boolean active) {
        events.add(id + (active ? " decides" : " stands by"));
      }
    });
    return cluster.own(manager.start());
  }

  private static void awaitDeciding(HealthManager manager) {
    await(manager.config().managerId() + " decides").atMost(TIMEOUT).until(manager::deciding);
  }

  /** The failure epoch a FAIL of {@code node} caused, once PUBLISHED. */
  private EpochRecord awaitFailureEpoch(String node) {
    return await("the failure epoch of " + node + " PUBLISHED").atMost(TIMEOUT)
        .until(() -> failureEpochs(node).stream().filter(r -> r.getState() == EpochState.PUBLISHED).findFirst()
            .orElse(null), r -> r != null);
  }

  /**
   * The PUBLISHED epoch records a FAIL of {@code node} caused: its failure epoch (the repair epoch after it needs a
   * worker, which these tests do not run, so it is never published here).
   */
  private List<EpochRecord> failureEpochs(String node) {
    return cluster.tail().epochRecords().stream()
        .filter(r -> r.getState() == EpochState.PUBLISHED)
        .filter(r -> r.getCause().getAction() == MembershipAction.FAIL && r.getCause().getNodeId().equals(node))
        .toList();
  }

  /** Every FAIL on ring.membership, read from the beginning. */
  private List<MembershipEvent> fails() {
    String topic = cluster.topics().membership().name();
    try (KafkaConsumer<byte[], byte[]> consumer = KafkaClients.readCommittedConsumer(KAFKA.bootstrapServers(),
        KafkaProperties.none(), TIMEOUT, "health-it-reader")) {
      Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(topic, p.partition())).toList());
      List<MembershipEvent> fails = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> r : ReadToEnd.fromBeginning(consumer, ends, TIMEOUT, topic)) {
        MembershipEvent event = RecordSerdes.membershipEvent().deserialize(r.value());
        if (event.getAction() == MembershipAction.FAIL) {
          fails.add(event);
        }
      }
      return fails;
    }
  }

  private List<MembershipEvent> fails(String node) {
    return fails().stream().filter(e -> e.getNodeId().equals(node)).toList();
  }
}
