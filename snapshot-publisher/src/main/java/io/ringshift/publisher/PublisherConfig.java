package io.ringshift.publisher;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.List;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * How to run a {@link SnapshotPublisher}.
 *
 * @param bootstrapServers Kafka bootstrap servers
 * @param topics the control plane's topics; it reads {@code epochs}, {@code tasks} and {@code taskStatus} and writes
 *     {@code snapshots} and {@code epochs}
 * @param signingKey the Ed25519 key that signs every published snapshot; clients trust its public half
 * @param transactionalId the producer's transactional id: stable across restarts, so that a new publisher fences
 *     the one it replaces; one per deployment (two publishers with different ids would both publish)
 * @param clock gives the written records' {@code timestampMillis}
 * @param partitions partitions of {@code ring.snapshots} when the publisher has to create it
 * @param replicationFactor replication factor of {@code ring.snapshots} when the publisher has to create it, or
 *     {@link #REPLICATION_FROM_CLUSTER} to pick it from the broker count as the orchestrator does
 * @param timeout how long to wait for Kafka: connecting, each request, and a read of a topic to its end that makes
 *     no progress
 * @param previousKeys public keys of earlier signing keys whose PUBLISHED records the log holds (after a key
 *     rotation): the publisher builds its history only from PUBLISHED records signed by its own key or one of these,
 *     and ignores, with an error, any other (a record forged by someone else who can write {@code ring.epochs}); 3 x the timeout is how long a READY epoch whose tasks do not add up yet waits for them before
 *     it is rejected
 * @param kafkaProperties client properties for the publisher's Kafka clients (security, SASL, SSL)
 * @param leaseTimeout publishers with the same transactional id elect the one that publishes through a consumer
 *     group; the others stand by and one takes over this long after the active one stopped answering (at once
 *     when it stops cleanly). {@link Duration#ZERO} turns the election off: every instance publishes, and a new
 *     one fences the one before, which stops
 * @param transitionStages whether a change that moves ranges is published in transition stages, with no write pause
 *     (docs/protocol.md, "Transition stages"); false publishes every change at the fence, as before stages. On by
 *     default
 */
public record PublisherConfig(
    String bootstrapServers,
    Topics topics,
    SigningKey signingKey,
    String transactionalId,
    Clock clock,
    int partitions,
    short replicationFactor,
    Duration timeout,
    List<PublicKey> previousKeys,
    KafkaProperties kafkaProperties,
    Duration leaseTimeout,
    boolean transitionStages) {

  /** A {@code replicationFactor} of 0: {@link io.ringshift.protocol.TopicReplication#forBrokers} of the cluster. */
  public static final short REPLICATION_FROM_CLUSTER = 0;

  /** How long after the active publisher stopped answering a standby takes over, unless configured otherwise. */
  public static final Duration DEFAULT_LEASE_TIMEOUT = Duration.ofSeconds(10);

  /** The transactional id of a deployment's publisher unless configured otherwise. */
  public static final String DEFAULT_TRANSACTIONAL_ID = "ringshift-publisher";

  /**
   * Checks every setting.
   *
   * @throws IllegalArgumentException naming the setting when the transactional id is blank, the partitions or
   *     replication factor are below 1 or the timeout is not positive
   */
  public PublisherConfig {
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(signingKey, "signingKey");
    Objects.requireNonNull(transactionalId, "transactionalId");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(timeout, "timeout");
    previousKeys = List.copyOf(previousKeys);
    Objects.requireNonNull(kafkaProperties, "kafkaProperties");
    Objects.requireNonNull(leaseTimeout, "leaseTimeout");
    if (leaseTimeout.isNegative() || (!leaseTimeout.isZero() && leaseTimeout.toMillis() < 1000)) {
      throw new IllegalArgumentException("leaseTimeout was " + leaseTimeout + "; it must be 0 (no election) or at "
          + "least 1 s");
    }
    if (transactionalId.isBlank()) {
      throw new IllegalArgumentException("transactionalId was \"" + transactionalId + "\"; it must not be blank");
    }
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions was " + partitions + "; partitions must be >= 1");
    }
    if (replicationFactor < 0) {
      throw new IllegalArgumentException("replicationFactor was " + replicationFactor
          + "; replicationFactor must be >= 1, or 0 to pick it from the number of brokers");
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout was " + timeout + "; it must be positive");
    }
  }

  /** Without Kafka client properties. */
  public PublisherConfig(String bootstrapServers, Topics topics, SigningKey signingKey, String transactionalId,
      Clock clock, int partitions, short replicationFactor, Duration timeout, List<PublicKey> previousKeys) {
    this(bootstrapServers, topics, signingKey, transactionalId, clock, partitions, replicationFactor, timeout,
        previousKeys, KafkaProperties.none(), DEFAULT_LEASE_TIMEOUT, true);
  }

  /** With transition stages on. */
  public PublisherConfig(String bootstrapServers, Topics topics, SigningKey signingKey, String transactionalId,
      Clock clock, int partitions, short replicationFactor, Duration timeout, List<PublicKey> previousKeys,
      KafkaProperties kafkaProperties, Duration leaseTimeout) {
    this(bootstrapServers, topics, signingKey, transactionalId, clock, partitions, replicationFactor, timeout,
        previousKeys, kafkaProperties, leaseTimeout, true);
  }

  /** Whether changes that move ranges are published in transition stages (see {@code transitionStages}). */
  public PublisherConfig withTransitionStages(boolean on) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, clock, partitions,
        replicationFactor, timeout, previousKeys, kafkaProperties, leaseTimeout, on);
  }

  /**
   * Defaults for one local broker: standard topics, transactional id {@value #DEFAULT_TRANSACTIONAL_ID}, the
   * system clock, {@code ring.snapshots} created with 3 partitions and replication factor 1, a 30 s timeout.
   */
  public static PublisherConfig of(String bootstrapServers, SigningKey signingKey) {
    return new PublisherConfig(bootstrapServers, Topics.defaults(), signingKey, DEFAULT_TRANSACTIONAL_ID,
        Clock.systemUTC(), 3, (short) 1, Duration.ofSeconds(30), List.of());
  }

  /**
   * {@link #of(String, SigningKey)} with the key read from a key file ({@link SigningKey#read}).
   *
   * @throws IllegalArgumentException naming the file when it does not hold an Ed25519 key pair
   * @throws IOException when the file cannot be read
   */
  public static PublisherConfig of(String bootstrapServers, Path signingKeyFile) throws IOException {
    return of(bootstrapServers, SigningKey.read(signingKeyFile));
  }

  public PublisherConfig withTopics(Topics newTopics) {
    return new PublisherConfig(bootstrapServers, newTopics, signingKey, transactionalId, clock, partitions,
        replicationFactor, timeout, previousKeys, kafkaProperties, leaseTimeout, transitionStages);
  }

  public PublisherConfig withTransactionalId(String id) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, id, clock, partitions, replicationFactor,
        timeout, previousKeys, kafkaProperties, leaseTimeout, transitionStages);
  }

  public PublisherConfig withClock(Clock newClock) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, newClock, partitions,
        replicationFactor, timeout, previousKeys, kafkaProperties, leaseTimeout, transitionStages);
  }

  /** Partitions and replication factor of {@code ring.snapshots}, if the publisher creates it. */
  public PublisherConfig withTopicCreation(int newPartitions, short newReplicationFactor) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, clock, newPartitions,
        newReplicationFactor, timeout, previousKeys, kafkaProperties, leaseTimeout, transitionStages);
  }

  /** The earlier keys whose PUBLISHED records the publisher accepts as its history (see {@code previousKeys}). */
  public PublisherConfig withPreviousKeys(List<PublicKey> keys) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, clock, partitions,
        replicationFactor, timeout, keys, kafkaProperties, leaseTimeout, transitionStages);
  }

  /** The keys a PUBLISHED record of the log must be signed by: this publisher's own and the previous ones. */
  public TrustedKeys historyKeys() {
    List<PublicKey> all = new java.util.ArrayList<>(previousKeys);
    all.add(signingKey.publicKey());
    return TrustedKeys.of(all);
  }

  public PublisherConfig withKafkaProperties(KafkaProperties properties) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, clock, partitions,
        replicationFactor, timeout, previousKeys, properties, leaseTimeout, transitionStages);
  }

  /** How long a standby waits for an unresponsive active publisher; {@link Duration#ZERO}: no election. */
  public PublisherConfig withLeaseTimeout(Duration timeout) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, clock, partitions,
        replicationFactor, this.timeout, previousKeys, kafkaProperties, timeout, transitionStages);
  }

  public PublisherConfig withTimeout(Duration newTimeout) {
    return new PublisherConfig(bootstrapServers, topics, signingKey, transactionalId, clock, partitions,
        replicationFactor, newTimeout, previousKeys, kafkaProperties, leaseTimeout, transitionStages);
  }
}
