package io.ringshift.dashboard;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What a dashboard shows and where it listens. Everything but the bootstrap address has a default ({@link #of}); the
 * node addresses and the two suppliers add what the topics do not carry, when the caller knows it.
 *
 * @param bootstrap the Kafka bootstrap address of the control plane
 * @param kafka client properties for a secured cluster (security, SASL, SSL)
 * @param topics the control plane's topics
 * @param cluster the cluster shown first; a page may ask for another with {@code ?cluster=}
 * @param bindHost where the page is served ({@code 127.0.0.1} by default: the page has no authentication)
 * @param port the port, 0 for a free one
 * @param nodes the client port ({@code host:port}) of each storage node, whose {@code /health} the dashboard reads
 *     every two seconds (health, keys, fences, the ring epoch the node routes by); empty for none
 * @param workers the migration workers' throttles and caps, when the caller runs them (the topics do not carry them)
 * @param clients the epoch each client (an application's RingClient) routes by, by name, when the caller knows it
 */
public record DashboardConfig(String bootstrap, KafkaProperties kafka, Topics topics, String cluster, String bindHost,
    int port, Map<String, String> nodes, Supplier<List<WorkerLimits>> workers, Supplier<Map<String, Long>> clients) {

  public static final int DEFAULT_PORT = 8080;
  public static final String DEFAULT_CLUSTER = "default";

  /**
   * One worker's throttle and caps, as the dashboard shows them.
   *
   * @param bytesPerSecond the worker's copy rate, 0 for unlimited
   * @param perSourceBytesPerSecond its rate from any one source node, 0 for unlimited
   * @param activeTasks tasks it holds now
   */
  public record WorkerLimits(String id, long bytesPerSecond, long perSourceBytesPerSecond, int maxTasks,
      int maxTasksPerSource, int maxTasksPerTarget, int activeTasks) {}

  /** @throws IllegalArgumentException naming the bad value and the rule */
  public DashboardConfig {
    if (bootstrap == null || bootstrap.isBlank()) {
      throw new IllegalArgumentException("bootstrap was \"" + bootstrap + "\"; give the control plane's Kafka "
          + "address, host:port");
    }
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("--port was " + port + "; it must be 0 (a free port) or 1..65535");
    }
    if (cluster == null || cluster.isBlank()) {
      throw new IllegalArgumentException("--cluster was \"" + cluster + "\"; give a cluster id");
    }
    Objects.requireNonNull(kafka, "kafka");
    Objects.requireNonNull(topics, "topics");
    Objects.requireNonNull(bindHost, "bindHost");
    nodes = Map.copyOf(nodes);
    Objects.requireNonNull(workers, "workers");
    Objects.requireNonNull(clients, "clients");
  }

  /** A dashboard of {@code bootstrap}'s cluster {@value #DEFAULT_CLUSTER} on 127.0.0.1:{@value #DEFAULT_PORT}. */
  public static DashboardConfig of(String bootstrap) {
    return new DashboardConfig(bootstrap, KafkaProperties.none(), Topics.defaults(), DEFAULT_CLUSTER, "127.0.0.1",
        DEFAULT_PORT, Map.of(), List::of, Map::of);
  }

  public DashboardConfig withKafka(KafkaProperties properties) {
    return new DashboardConfig(bootstrap, properties, topics, cluster, bindHost, port, nodes, workers, clients);
  }

  public DashboardConfig withTopics(Topics t) {
    return new DashboardConfig(bootstrap, kafka, t, cluster, bindHost, port, nodes, workers, clients);
  }

  public DashboardConfig withCluster(String id) {
    return new DashboardConfig(bootstrap, kafka, topics, id, bindHost, port, nodes, workers, clients);
  }

  public DashboardConfig withBind(String host, int p) {
    return new DashboardConfig(bootstrap, kafka, topics, cluster, host, p, nodes, workers, clients);
  }

  public DashboardConfig withNodes(Map<String, String> clientPorts) {
    return new DashboardConfig(bootstrap, kafka, topics, cluster, bindHost, port, clientPorts, workers, clients);
  }

  public DashboardConfig withWorkers(Supplier<List<WorkerLimits>> supplier) {
    return new DashboardConfig(bootstrap, kafka, topics, cluster, bindHost, port, nodes, supplier, clients);
  }

  public DashboardConfig withClients(Supplier<Map<String, Long>> supplier) {
    return new DashboardConfig(bootstrap, kafka, topics, cluster, bindHost, port, nodes, workers, supplier);
  }
}
