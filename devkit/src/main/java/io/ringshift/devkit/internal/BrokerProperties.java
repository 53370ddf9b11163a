package io.ringshift.devkit.internal;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The configuration of a single-node KRaft broker that is its own controller (combined mode), as measured in
 * docs/development.md. Every replication factor and minimum ISR is 1, so transactions and
 * {@code exactly_once_v2} work on one broker; without that Streams hangs in REBALANCING.
 */
public final class BrokerProperties {
  public static final int NODE_ID = 1;

  /** Set from the builder's port and data dir, or fixed by the single-node layout: not overridable. */
  public static final Set<String> RESERVED = Set.of(
      "process.roles", "node.id", "listeners", "advertised.listeners", "controller.listener.names",
      "controller.quorum.bootstrap.servers", "controller.quorum.voters", "inter.broker.listener.name",
      "listener.security.protocol.map", "log.dir", "log.dirs", "metadata.log.dir");

  private BrokerProperties() {}

  /** The defaults below, then {@code overrides} on top (none of them {@link #RESERVED}). */
  public static Properties of(int port, int controllerPort, Path dataDir, long startupTimeoutMs,
      Map<String, String> overrides) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("process.roles", "broker,controller");
    p.put("node.id", Integer.toString(NODE_ID));
    p.put("controller.quorum.bootstrap.servers", Ports.HOST + ":" + controllerPort);
    common(p, port, controllerPort, dataDir, startupTimeoutMs);

    // One broker: every internal topic has one replica, and one in-sync replica is enough (EOS needs both).
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "1");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "1");
    p.put("share.coordinator.state.topic.replication.factor", "1");
    p.put("share.coordinator.state.topic.min.isr", "1");
    p.put("default.replication.factor", "1");
    p.put("min.insync.replicas", "1");
    return properties(p, overrides);
  }

  /**
   * Node {@code nodeId} of a cluster of {@code voters.size()} nodes, each a broker and a voter of a static
   * controller quorum ({@code controller.quorum.voters}): internal topics are replicated on 3 brokers with 2 in
   * sync (or on every broker of a smaller cluster), as in production.
   *
   * @param voters the controller port of each node, by node id
   */
  public static Properties ofClusterNode(int nodeId, int port, Map<Integer, Integer> voters, Path dataDir,
      long startupTimeoutMs, Map<String, String> overrides) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("process.roles", "broker,controller");
    p.put("node.id", Integer.toString(nodeId));
    p.put("controller.quorum.voters", voters.entrySet().stream()
        .map(v -> v.getKey() + "@" + Ports.HOST + ":" + v.getValue()).collect(Collectors.joining(",")));
    common(p, port, voters.get(nodeId), dataDir, startupTimeoutMs);
    String replicas = Integer.toString(Math.min(3, voters.size()));
    String inSync = voters.size() >= 3 ? "2" : "1";
    p.put("offsets.topic.replication.factor", replicas);
    p.put("offsets.topic.num.partitions", "3");
    p.put("transaction.state.log.replication.factor", replicas);
    p.put("transaction.state.log.min.isr", inSync);
    p.put("transaction.state.log.num.partitions", "3");
    p.put("share.coordinator.state.topic.replication.factor", replicas);
    p.put("share.coordinator.state.topic.min.isr", inSync);
    p.put("default.replication.factor", replicas);
    p.put("min.insync.replicas", inSync);
    // A stopped broker is noticed within seconds, not the default 9 s of missed heartbeats plus elections.
    p.put("broker.session.timeout.ms", "6000");
    p.put("replica.lag.time.max.ms", "10000");
    return properties(p, overrides);
  }

  private static void common(Map<String, String> p, int port, int controllerPort, Path dataDir,
      long startupTimeoutMs) {
    p.put("listeners", "PLAINTEXT://" + Ports.HOST + ":" + port + ",CONTROLLER://" + Ports.HOST + ":" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://" + Ports.HOST + ":" + port);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
    p.put("log.dirs", dataDir.toString());
    // Tests and the dev command wait on the first rebalance; nobody else is joining.
    p.put("group.initial.rebalance.delay.ms", "0");
    // ringshift creates its topics explicitly; auto-creation would hide a missing or misnamed topic.
    p.put("auto.create.topics.enable", "false");
    // A two-core laptop or CI box: a few threads and a 16 MiB compaction buffer (default 128 MiB) are plenty.
    p.put("num.network.threads", "2");
    p.put("num.io.threads", "2");
    p.put("background.threads", "2");
    p.put("log.cleaner.dedupe.buffer.size", Integer.toString(16 * 1024 * 1024));
    // Bounds KafkaRaftServer.startup() itself, which otherwise waits forever to be unfenced.
    p.put("server.max.startup.time.ms", Long.toString(startupTimeoutMs));
  }

  private static Properties properties(Map<String, String> p, Map<String, String> overrides) {
    p.putAll(overrides);
    Properties properties = new Properties();
    properties.putAll(p);
    return properties;
  }
}
