package io.ringshift.devkit;

import io.ringshift.devkit.EmbeddedKafkaException.Reason;
import io.ringshift.devkit.internal.BrokerProperties;
import io.ringshift.devkit.internal.DataDir;
import io.ringshift.devkit.internal.ExitGuard;
import io.ringshift.devkit.internal.KraftStorage;
import io.ringshift.devkit.internal.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Apache Kafka cluster of several KRaft nodes in this JVM, each a broker and a voter of the controller
 * quorum (combined mode, a static quorum of every node), for tests that stop and restart brokers. With 3 nodes or
 * more, internal topics are replicated 3 times with {@code min.insync.replicas=2}, as in production; bound to
 * {@code 127.0.0.1}, plaintext.
 *
 * <pre>{@code
 * try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.builder().brokers(3).build().start()) {
 *   String bootstrap = kafka.bootstrapServers();   // "127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>"
 *   kafka.stopBroker(2);                           // a clean shutdown; its partitions move to the others
 *   kafka.startBroker(2);                          // back on the same ports and data
 * }
 * }</pre>
 *
 * <p>Guarantees: {@link #start()} returns once every broker is listed by {@code describeCluster}; {@link
 * #startBroker} once the restarted broker is unfenced and listed again; a stopped broker keeps its ports and data.
 * Each node's data lives in a temporary directory that {@link #close()} (or a JVM shutdown hook) deletes. A fatal
 * fault of a broker never ends the JVM ({@link #fatalFault()}), as with {@link EmbeddedKafka}.
 *
 * <p>Design: the single-node recipe of {@link EmbeddedKafka} with {@code controller.quorum.voters} listing every
 * node, formatted without {@code --standalone}. The nodes start side by side: a node's startup waits for a quorum.
 */
public final class EmbeddedKafkaCluster implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafkaCluster.class);
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
  /** How long {@link #start()} waits between two looks at the brokers the cluster lists. */
  private static final long POLL_MILLIS = 100;

  private final int size;
  private final Map<String, String> brokerProperties;
  private final Duration startupTimeout;
  /** The brokers' clock, and the one the waits between polls run on. */
  private final Time time;
  private final Object lock = new Object();
  private final Map<Integer, BrokerNode> nodes = new TreeMap<>();
  private volatile String fatalFault;
  private final Consumer<String> faultListener = fault -> {
    if (fatalFault == null) {
      fatalFault = fault;
    }
  };
  private String clusterId;
  private Thread shutdownHook;
  private boolean started;
  private boolean closed;

  /** One node: its fixed ports and data directory, and its server while it runs. */
  private static final class BrokerNode {
    final int id;
    final int port;
    final int controllerPort;
    DataDir dataDir;
    Properties properties;
    KafkaRaftServer server;

    BrokerNode(int id, int port, int controllerPort) {
      this.id = id;
      this.port = port;
      this.controllerPort = controllerPort;
    }
  }

  private EmbeddedKafkaCluster(Builder builder) {
    this.size = builder.brokers;
    this.brokerProperties = Map.copyOf(builder.brokerProperties);
    this.startupTimeout = builder.startupTimeout;
    this.time = builder.time;
  }

  /** A builder for a cluster of 3 brokers on free ports. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Formats every node's data directory, starts the nodes side by side and waits until every broker serves.
   *
   * @throws EmbeddedKafkaException if a node fails to format or start, or the cluster does not list every broker
   *     within the startup timeout; nothing is left running and the directories are deleted
   * @throws IllegalStateException if this cluster was started before
   */
  public EmbeddedKafkaCluster start() {
    synchronized (lock) {
      if (started) {
        throw new IllegalStateException("this EmbeddedKafkaCluster was started before; build a new one");
      }
      started = true;
      long begun = System.nanoTime();
      long deadline = begun + startupTimeout.toNanos();
      try {
        clusterId = Uuid.randomUuid().toString();
        Set<Integer> taken = new java.util.HashSet<>();
        for (int id = 1; id <= size; id++) {
          nodes.put(id, new BrokerNode(id, freePort(taken), freePort(taken)));
        }
        Map<Integer, Integer> voters = new TreeMap<>();
        nodes.values().forEach(n -> voters.put(n.id, n.controllerPort));
        ExitGuard.register(faultListener);
        registerShutdownHook();
        for (BrokerNode node : nodes.values()) {
          node.dataDir = DataDir.temporary();
          node.properties = BrokerProperties.ofClusterNode(node.id, node.port, voters, node.dataDir.path(),
              startupTimeout.toMillis(), brokerProperties);
          KraftStorage.format(node.properties, clusterId, false, false);
        }
        startSideBySide(nodes.values(), deadline);
        awaitBrokers(nodes.keySet(), deadline);
      } catch (IOException e) {
        stopAll();
        throw new EmbeddedKafkaException(Reason.INVALID_DATA_DIR, "cannot create a data dir for the cluster: " + e,
            e);
      } catch (KraftStorage.FormatException e) {
        stopAll();
        throw new EmbeddedKafkaException(Reason.FORMAT_FAILED, "cannot format the cluster's data dirs: "
            + e.getMessage(), e);
      } catch (RuntimeException | Error e) {
        stopAll();
        throw e;
      }
      LOG.info("Embedded Kafka cluster {} of {} brokers serves at {} after {} ms", clusterId, size,
          bootstrapServers(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun));
      return this;
    }
  }

  /** Every broker's address, comma-separated, for the {@code bootstrap.servers} of any client. */
  public String bootstrapServers() {
    requireStarted();
    return nodes.values().stream().map(n -> Ports.HOST + ":" + n.port).collect(Collectors.joining(","));
  }

  /** The broker ids, 1 to the number of brokers. */
  public List<Integer> brokerIds() {
    requireStarted();
    return List.copyOf(nodes.keySet());
  }

  /** Whether broker {@code id} runs (not stopped by {@link #stopBroker}). */
  public boolean isRunning(int id) {
    synchronized (lock) {
      return node(id).server != null;
    }
  }

  /** The KRaft cluster id every node was formatted with. */
  public String clusterId() {
    requireStarted();
    return clusterId;
  }

  /** The first fatal fault any broker raised, if one did (the JVM keeps running; that broker may not serve). */
  public Optional<String> fatalFault() {
    return Optional.ofNullable(fatalFault);
  }

  /**
   * Stops broker {@code id} (a controlled shutdown: its partition leaderships move to the other replicas first)
   * and waits until its threads have ended; its ports and data are kept for {@link #startBroker}.
   *
   * @throws IllegalStateException when it is stopped already
   */
  public void stopBroker(int id) {
    synchronized (lock) {
      BrokerNode node = node(id);
      if (node.server == null) {
        throw new IllegalStateException("broker " + id + " is stopped already");
      }
      long begun = System.nanoTime();
      stop(node);
      LOG.info("Embedded Kafka cluster {}: broker {} stopped in {} ms", clusterId, id,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun));
    }
  }

  /**
   * Starts broker {@code id} again on its ports and data and waits until the cluster lists it (it is unfenced).
   *
   * @throws IllegalStateException when it runs already
   * @throws EmbeddedKafkaException when it does not start within the startup timeout
   */
  public void startBroker(int id) {
    synchronized (lock) {
      BrokerNode node = node(id);
      if (node.server != null) {
        throw new IllegalStateException("broker " + id + " runs already");
      }
      long begun = System.nanoTime();
      long deadline = begun + startupTimeout.toNanos();
      startSideBySide(List.of(node), deadline);
      awaitBrokers(Set.of(id), deadline);
      LOG.info("Embedded Kafka cluster {}: broker {} back after {} ms", clusterId, id,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun));
    }
  }

  /** Stops every broker and deletes their data directories; idempotent. */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      stopAll();
      removeShutdownHook();
    }
  }

  @Override
  public String toString() {
    return "EmbeddedKafkaCluster[" + size + " brokers, " + (started ? bootstrapServers() : "not started") + "]";
  }

  private void startSideBySide(Collection<BrokerNode> starting, long deadline) {
    Map<BrokerNode, Thread> threads = new LinkedHashMap<>();
    Map<Integer, Throwable> failures = new java.util.concurrent.ConcurrentHashMap<>();
    for (BrokerNode node : starting) {
      KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(node.properties, false), time);
      node.server = server;
      Thread thread = new Thread(() -> {
        try {
          server.startup();
        } catch (RuntimeException | Error e) {
          failures.put(node.id, e);
        }
      }, "ringshift-kafka-cluster-start-" + node.id);
      thread.setDaemon(true);
      threads.put(node, thread);
      thread.start();
    }
    for (Map.Entry<BrokerNode, Thread> started : threads.entrySet()) {
      try {
        started.getValue().join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new EmbeddedKafkaException(Reason.STARTUP_FAILED, "interrupted while starting broker "
            + started.getKey().id, e);
      }
      if (started.getValue().isAlive()) {
        throw new EmbeddedKafkaException(Reason.STARTUP_TIMEOUT, String.format(Locale.ROOT,
            "broker %d on %s:%d did not start within %s", started.getKey().id, Ports.HOST, started.getKey().port,
            startupTimeout));
      }
    }
    if (!failures.isEmpty()) {
      Map.Entry<Integer, Throwable> first = new TreeMap<>(failures).firstEntry();
      BrokerNode node = node(first.getKey());
      throw new EmbeddedKafkaException(Reason.STARTUP_FAILED, String.format(Locale.ROOT,
          "broker %d on %s:%d (data dir %s) failed to start: %s", node.id, Ports.HOST, node.port,
          node.dataDir.path(), first.getValue()), first.getValue());
    }
  }

  private void awaitBrokers(Set<Integer> ids, long deadline) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, runningBootstrap(),
        AdminClientConfig.CLIENT_ID_CONFIG, "ringshift-devkit-admin"))) {
      while (true) {
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (remainingMs <= 0) {
          throw new EmbeddedKafkaException(Reason.STARTUP_TIMEOUT, "the cluster did not list brokers " + ids
              + " within " + startupTimeout);
        }
        Collection<Node> listed = admin.describeCluster(new DescribeClusterOptions()
            .timeoutMs((int) Math.min(remainingMs, ADMIN_TIMEOUT.toMillis())))
            .nodes().get(remainingMs, TimeUnit.MILLISECONDS);
        Set<Integer> present = listed.stream().map(Node::id).collect(Collectors.toSet());
        if (present.containsAll(ids)) {
          return;
        }
        time.sleep(POLL_MILLIS); // polling the cluster's metadata, on the cluster's clock
      }
    } catch (ExecutionException | TimeoutException e) {
      throw new EmbeddedKafkaException(Reason.STARTUP_TIMEOUT, "the cluster did not answer describeCluster within "
          + startupTimeout + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmbeddedKafkaException(Reason.STARTUP_FAILED, "interrupted while waiting for brokers " + ids, e);
    }
  }

  private String runningBootstrap() {
    return nodes.values().stream().filter(n -> n.server != null).map(n -> Ports.HOST + ":" + n.port)
        .collect(Collectors.joining(","));
  }

  private void stop(BrokerNode node) {
    KafkaRaftServer running = node.server;
    node.server = null;
    if (running == null) {
      return;
    }
    try {
      running.shutdown();
      running.awaitShutdown();
    } catch (RuntimeException e) {
      LOG.warn("broker {} on {}:{} did not shut down cleanly", node.id, Ports.HOST, node.port, e);
    }
  }

  /** Stops the brokers (the last ones together, as a quorum needs a majority to shut down a broker cleanly). */
  private void stopAll() {
    List<Thread> stopping = new ArrayList<>();
    for (BrokerNode node : nodes.values()) {
      Thread thread = new Thread(() -> stop(node), "ringshift-kafka-cluster-stop-" + node.id);
      stopping.add(thread);
      thread.start();
    }
    for (Thread thread : stopping) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    ExitGuard.unregister(faultListener);
    for (BrokerNode node : nodes.values()) {
      if (node.dataDir != null) {
        try {
          node.dataDir.deleteIfTemporary();
        } catch (UncheckedIOException e) {
          LOG.warn("could not delete the data dir of broker {}: {}", node.id, e.getMessage());
        }
      }
    }
  }

  private void registerShutdownHook() {
    Thread hook = new Thread(() -> {
      synchronized (lock) {
        if (!closed) {
          closed = true;
          stopAll();
        }
      }
    }, "ringshift-embedded-kafka-cluster-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    shutdownHook = hook;
  }

  private void removeShutdownHook() {
    if (shutdownHook == null || Thread.currentThread() == shutdownHook) {
      return;
    }
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      LOG.debug("JVM is exiting; the shutdown hook stops {}", this, e);
    }
    shutdownHook = null;
  }

  private BrokerNode node(int id) {
    requireStarted();
    BrokerNode node = nodes.get(id);
    if (node == null) {
      throw new IllegalArgumentException("broker id was " + id + "; the cluster has brokers " + nodes.keySet());
    }
    return node;
  }

  private void requireStarted() {
    if (!started || closed) {
      throw new IllegalStateException("EmbeddedKafkaCluster is " + (closed ? "closed" : "not started")
          + "; call start() first");
    }
  }

  private static int freePort(Set<Integer> taken) {
    int port = Ports.freePort();
    while (!taken.add(port)) {
      port = Ports.freePort();
    }
    return port;
  }

  /** Configures an {@link EmbeddedKafkaCluster}: 3 brokers and a startup timeout of 120 s unless set. */
  public static final class Builder {
    private int brokers = 3;
    private final Map<String, String> brokerProperties = new LinkedHashMap<>();
    private Duration startupTimeout = Duration.ofSeconds(120);
    private Time time = Time.SYSTEM;

    private Builder() {}

    /** The number of nodes, 1 to 9; each is a broker and a controller. */
    public Builder brokers(int count) {
      if (count < 1 || count > 9) {
        throw new IllegalArgumentException("brokers was " + count + "; it must be 1 to 9");
      }
      this.brokers = count;
      return this;
    }

    /**
     * Sets or overrides one property of every broker; the listeners, node ids, quorum and log directories are the
     * devkit's.
     *
     * @throws IllegalArgumentException for one of those reserved keys
     */
    public Builder brokerProperty(String key, String value) {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(value, "value");
      if (BrokerProperties.RESERVED.contains(key)) {
        throw new IllegalArgumentException("broker property '" + key + "' is set by the devkit (reserved: "
            + BrokerProperties.RESERVED + ")");
      }
      brokerProperties.put(key, value);
      return this;
    }

    /** How long {@link #start()} and {@link #startBroker} may take before they fail; 120 s by default. */
    public Builder startupTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("startupTimeout was " + timeout + "; must be positive");
      }
      this.startupTimeout = timeout;
      return this;
    }

    /** The clock of the brokers and of the cluster's waits; {@link Time#SYSTEM} by default. */
    public Builder time(Time time) {
      this.time = Objects.requireNonNull(time, "time");
      return this;
    }

    public EmbeddedKafkaCluster build() {
      return new EmbeddedKafkaCluster(this);
    }
  }
}
