package io.ringshift.orchestrator;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.TopicReplication;
import io.ringshift.protocol.Topics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;

/**
 * How to run the orchestrator.
 *
 * @param bootstrapServers Kafka bootstrap servers
 * @param applicationId Kafka Streams application id (consumer group, internal topic prefix)
 * @param stateDir Kafka Streams state directory
 * @param topics the topics to read and write
 * @param partitions partitions of the topics it creates
 * @param replicationFactor replication factor of the topics it creates, or {@link #REPLICATION_FROM_CLUSTER} to
 *     pick it from the broker count (3 with {@code min.insync.replicas=2} on 3 brokers or more)
 * @param clusterBytes estimated logical bytes of a cluster, for the tasks' byte estimates; 0 when unknown
 * @param kafkaProperties client properties for every Kafka client of the orchestrator (security, SASL, SSL)
 */
public record OrchestratorConfig(
    String bootstrapServers,
    String applicationId,
    Path stateDir,
    Topics topics,
    int partitions,
    short replicationFactor,
    long clusterBytes,
    KafkaProperties kafkaProperties) {

  public static final String DEFAULT_APPLICATION_ID = "ringshift-orchestrator";
  /**
   * How long an instance that stopped answering keeps its partitions before another instance takes them over (its
   * consumers' {@code session.timeout.ms}; {@code consumer.session.timeout.ms} in the client properties changes it).
   */
  public static final Duration SESSION_TIMEOUT = Duration.ofSeconds(10);
  /** A {@code replicationFactor} of 0: chosen by {@link TopicReplication#forBrokers} when the orchestrator starts. */
  public static final short REPLICATION_FROM_CLUSTER = 0;

  public OrchestratorConfig {
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    Objects.requireNonNull(applicationId, "applicationId");
    Objects.requireNonNull(stateDir, "stateDir");
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(kafkaProperties, "kafkaProperties");
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions was " + partitions + "; partitions must be >= 1");
    }
    if (replicationFactor < 0) {
      throw new IllegalArgumentException("replicationFactor was " + replicationFactor
          + "; replicationFactor must be >= 1, or 0 to pick it from the number of brokers");
    }
    if (clusterBytes < 0) {
      throw new IllegalArgumentException("clusterBytes was " + clusterBytes + "; clusterBytes must be >= 0");
    }
  }

  /** Without client properties. */
  public OrchestratorConfig(String bootstrapServers, String applicationId, Path stateDir, Topics topics,
      int partitions, short replicationFactor, long clusterBytes) {
    this(bootstrapServers, applicationId, stateDir, topics, partitions, replicationFactor, clusterBytes,
        KafkaProperties.none());
  }

  /** Defaults for one local broker: standard topics, 3 partitions, replication factor 1. */
  public static OrchestratorConfig local(String bootstrapServers, Path stateDir) {
    return new OrchestratorConfig(bootstrapServers, DEFAULT_APPLICATION_ID, stateDir, Topics.defaults(), 3,
        (short) 1, 0);
  }

  public OrchestratorConfig withApplicationId(String id) {
    return new OrchestratorConfig(bootstrapServers, id, stateDir, topics, partitions, replicationFactor,
        clusterBytes, kafkaProperties);
  }

  public OrchestratorConfig withTopics(Topics newTopics) {
    return new OrchestratorConfig(bootstrapServers, applicationId, stateDir, newTopics, partitions,
        replicationFactor, clusterBytes, kafkaProperties);
  }

  public OrchestratorConfig withKafkaProperties(KafkaProperties properties) {
    return new OrchestratorConfig(bootstrapServers, applicationId, stateDir, topics, partitions,
        replicationFactor, clusterBytes, properties);
  }

  /**
   * Kafka Streams properties: the client properties first, then exactly_once_v2, explicit serdes everywhere,
   * internal topics (changelogs, repartition) replicated as the control plane's topics are.
   */
  public Properties streamsProperties(TopicReplication replication) {
    Properties p = new Properties();
    // Defaults an operator may change with the client properties: an instance that is killed or cut off hands its
    // partitions to another after 10 s (Kafka's default is 45 s), and each instance keeps a warm copy of another's
    // state, so a standby takes over without restoring it from the changelogs first.
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), (int) SESSION_TIMEOUT.toMillis());
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
        (int) SESSION_TIMEOUT.toMillis() / 5);
    p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
    kafkaProperties.applyTo(p);
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) replication.factor());
    p.put(StreamsConfig.topicPrefix(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG), String.valueOf(replication.minInSync()));
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    // Commit often: an operator waits for the epoch a change produces (EOS output is visible at commit).
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    return p;
  }
}
