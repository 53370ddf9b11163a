package io.ringshift.health;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How to run a {@link HealthManager}.
 *
 * @param bootstrapServers Kafka bootstrap servers
 * @param topics the control plane's topics; it reads {@code membership} and {@code epochs} and writes FAIL events to
 *     {@code membership}
 * @param clusterId the cluster whose members it watches
 * @param managerId this instance's name, in the lease group and in log lines; unique among the running managers
 * @param transactionalId the FAIL producer's transactional id, shared by every manager of the deployment (the lease
 *     group is {@code <transactionalId>.lease}): the manager that takes the lease fences the one that held it
 * @param nodes node id to the {@code host:port} of its client port, which serves {@code /health}; members without an
 *     address are not probed and never failed
 * @param probeInterval how often every member is probed
 * @param probeTimeout how long one probe may take before it counts as missed
 * @param misses how many consecutive missed probes a FAIL needs, at least 1
 * @param minDown how long the node must have been missing probes (from its first missed probe of the run to the
 *     latest) before a FAIL; a node that answers once within it starts again from zero
 * @param leaseTimeout how long after the deciding manager stopped answering a standby takes over (at once when it
 *     stops cleanly); at least 1 s, and at least the brokers' {@code group.min.session.timeout.ms}
 * @param timeout how long to wait for Kafka: connecting, reading the topics to their end, a write
 * @param kafkaProperties client properties for the manager's Kafka clients (security, SASL, SSL)
 * @param clock the time of probes and of the written events' {@code timestampMillis}
 */
public record HealthManagerConfig(
    String bootstrapServers,
    Topics topics,
    String clusterId,
    String managerId,
    String transactionalId,
    Map<String, String> nodes,
    Duration probeInterval,
    Duration probeTimeout,
    int misses,
    Duration minDown,
    Duration leaseTimeout,
    Duration timeout,
    KafkaProperties kafkaProperties,
    Clock clock) {

  /** The transactional id (and lease group prefix) of a deployment's health managers unless configured otherwise. */
  public static final String DEFAULT_TRANSACTIONAL_ID = "ringshift-health-manager";
  /** Who the FAIL events it writes are {@code requestedBy}. */
  public static final String REQUESTED_BY = "health-manager";
  public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofSeconds(1);
  public static final Duration DEFAULT_PROBE_TIMEOUT = Duration.ofSeconds(1);
  public static final int DEFAULT_MISSES = 3;
  public static final Duration DEFAULT_MIN_DOWN = Duration.ofSeconds(10);
  public static final Duration DEFAULT_LEASE_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Checks every setting.
   *
   * @throws IllegalArgumentException naming the setting and the rule it breaks
   */
  public HealthManagerConfig {
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(kafkaProperties, "kafkaProperties");
    Objects.requireNonNull(clock, "clock");
    notBlank("clusterId", clusterId);
    notBlank("managerId", managerId);
    notBlank("transactionalId", transactionalId);
    Objects.requireNonNull(nodes, "nodes");
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("nodes was empty; the health manager needs the address of at least one "
          + "node's client port to probe");
    }
    nodes.forEach((id, address) -> {
      notBlank("a node id", id);
      notBlank("the address of node " + id, address);
    });
    nodes = Map.copyOf(new TreeMap<>(nodes));
    positive("probeInterval", probeInterval);
    positive("probeTimeout", probeTimeout);
    positive("timeout", timeout);
    if (misses < 1) {
      throw new IllegalArgumentException("misses was " + misses + "; a FAIL needs at least 1 missed probe (never "
          + "0: that would fail nodes that answer)");
    }
    Objects.requireNonNull(minDown, "minDown");
    if (minDown.isNegative()) {
      throw new IllegalArgumentException("minDown was " + minDown + "; it must be 0 or more");
    }
    Objects.requireNonNull(leaseTimeout, "leaseTimeout");
    if (leaseTimeout.toMillis() < 1000) {
      throw new IllegalArgumentException("leaseTimeout was " + leaseTimeout + "; it must be at least 1 s (and at "
          + "least the brokers' group.min.session.timeout.ms, 6 s by default)");
    }
  }

  /** The defaults ({@link #DEFAULT_MISSES} misses over {@link #DEFAULT_MIN_DOWN}, probes every second). */
  public static HealthManagerConfig of(String bootstrapServers, String clusterId, String managerId,
      Map<String, String> nodes) {
    return new HealthManagerConfig(bootstrapServers, Topics.defaults(), clusterId, managerId,
        DEFAULT_TRANSACTIONAL_ID, nodes, DEFAULT_PROBE_INTERVAL, DEFAULT_PROBE_TIMEOUT, DEFAULT_MISSES,
        DEFAULT_MIN_DOWN, DEFAULT_LEASE_TIMEOUT, Duration.ofSeconds(10), KafkaProperties.none(),
        Clock.systemUTC());
  }

  public HealthManagerConfig withTopics(Topics value) {
    return new HealthManagerConfig(bootstrapServers, value, clusterId, managerId, transactionalId, nodes,
        probeInterval, probeTimeout, misses, minDown, leaseTimeout, timeout, kafkaProperties, clock);
  }

  public HealthManagerConfig withTransactionalId(String value) {
    return new HealthManagerConfig(bootstrapServers, topics, clusterId, managerId, value, nodes,
        probeInterval, probeTimeout, misses, minDown, leaseTimeout, timeout, kafkaProperties, clock);
  }

  /** The debounce: a FAIL after {@code missesValue} consecutive misses spanning at least {@code minDownValue}. */
  public HealthManagerConfig withDebounce(Duration interval, Duration probeTimeoutValue, int missesValue,
      Duration minDownValue) {
    return new HealthManagerConfig(bootstrapServers, topics, clusterId, managerId, transactionalId, nodes,
        interval, probeTimeoutValue, missesValue, minDownValue, leaseTimeout, timeout, kafkaProperties, clock);
  }

  public HealthManagerConfig withLeaseTimeout(Duration value) {
    return new HealthManagerConfig(bootstrapServers, topics, clusterId, managerId, transactionalId, nodes,
        probeInterval, probeTimeout, misses, minDown, value, timeout, kafkaProperties, clock);
  }

  public HealthManagerConfig withTimeout(Duration value) {
    return new HealthManagerConfig(bootstrapServers, topics, clusterId, managerId, transactionalId, nodes,
        probeInterval, probeTimeout, misses, minDown, leaseTimeout, value, kafkaProperties, clock);
  }

  public HealthManagerConfig withKafkaProperties(KafkaProperties value) {
    return new HealthManagerConfig(bootstrapServers, topics, clusterId, managerId, transactionalId, nodes,
        probeInterval, probeTimeout, misses, minDown, leaseTimeout, timeout, value, clock);
  }

  public HealthManagerConfig withClock(Clock value) {
    return new HealthManagerConfig(bootstrapServers, topics, clusterId, managerId, transactionalId, nodes,
        probeInterval, probeTimeout, misses, minDown, leaseTimeout, timeout, kafkaProperties, value);
  }

  private static void notBlank(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " was " + (value == null ? "missing" : "blank")
          + "; it must not be blank");
    }
  }

  private static void positive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " was " + value + "; it must be positive");
    }
  }
}
