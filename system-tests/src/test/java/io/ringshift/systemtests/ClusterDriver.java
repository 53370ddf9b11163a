package io.ringshift.systemtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.worker.WorkerConfig;
import io.ringshift.worker.TaskTuning;
import io.ringshift.worker.MigrationWorker;
import io.ringshift.worker.Limits;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.protocol.Topics;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Drives one cluster's control plane for the end-to-end ITs, as an operator and a deployment would: starts the
 * {@link LocalControlPlane} on the test's broker (the orchestrator, storage nodes; no publisher: the tests start their
 * own or write PUBLISHED records themselves) and a {@link ControlPlaneTail};
 * declares and changes the membership on {@code ring.membership}; rebuilds each epoch's ring from its record; and
 * starts migration workers that reach the nodes over HTTP.
 *
 * <p>The driver owns what it starts and whatever a test hands to {@link #own}; {@link #close()} closes all of it
 * in reverse order, so that what was started last (workers, clients) stops before the control plane it talks to.
 * Not thread safe: one test thread drives it.
 */
public final class ClusterDriver implements AutoCloseable {
  /** How long the driver (and the tail) waits for the control plane. */
  public static final Duration TIMEOUT = ControlPlaneTail.TIMEOUT;
  /**
   * Small batches and short intervals, so that a test of a few MB sees checkpoints, several catch-up passes and a
   * quick reaction to the fence request; retries (the cleanup gate) twice a second.
   */
  public static final TaskTuning TUNING = TaskTuning.DEFAULTS.withBatch(256 * 1024, 1000)
      .withCheckpoints(1 << 20, Duration.ofSeconds(2))
      .withIntervals(Duration.ofMillis(200), Duration.ofMillis(500));
  /** No byte rate: these ITs are about the protocol; the throttles have their own tests. */
  public static final Limits LIMITS = Limits.unlimited().withCaps(8, 4, 8);

  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private final EmbeddedKafkaExtension kafka;
  private final String clusterId;
  private final String requestedBy;
  private final String requestIdPrefix;
  private final Topics topics;
  private final ControlPlaneTail tail;
  private final LocalControlPlane plane;
  private final LocalNodes nodes;
  private final KafkaProducer<byte[], byte[]> producer;
  /** The publisher's key, or one the tests sign their own PUBLISHED records with; the workers trust it. */
  private final SigningKey publisherKey;
  private int requests;

  /**
   * Starts the control plane of cluster {@code clusterId} on this test's broker and topics ({@code kafka}'s topic
   * prefix and application id), with its state and the nodes' stores under {@code dir}. Membership events carry
   * {@code requestedBy} and request ids {@code requestIdPrefix + n}.
   *
   * @throws IllegalStateException when the orchestrator does not start within {@link #TIMEOUT}; whatever was
   *     started by then is closed
   */
  public ClusterDriver(EmbeddedKafkaExtension kafka, Path dir, String clusterId, String requestedBy,
      String requestIdPrefix) {
    this(kafka, dir, clusterId, requestedBy, requestIdPrefix, null);
  }

  /**
   * As above, and with {@code publisherKey} the plane also runs the snapshot publisher signing with it (its public
   * key in {@code dir/publisher.pub}), and the nodes follow the cluster's published ring.
   */
  public ClusterDriver(EmbeddedKafkaExtension kafka, Path dir, String clusterId, String requestedBy,
      String requestIdPrefix, SigningKey publisherKey) {
    this.publisherKey = publisherKey == null ? SigningKey.generate() : publisherKey;
    this.kafka = kafka;
    this.clusterId = clusterId;
    this.requestedBy = requestedBy;
    this.requestIdPrefix = requestIdPrefix;
    this.topics = Topics.withPrefix(kafka.topicPrefix());
    try {
      LocalControlPlane.Builder settings = LocalControlPlane.builder()
          .existingBroker(kafka.bootstrapServers())
          .applicationId(kafka.applicationId())
          .topicPrefix(kafka.topicPrefix())
          .dataDir(dir)
          .startupTimeout(TIMEOUT)
          .clusterId(clusterId)
          .nodes(0, 0);
      if (publisherKey == null) {
        settings.withoutPublisher();
      } else {
        settings.signingKey(publisherKey);
      }
      plane = own(settings.start());
      nodes = plane.nodes().orElseThrow();
      tail = own(new ControlPlaneTail(kafka.bootstrapServers(), topics));
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
      producer = own(new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer()));
    } catch (RuntimeException e) {
      try {
        close();
      } catch (Exception closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  public Topics topics() {
    return topics;
  }

  public ControlPlaneTail tail() {
    return tail;
  }

  /** The plane the driver runs: the orchestrator, the nodes, the publisher when it has a key. */
  public LocalControlPlane plane() {
    return plane;
  }

  public LocalNodes nodes() {
    return nodes;
  }

  /** Hands {@code resource} to the driver, to be closed by {@link #close()} before everything owned earlier. */
  public <T extends AutoCloseable> T own(T resource) {
    resources.push(resource);
    return resource;
  }

  /**
   * Starts {@code nodeCount} nodes, {@code node-01} on, in zones {@code az-1} to {@code az-3} in turn, declares
   * the cluster with them (INIT) and returns its epoch-1 ring, rebuilt from its READY record.
   *
   * @throws AssertionError when epoch 1 is not READY within {@link #TIMEOUT}
   */
  public RingSnapshot initCluster(int nodeCount, int vnodes, int replicas) {
    List<MemberSpec> members = new ArrayList<>();
    for (int i = 1; i <= nodeCount; i++) {
      String id = String.format("node-%02d", i);
      String zone = "az-" + ((i - 1) % 3 + 1);
      members.add(new MemberSpec(id, zone, 1.0, MemberSpecState.ACTIVE, java.util.List.of()));
      nodes.start(id, zone);
    }
    send(event(MembershipAction.INIT, "", null)
        .setInitialMembers(members).setVnodes(vnodes).setReplicas(replicas)
        .build());
    return ringOf(tail.awaitEpoch(1, EpochState.READY).value());
  }

  /**
   * Requests a membership change of {@code node} ({@code zone} only for a join) as an operator's tool would;
   * returns {@link System#nanoTime()} once the request is acked, for the tests' timelines.
   *
   * @throws AssertionError when the request is not acknowledged within {@link #TIMEOUT}
   */
  public long change(MembershipAction action, String node, String zone) {
    return send(event(action, node, zone).build());
  }

  private MembershipEvent.Builder event(MembershipAction action, String node, String zone) {
    return MembershipEvent.newBuilder()
        .setClusterId(clusterId).setNodeId(node).setAction(action).setZone(zone)
        .setRequestId(requestIdPrefix + (++requests)).setRequestedBy(requestedBy)
        .setTimestampMillis(System.currentTimeMillis());
  }

  private long send(MembershipEvent event) {
    write(topics.membership().name(), RecordKeys.membershipKey(event),
        RecordSerdes.membershipEvent().serialize(event));
    return System.nanoTime();
  }

  /**
   * Writes one record (key as UTF-8) and waits up to {@link #TIMEOUT} for the ack.
   *
   * @throws AssertionError when the write is not acknowledged
   */
  public void write(String topic, String key, byte[] value) {
    try {
      producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value))
          .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new AssertionError("could not write to " + topic + ": " + e, e);
    }
  }

  /**
   * A worker's configuration as these ITs deploy it: this test's topics and group, {@link #LIMITS}, {@link #TUNING},
   * and every started node reached through its address in the directory.
   */
  public WorkerConfig workerConfig(String workerId) {
    return WorkerConfig.of(kafka.bootstrapServers(), workerId, nodes.directory())
        .withTrustedKeys(TrustedKeys.of(publisherKey.publicKey()))
        .withNodeSecret(nodes.secret())
        .withTopics(topics)
        .withGroupId(kafka.applicationId() + "-workers")
        .withLimits(LIMITS)
        .withTuning(TUNING);
  }

  /** The key the workers trust as the publisher's: the plane's publisher signs with it, or a test's own. */
  public SigningKey publisherKey() {
    return publisherKey;
  }

  /** {@code record} signed as the publisher would sign it, so that the workers count it. */
  public EpochRecord signed(EpochRecord record) {
    return EpochRecords.signedBy(record, publisherKey);
  }

  /** Starts a worker that reaches every node over HTTP, as deployed; the driver owns it. */
  public MigrationWorker startWorker(WorkerConfig config, Clock clock) {
    return plane.startWorker(config, clock);
  }

  /**
   * The ring an epoch record describes, rebuilt with the ring library as a client would, and checked against the
   * record's checksum: proof that a test places keys exactly as the orchestrator planned them.
   *
   * @throws AssertionError when the record's hash is not the one the nodes store keys by
   * @throws io.ringshift.protocol.CodecException when the rebuilt ring's checksum is not the record's
   */
  public static RingSnapshot ringOf(EpochRecord record) {
    assertThat(record.getHashId()).as("the ring hash the nodes store keys by").isEqualTo(RingHash.xxh3().id());
    return EpochRecords.ring(record);
  }

  /**
   * Closes everything owned, last owned first; every close is attempted.
   *
   * @throws Exception the first failure to close, with the later ones suppressed
   */
  @Override
  public void close() throws Exception {
    Exception first = null;
    while (!resources.isEmpty()) {
      try {
        resources.pop().close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
