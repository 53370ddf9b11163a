package io.ringshift.devkit;

import io.ringshift.devkit.EmbeddedKafkaException.Reason;
import io.ringshift.devkit.internal.BrokerProperties;
import io.ringshift.devkit.internal.DataDir;
import io.ringshift.devkit.internal.ExitGuard;
import io.ringshift.devkit.internal.KraftStorage;
import io.ringshift.devkit.internal.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Apache Kafka broker (KRaft, broker and controller in one node) running inside this JVM,
 * for {@code ringshift dev} and integration tests. Not for production: one replica of everything, plaintext,
 * bound to {@code 127.0.0.1} only.
 *
 * <pre>{@code
 * try (EmbeddedKafka kafka = EmbeddedKafka.builder().build().start()) {
 *   kafka.createTopics("ring.membership");
 *   String bootstrap = kafka.bootstrapServers();   // "127.0.0.1:<port>"
 * }
 * }</pre>
 *
 * <p>Guarantees:
 * <ul>
 *   <li>{@link #start()} returns only once the broker answers an admin {@code describeCluster} and fails
 *       otherwise, within the {@linkplain Builder#startupTimeout startup timeout}, with a message naming the
 *       port and the data directory.
 *   <li>Transactions and {@code exactly_once_v2} work: internal topics have replication factor 1 and a
 *       minimum ISR of 1.
 *   <li>Without {@link Builder#dataDir} the data lives in a new temporary directory that {@link #close()}
 *       deletes, and so does a JVM shutdown hook when the JVM exits without closing (Ctrl-C, SIGTERM, the end of
 *       a test run). With it, the directory is kept and a broker started later on it has the same cluster id,
 *       topics and records.
 *   <li>{@link #close()} stops every broker thread before it returns; it is idempotent.
 *   <li>A fatal fault of the broker never ends the JVM (Kafka would halt it with status 1): it is logged, printed
 *       on standard error and kept as {@link #fatalFault()}.
 * </ul>
 *
 * <p>Topics are not created automatically ({@code auto.create.topics.enable=false}): ringshift creates its
 * topics explicitly, and a test should fail on a misnamed one rather than silently create it.
 *
 * <h2>Design</h2>
 * The recipe is the one {@code kafka-storage.sh format --standalone} plus {@code kafka-server-start.sh} use,
 * run in-process from the Maven artifacts ({@code StorageTool.execute}, then {@code KafkaRaftServer}), as
 * recorded in docs/development.md. On a two-core machine the first broker of a JVM starts in 2 to 4 s
 * (mostly class loading), later ones in 0.2 to 1 s; stopping takes 0.2 to 0.6 s. An instance starts
 * once; a restart is a new instance on the same data directory. Free ports are probed and then bound by the
 * broker a moment later, so another process can take one in between: a bind failure on a port the devkit
 * chose is retried with new ports, a bind failure on a port the caller asked for is reported as
 * {@link Reason#PORT_IN_USE}.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);
  private static final int BIND_ATTEMPTS = 3;
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

  private enum State { NEW, STARTING, RUNNING, CLOSED }

  private final int requestedPort;
  private final Path requestedDataDir;
  private final Map<String, String> brokerProperties;
  private final Duration startupTimeout;

  private final Object lock = new Object();
  private volatile State state = State.NEW;
  private DataDir dataDir;
  private KafkaRaftServer server;
  private Thread shutdownHook;
  private volatile int port;
  private volatile String clusterId;
  private volatile String fatalFault;
  private final java.util.function.Consumer<String> faultListener = fault -> {
    if (fatalFault == null) {
      fatalFault = fault;
    }
  };

  private EmbeddedKafka(Builder builder) {
    this.requestedPort = builder.port;
    this.requestedDataDir = builder.dataDir;
    this.brokerProperties = Map.copyOf(builder.brokerProperties);
    this.startupTimeout = builder.startupTimeout;
  }

  /** A builder for a broker on a free port with a temporary data directory. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Formats the data directory if needed, starts the broker and waits until it serves requests.
   *
   * @return this broker, running
   * @throws EmbeddedKafkaException if the port is in use, the data directory cannot be used, or the broker
   *     fails or does not serve within the startup timeout; nothing is left running and a temporary
   *     directory is deleted
   * @throws IllegalStateException if this instance was started before (build a new one to restart)
   */
  public EmbeddedKafka start() {
    synchronized (lock) {
      if (state != State.NEW) {
        throw new IllegalStateException("this EmbeddedKafka was already " + state.name().toLowerCase(Locale.ROOT)
            + "; build a new one (on the same dataDir to keep the data) to start a broker again");
      }
      state = State.STARTING;
      long started = System.nanoTime();
      long deadline = started + startupTimeout.toNanos();
      try {
        dataDir = openDataDir();
        ExitGuard.register(faultListener);
        registerShutdownHook();
        clusterId = readClusterId();
        startServer(deadline);
        awaitServing(deadline);
        state = State.RUNNING;
      } catch (RuntimeException | Error e) {
        state = State.CLOSED;
        stopAndClean(e);
        removeShutdownHook();
        throw e;
      }
      LOG.info("Embedded Kafka {} serves at {} (cluster {}, data dir {}) after {} ms", BrokerProperties.NODE_ID,
          bootstrapServers(), clusterId, dataDir, elapsedMillis(started));
      return this;
    }
  }

  /** {@code 127.0.0.1:<port>}, for the {@code bootstrap.servers} of any client. */
  public String bootstrapServers() {
    requireRunning();
    return Ports.HOST + ":" + port;
  }

  /** The port clients connect to. */
  public int port() {
    requireRunning();
    return port;
  }

  /** The broker's log directory: the one given to {@link Builder#dataDir}, or the temporary one. */
  public Path dataDir() {
    requireRunning();
    return dataDir.path();
  }

  /**
   * The first fatal fault the broker raised since it started, if any: Kafka asked to end the JVM (for instance
   * because every log directory failed when the disk filled up). An in-process broker never ends the JVM that hosts
   * it; the fault is logged, printed on standard error and kept here, and the broker may no longer serve.
   */
  public Optional<String> fatalFault() {
    return Optional.ofNullable(fatalFault);
  }

  /** The KRaft cluster id, stored in the data directory's {@code meta.properties}: stable across restarts. */
  public String clusterId() {
    requireRunning();
    return clusterId;
  }

  /** Creates each topic with one partition and one replica. */
  public void createTopics(String... topics) {
    createTopics(Arrays.stream(topics).map(topic -> new NewTopic(topic, 1, (short) 1)).toList());
  }

  /**
   * Creates the topics as described (partitions, replication factor at most 1, configs) and waits until the
   * controller has created them.
   *
   * @throws EmbeddedKafkaException with {@link Reason#ADMIN_FAILED} if any of them exists already or is
   *     invalid; the cause is Kafka's exception
   */
  public void createTopics(Collection<NewTopic> topics) {
    requireRunning();
    List<String> names = topics.stream().map(NewTopic::name).toList();
    try (Admin admin = Admin.create(adminConfig())) {
      admin.createTopics(topics).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new EmbeddedKafkaException(Reason.ADMIN_FAILED, String.format(Locale.ROOT,
          "could not create topics %s on %s: %s", names, bootstrapServers(), e.getCause().getMessage()),
          e.getCause());
    } catch (TimeoutException e) {
      throw new EmbeddedKafkaException(Reason.ADMIN_FAILED, String.format(Locale.ROOT,
          "creating topics %s on %s took more than %s", names, bootstrapServers(), ADMIN_TIMEOUT), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmbeddedKafkaException(Reason.ADMIN_FAILED, "interrupted while creating topics " + names, e);
    }
  }

  /**
   * Stops the broker, waits for its threads to end and deletes a temporary data directory. Does nothing when
   * already closed; safe to call from any thread.
   *
   * @throws UncheckedIOException if a temporary data directory could not be deleted (the broker is stopped)
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (state == State.CLOSED) {
        return;
      }
      long started = System.nanoTime();
      // CLOSED first, so a shutdown hook racing with us finds nothing to do once it gets the lock; the hook
      // goes last, so a JVM exit in the middle of close still cleans up.
      state = State.CLOSED;
      try {
        stopAndClean(null);
      } finally {
        removeShutdownHook();
      }
      LOG.info("Embedded Kafka at {}:{} stopped in {} ms", Ports.HOST, port, elapsedMillis(started));
    }
  }

  @Override
  public String toString() {
    return "EmbeddedKafka[" + Ports.HOST + ":" + port + ", data dir " + dataDir + ", " + state + "]";
  }

  private DataDir openDataDir() {
    try {
      return requestedDataDir == null ? DataDir.temporary() : DataDir.kept(requestedDataDir);
    } catch (DataDir.InvalidDataDirException e) {
      throw new EmbeddedKafkaException(Reason.INVALID_DATA_DIR, "cannot use data dir " + e.getMessage(), e);
    } catch (IOException e) {
      throw new EmbeddedKafkaException(Reason.INVALID_DATA_DIR, "cannot create data dir "
          + (requestedDataDir == null ? "in " + System.getProperty("java.io.tmpdir") : requestedDataDir)
          + ": " + e, e);
    }
  }

  private String readClusterId() {
    try {
      return dataDir.formattedClusterId().orElseGet(() -> Uuid.randomUuid().toString());
    } catch (IOException e) {
      throw new EmbeddedKafkaException(Reason.INVALID_DATA_DIR, "cannot read the cluster id of data dir "
          + dataDir.path() + ": " + e.getMessage(), e);
    }
  }

  private void startServer(long deadline) {
    for (int attempt = 1; ; attempt++) {
      port = requestedPort != 0 ? requestedPort : Ports.freePort();
      if (requestedPort != 0) {
        Optional<String> problem = Ports.bindProblem(port);
        if (problem.isPresent()) {
          throw portUnavailable(problem.get(), null);
        }
      }
      int controllerPort = freePortOtherThan(port);
      long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
      Properties properties = BrokerProperties.of(port, controllerPort, dataDir.path(), remainingMs,
          brokerProperties);
      format(properties);
      try {
        server = new KafkaRaftServer(KafkaConfig.fromProps(properties, false), Time.SYSTEM);
        server.startup();
        return;
      } catch (RuntimeException e) {
        stopServer();
        if (causedBy(e, BindException.class)) {
          // Either a port we chose was taken in the meantime (retry with new ones), or the caller's was.
          Optional<String> callersPortProblem =
              requestedPort != 0 ? Ports.bindProblem(requestedPort) : Optional.empty();
          if (callersPortProblem.isPresent() || attempt >= BIND_ATTEMPTS) {
            throw portUnavailable(callersPortProblem.orElse(e.getMessage()), e);
          }
          LOG.info("A free port was taken before the broker bound it ({}); retrying with new ports", e.getMessage());
          continue;
        }
        if (System.nanoTime() - deadline >= 0) {
          throw new EmbeddedKafkaException(Reason.STARTUP_TIMEOUT, String.format(Locale.ROOT,
              "Kafka on %s:%d (data dir %s) did not start within %s: %s", Ports.HOST, port, dataDir.path(),
              startupTimeout, e.getMessage()), e);
        }
        throw new EmbeddedKafkaException(Reason.STARTUP_FAILED, String.format(Locale.ROOT,
            "Kafka on %s:%d (data dir %s) failed to start: %s", Ports.HOST, port, dataDir.path(), e), e);
      }
    }
  }

  private void format(Properties properties) {
    try {
      boolean formatted = dataDir.formattedClusterId().isPresent();
      KraftStorage.format(properties, clusterId, formatted);
    } catch (KraftStorage.FormatException | IOException e) {
      throw new EmbeddedKafkaException(Reason.FORMAT_FAILED, String.format(Locale.ROOT,
          "cannot format data dir %s for cluster %s: %s", dataDir.path(), clusterId, e.getMessage()), e);
    }
  }

  private void awaitServing(long deadline) {
    long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    String where = String.format(Locale.ROOT, "Kafka on %s:%d (data dir %s)", Ports.HOST, port, dataDir.path());
    try (Admin admin = Admin.create(adminConfig())) {
      Collection<Node> nodes = admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) remainingMs))
          .nodes().get(remainingMs, TimeUnit.MILLISECONDS);
      if (nodes.stream().noneMatch(node -> node.id() == BrokerProperties.NODE_ID)) {
        throw new EmbeddedKafkaException(Reason.STARTUP_FAILED,
            where + " started but does not list itself in describeCluster: " + nodes);
      }
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new EmbeddedKafkaException(Reason.STARTUP_TIMEOUT, String.format(Locale.ROOT,
          "%s did not answer describeCluster within the startup timeout of %s: %s", where, startupTimeout,
          cause), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmbeddedKafkaException(Reason.STARTUP_FAILED, "interrupted while waiting for " + where, e);
    }
  }

  private Map<String, Object> adminConfig() {
    return Map.of(
        AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, Ports.HOST + ":" + port,
        AdminClientConfig.CLIENT_ID_CONFIG, "ringshift-devkit-admin");
  }

  private EmbeddedKafkaException portUnavailable(String problem, Throwable cause) {
    String what = problem.contains("in use")
        ? "is already in use (another broker, or another `ringshift dev`?)"
        : "cannot be bound (" + problem + ")";
    return new EmbeddedKafkaException(Reason.PORT_IN_USE, String.format(Locale.ROOT,
        "port %d on %s %s, so Kafka with data dir %s cannot listen there; stop that process, or choose another "
            + "port (0 picks a free one)", port, Ports.HOST, what, dataDir.path()), cause);
  }

  private void registerShutdownHook() {
    Thread hook = new Thread(this::closeAtJvmExit, "ringshift-embedded-kafka-shutdown");
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
      // The JVM is already exiting: the hook runs (or ran) and does the same cleanup.
      LOG.debug("JVM is exiting; the shutdown hook stops {}", this, e);
    }
    shutdownHook = null;
  }

  /** The shutdown hook: the JVM exits without {@link #close()} (Ctrl-C, SIGTERM, end of a test run). */
  private void closeAtJvmExit() {
    synchronized (lock) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
      stopAndClean(null);
    }
  }

  /** Stops whatever runs and deletes a temporary directory; with {@code failure}, adds problems to it. */
  private void stopAndClean(Throwable failure) {
    stopServer();
    ExitGuard.unregister(faultListener);
    if (dataDir == null) {
      return;
    }
    try {
      dataDir.deleteIfTemporary();
    } catch (UncheckedIOException e) {
      if (failure == null) {
        throw e;
      }
      failure.addSuppressed(e);
    }
  }

  private void stopServer() {
    KafkaRaftServer running = server;
    server = null;
    if (running == null) {
      return;
    }
    try {
      running.shutdown();
      running.awaitShutdown();
    } catch (RuntimeException e) {
      LOG.warn("Kafka on {}:{} did not shut down cleanly", Ports.HOST, port, e);
    }
  }

  private void requireRunning() {
    if (state != State.RUNNING) {
      throw new IllegalStateException("EmbeddedKafka is " + state.name().toLowerCase(Locale.ROOT)
          + ", not running; call start() first");
    }
  }

  private static int freePortOtherThan(int port) {
    int candidate = Ports.freePort();
    while (candidate == port) {
      candidate = Ports.freePort();
    }
    return candidate;
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private static long elapsedMillis(long startedNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
  }

  /**
   * Configures an {@link EmbeddedKafka}. Every setting is optional: the default is a free port, a temporary
   * data directory and a startup timeout of 60 s.
   */
  public static final class Builder {
    private int port;
    private Path dataDir;
    private final Map<String, String> brokerProperties = new LinkedHashMap<>();
    private Duration startupTimeout = Duration.ofSeconds(60);

    private Builder() {}

    /**
     * The port clients connect to, on {@code 127.0.0.1}; 0 (the default) picks a free one. The controller
     * listener always takes a free port.
     */
    public Builder port(int port) {
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException("port was " + port + "; must be 0 (any free port) or 1..65535");
      }
      this.port = port;
      return this;
    }

    /**
     * Keeps the broker's data in {@code dir} (created if absent) instead of a temporary directory: it is not
     * deleted on close, and a broker started later on it has the same cluster id, topics and records. The
     * directory must be empty, new, or written by an earlier broker.
     */
    public Builder dataDir(Path dir) {
      this.dataDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /**
     * Sets or overrides one broker property, for example {@code log.retention.ms}. The listeners, node id,
     * roles and log directories are the devkit's (see {@link #port} and {@link #dataDir}).
     *
     * @throws IllegalArgumentException for one of those reserved keys
     */
    public Builder brokerProperty(String key, String value) {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(value, "value");
      if (BrokerProperties.RESERVED.contains(key)) {
        throw new IllegalArgumentException("broker property '" + key + "' is set by the devkit; use port(...) "
            + "or dataDir(...) instead (reserved: " + BrokerProperties.RESERVED + ")");
      }
      brokerProperties.put(key, value);
      return this;
    }

    /** How long {@link EmbeddedKafka#start()} may take before it fails; 60 s by default. */
    public Builder startupTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("startupTimeout was " + timeout + "; must be positive");
      }
      this.startupTimeout = timeout;
      return this;
    }

    /** A broker with these settings, not started yet. */
    public EmbeddedKafka build() {
      return new EmbeddedKafka(this);
    }
  }
}
