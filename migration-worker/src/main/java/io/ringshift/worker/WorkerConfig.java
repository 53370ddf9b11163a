package io.ringshift.worker;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.storage.AdminSecret;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How to run a {@link MigrationWorker}.
 *
 * @param bootstrapServers Kafka bootstrap servers
 * @param groupId the consumer group of every worker of a deployment on {@code ring.tasks}
 * @param workerId this instance's id: written into every status it publishes and used as its static group
 *     member id ({@code group.instance.id}), so a worker restarted with the same id takes its partitions back at
 *     once; two running workers must never share one
 * @param topics the control plane's topics
 * @param nodes where the storage nodes listen
 * @param limits byte rates and concurrency caps at start ({@link MigrationWorker#setLimits} changes them)
 * @param tuning batch sizes, checkpoint frequency, catch-up threshold, poll intervals
 * @param grace how long after an epoch is PUBLISHED its CLEANUP tasks wait before deleting
 * @param startTimeout how long {@link MigrationWorker#start} waits for Kafka
 * @param nodeTimeout how long a call to a storage node may take to connect and to answer (a digest of a large
 *     range takes a while; a node that is down is refused at once, not after this)
 * @param trustedKeys the publisher keys whose PUBLISHED records count for the cleanup gate; null trusts none, and
 *     then cleanups never delete
 * @param sweepInterval how often the worker forgets the epochs it is done with and tombstones their tasks and
 *     statuses (docs/worker.md, "Forgetting finished epochs"); default 30 s
 * @param nodeSecret the admin secret of the nodes' admin listeners, which {@code nodes} name (docs/storage.md, "Two
 *     listeners"); null sends none, and every node refuses the worker's calls as unauthorized
 * @param kafkaProperties client properties for the worker's Kafka clients (security, SASL, SSL)
 */
public record WorkerConfig(String bootstrapServers, String groupId, String workerId, Topics topics,
    NodeDirectory nodes, Limits limits, TaskTuning tuning, Duration grace, Duration startTimeout,
    Duration nodeTimeout, TrustedKeys trustedKeys, Duration sweepInterval, AdminSecret nodeSecret,
    KafkaProperties kafkaProperties) {

  public static final String DEFAULT_GROUP_ID = "ringshift-migration-worker";
  public static final Duration DEFAULT_GRACE = Duration.ofMinutes(10);
  public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMinutes(2);
  public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(30);
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,200}");

  /** @throws IllegalArgumentException naming the first value that breaks its rule */
  public WorkerConfig {
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(nodes, "nodes");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(tuning, "tuning");
    Objects.requireNonNull(kafkaProperties, "kafkaProperties");
    if (bootstrapServers.isBlank()) {
      throw new IllegalArgumentException("bootstrapServers was blank; give HOST:PORT of a broker");
    }
    checkId("groupId", groupId);
    checkId("workerId", workerId);
    if (grace == null || grace.isNegative()) {
      throw new IllegalArgumentException("grace was " + grace + "; it must be >= 0");
    }
    if (startTimeout == null || startTimeout.isNegative() || startTimeout.isZero()) {
      throw new IllegalArgumentException("startTimeout was " + startTimeout + "; it must be > 0");
    }
    if (nodeTimeout == null || nodeTimeout.isNegative() || nodeTimeout.isZero()) {
      throw new IllegalArgumentException("nodeTimeout was " + nodeTimeout + "; it must be > 0");
    }
    if (sweepInterval == null || sweepInterval.isNegative() || sweepInterval.isZero()) {
      throw new IllegalArgumentException("sweepInterval was " + sweepInterval + "; it must be > 0");
    }
  }

  /** Without Kafka client properties. */
  public WorkerConfig(String bootstrapServers, String groupId, String workerId, Topics topics, NodeDirectory nodes,
      Limits limits, TaskTuning tuning, Duration grace, Duration startTimeout, Duration nodeTimeout,
      TrustedKeys trustedKeys, Duration sweepInterval, AdminSecret nodeSecret) {
    this(bootstrapServers, groupId, workerId, topics, nodes, limits, tuning, grace, startTimeout, nodeTimeout,
        trustedKeys, sweepInterval, nodeSecret, KafkaProperties.none());
  }

  /**
   * The defaults: group {@value #DEFAULT_GROUP_ID}, standard topics, default limits and tuning, 10 min grace,
   * 60 s to start, 2 min per node call.
   */
  public static WorkerConfig of(String bootstrapServers, String workerId, NodeDirectory nodes) {
    return new WorkerConfig(bootstrapServers, DEFAULT_GROUP_ID, workerId, Topics.defaults(), nodes,
        Limits.DEFAULTS, TaskTuning.DEFAULTS, DEFAULT_GRACE, Duration.ofSeconds(60), DEFAULT_NODE_TIMEOUT, null,
        DEFAULT_SWEEP_INTERVAL, null);
  }

  public WorkerConfig withGroupId(String id) {
    return new WorkerConfig(bootstrapServers, id, workerId, topics, nodes, limits,
        tuning, grace, startTimeout, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  public WorkerConfig withTopics(Topics t) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, t, nodes, limits,
        tuning, grace, startTimeout, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  public WorkerConfig withLimits(Limits l) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, l,
        tuning, grace, startTimeout, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  public WorkerConfig withTuning(TaskTuning t) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        t, grace, startTimeout, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  public WorkerConfig withGrace(Duration g) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, g, startTimeout, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  public WorkerConfig withStartTimeout(Duration t) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, grace, t, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  public WorkerConfig withNodeTimeout(Duration t) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, grace, startTimeout, t, trustedKeys, sweepInterval, nodeSecret, kafkaProperties);
  }

  /** The publisher keys whose PUBLISHED records open the cleanup gate. */
  public WorkerConfig withTrustedKeys(TrustedKeys keys) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, grace, startTimeout, nodeTimeout, keys, sweepInterval, nodeSecret, kafkaProperties);
  }

  /** How often the worker sweeps the epochs it is done with. */
  public WorkerConfig withSweepInterval(Duration interval) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, grace, startTimeout, nodeTimeout, trustedKeys, interval, nodeSecret, kafkaProperties);
  }

  /** The admin secret the nodes' admin listeners check. */
  public WorkerConfig withNodeSecret(AdminSecret secret) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, grace, startTimeout, nodeTimeout, trustedKeys, sweepInterval, secret, kafkaProperties);
  }

  private static void checkId(String name, String value) {
    if (value == null || !ID.matcher(value).matches()) {
      throw new IllegalArgumentException(name + " was \"" + value + "\"; it must be 1 to 200 letters, digits, '.', "
          + "'_' or '-'");
    }
  }

  public WorkerConfig withKafkaProperties(KafkaProperties properties) {
    return new WorkerConfig(bootstrapServers, groupId, workerId, topics, nodes, limits,
        tuning, grace, startTimeout, nodeTimeout, trustedKeys, sweepInterval, nodeSecret, properties);
  }
}
