package io.ringshift.localplane;

import io.ringshift.client.RingClientConfig;
import io.ringshift.devkit.EmbeddedKafka;
import io.ringshift.devkit.EmbeddedKafkaException;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.publisher.PublisherConfig;
import io.ringshift.publisher.SnapshotPublisher;
import io.ringshift.ring.RingBuilder;
import io.ringshift.worker.Limits;
import io.ringshift.worker.MigrationWorker;
import io.ringshift.worker.NodeStores;
import io.ringshift.worker.TaskTuning;
import io.ringshift.worker.WorkerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * The whole control plane in this JVM, each role talking to the others only through Kafka and the nodes' HTTP API,
 * as deployed: an embedded KRaft broker (or a broker given by address), the orchestrator, the snapshot publisher,
 * storage nodes ({@link LocalNodes}) and a migration worker. {@code ringshift dev} runs it, and the end-to-end tests
 * drive it: one wiring of the whole plane.
 *
 * <p>{@link Builder#start} starts the broker, the nodes, the orchestrator (which creates its topics), the publisher
 * and the worker, in that order, and on any failure leaves nothing running. {@link #close} stops them in the
 * opposite order: workers first, so their tasks write their last checkpoints while the nodes and the broker still
 * answer; then the publisher and the orchestrator, so they finish their transactions (and the orchestrator leaves
 * its group) while the broker still answers; then the nodes; the broker last.
 *
 * <p>With a data directory the broker keeps its log in {@code <dir>/kafka}, the orchestrator its Streams state in
 * {@code <dir>/streams}, the nodes their stores in {@code <dir>/nodes/<id>} and the publisher its signing key in
 * {@code <dir>/publisher.key} (public key {@code <dir>/publisher.pub}), so a later start on the same directory has
 * the same topics, epochs, cluster aggregates, data and key. Without one all live in temporary directories that
 * {@link #close} deletes.
 */
public final class LocalControlPlane implements AutoCloseable {
  /** The publisher's key files in a data directory, made on the first start there. */
  public static final String KEY_FILE = "publisher.key";
  public static final String PUBLIC_KEY_FILE = "publisher.pub";
  /** The worker's id: one worker per plane, and a stable id lets a restart take its tasks back at once. */
  public static final String WORKER_ID = "dev-worker";

  /** How long each part took to stop, for a goodbye line; 0 for the parts that did not run. */
  public record Stopped(long workerMillis, long publisherMillis, long orchestratorMillis, long nodesMillis,
      long brokerMillis) {}

  private final Builder settings;
  private final EmbeddedKafka kafka;
  private final String bootstrapServers;
  private final LocalNodes nodes;
  private final Orchestrator orchestrator;
  private final OrchestratorConfig config;
  private final SnapshotPublisher publisher;
  private final MigrationWorker worker;
  /** The plane's own workers: {@link #worker} first. */
  private final List<MigrationWorker> workers;
  private final Path keyDir;
  private final Path temporaryStateDir;
  private final Path temporaryKeyDir;
  private final Deque<MigrationWorker> laterWorkers = new ArrayDeque<>();
  private Stopped stopped;

  private LocalControlPlane(Parts p) {
    this.settings = p.settings;
    this.kafka = p.kafka;
    this.bootstrapServers = p.bootstrapServers;
    this.nodes = p.nodes;
    this.orchestrator = p.orchestrator;
    this.config = p.config;
    this.publisher = p.publisher;
    this.worker = p.workers.isEmpty() ? null : p.workers.get(0);
    this.workers = List.copyOf(p.workers);
    this.keyDir = p.keyDir;
    this.temporaryStateDir = p.temporaryStateDir;
    this.temporaryKeyDir = p.temporaryKeyDir;
  }

  /** A plane on an embedded broker on a free port, in temporary directories, with the orchestrator and publisher. */
  public static Builder builder() {
    return new Builder();
  }

  /** How to run it. Not thread safe; {@link #start} may be called once per builder state. */
  public static final class Builder {
    private String existingBootstrap;
    private int port;
    private Path dataDir;
    private long clusterBytes;
    private String topicPrefix = "";
    private String applicationId = OrchestratorConfig.DEFAULT_APPLICATION_ID;
    private Duration startupTimeout = Duration.ofSeconds(60);
    private boolean withNodes;
    private int nodeCount;
    private int nodePort;
    private int spareCount;
    private boolean withWorker;
    private int workerCount = 1;
    private Limits workerLimits = Limits.unlimited();
    private TaskTuning workerTuning = TaskTuning.DEFAULTS;
    private Duration grace = WorkerConfig.DEFAULT_GRACE;
    private boolean withPublisher = true;
    private boolean transitionStages = true;
    private SigningKey signingKey;
    private String clusterId = RingBuilder.DEFAULT_CLUSTER;

    private Builder() {}

    /** The embedded broker's port on 127.0.0.1; 0 (the default) picks a free one. */
    public Builder port(int value) {
      if (value < 0 || value > 65_535) {
        throw new IllegalArgumentException("port was " + value + "; it must be 0 (any free port) or 1..65535");
      }
      port = value;
      return this;
    }

    /** Run no broker of its own: use the one at {@code bootstrap} (a test's broker). */
    public Builder existingBroker(String bootstrap) {
      existingBootstrap = Objects.requireNonNull(bootstrap, "bootstrap");
      return this;
    }

    /** Keep everything under {@code dir}; null (the default) for temporary directories. */
    public Builder dataDir(Path dir) {
      dataDir = dir;
      return this;
    }

    /** The orchestrator's estimate of a cluster's logical size, for the tasks' byte estimates (default 0). */
    public Builder clusterBytes(long bytes) {
      clusterBytes = bytes;
      return this;
    }

    /** Prefix of the ring.* topics (tests sharing a broker); default none. */
    public Builder topicPrefix(String prefix) {
      topicPrefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /** The orchestrator's Streams application id; default {@link OrchestratorConfig#DEFAULT_APPLICATION_ID}. */
    public Builder applicationId(String id) {
      applicationId = Objects.requireNonNull(id, "id");
      return this;
    }

    public Builder startupTimeout(Duration timeout) {
      startupTimeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    /**
     * Run storage nodes: {@code count} numbered ones from {@code basePort} (0: free ports); {@code count} may be 0
     * for nodes started later with {@link LocalNodes#start(String, String)}. The nodes follow the published ring
     * when the publisher runs.
     */
    public Builder nodes(int count, int basePort) {
      if (count < 0 || count > LocalNodes.MAX_NODES) {
        throw new IllegalArgumentException("count was " + count + "; it must be 0.." + LocalNodes.MAX_NODES);
      }
      withNodes = true;
      nodeCount = count;
      nodePort = basePort;
      return this;
    }

    /**
     * Whether the publisher cuts changes over in transition stages (true, the default) or at the fence, as before
     * stages ({@code PublisherConfig.withTransitionStages}): a baseline for the cutover's cost.
     */
    public Builder transitionStages(boolean on) {
      transitionStages = on;
      return this;
    }

    /**
     * Run {@code count} more numbered nodes after the {@link #nodes} ones, left out of {@code members.json}: spares
     * to join.
     */
    public Builder spares(int count) {
      if (count < 0 || count > LocalNodes.MAX_NODES) {
        throw new IllegalArgumentException("spares was " + count + "; it must be 0.." + LocalNodes.MAX_NODES
            + " (with the nodes, at most " + LocalNodes.MAX_NODES + " in all)");
      }
      spareCount = count;
      return this;
    }

    /** Also run a migration worker ({@value #WORKER_ID}, unlimited rates) over the nodes, with this grace. */
    public Builder worker(Duration cleanupGrace) {
      withWorker = true;
      grace = Objects.requireNonNull(cleanupGrace, "cleanupGrace");
      return this;
    }

    /**
     * With {@link #worker}: run {@code count} workers in one group ({@value #WORKER_ID}, {@value #WORKER_ID}-2, ...),
     * sharing the tasks by partition (default 1).
     */
    public Builder workers(int count) {
      if (count < 1 || count > 16) {
        throw new IllegalArgumentException("workers was " + count + "; it must be 1..16");
      }
      workerCount = count;
      return this;
    }

    /** With {@link #worker}: each worker's rates and caps (default {@link Limits#unlimited()}). */
    public Builder workerLimits(Limits limits) {
      workerLimits = Objects.requireNonNull(limits, "limits");
      return this;
    }

    /** With {@link #worker}: how each worker paces a task (default {@link TaskTuning#DEFAULTS}). */
    public Builder workerTuning(TaskTuning tuning) {
      workerTuning = Objects.requireNonNull(tuning, "tuning");
      return this;
    }

    /** Run no snapshot publisher (tests that write PUBLISHED records themselves). */
    public Builder withoutPublisher() {
      withPublisher = false;
      return this;
    }

    /** The cluster whose published ring the nodes follow; default {@value RingBuilder#DEFAULT_CLUSTER}. */
    public Builder clusterId(String id) {
      clusterId = Objects.requireNonNull(id, "id");
      return this;
    }

    /** The publisher signs with {@code key} instead of the data directory's (or a new temporary) one. */
    public Builder signingKey(SigningKey key) {
      signingKey = Objects.requireNonNull(key, "key");
      return this;
    }

    /**
     * Starts every part and returns once the orchestrator is RUNNING, the publisher has read {@code ring.epochs}
     * and the worker has joined its group. On any failure nothing is left running.
     *
     * @throws LocalPlaneException when a part cannot start: {@link LocalPlaneException.Reason#PORT_IN_USE}, {@link
     *     LocalPlaneException.Reason#BAD_DATA_DIR} or {@link LocalPlaneException.Reason#BAD_KEY_FILE} for the
     *     caller's settings and files, {@link LocalPlaneException.Reason#START_FAILED} naming the part otherwise
     */
    public LocalControlPlane start() {
      if (withWorker && !withNodes) {
        throw new IllegalStateException("a worker needs storage nodes: call nodes(count, basePort) too");
      }
      return LocalControlPlane.start(this);
    }
  }

  /** What has started so far, so that a failure closes exactly that. */
  private static final class Parts {
    Builder settings;
    EmbeddedKafka kafka;
    String bootstrapServers;
    LocalNodes nodes;
    Orchestrator orchestrator;
    OrchestratorConfig config;
    SnapshotPublisher publisher;
    final List<MigrationWorker> workers = new java.util.ArrayList<>();
    Path keyDir;
    Path temporaryStateDir;
    Path temporaryKeyDir;

    void closeAll(Throwable failure) {
      Failures failures = new Failures();
      List<AutoCloseable> parts = new java.util.ArrayList<>(workers);
      parts.addAll(java.util.Arrays.asList(publisher, orchestrator, nodes, kafka));
      for (AutoCloseable part : parts) {
        if (part != null) {
          failures.run(() -> {
            try {
              part.close();
            } catch (RuntimeException e) {
              throw e;
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
        }
      }
      failures.run(() -> Directories.deleteRecursively(temporaryStateDir));
      failures.run(() -> Directories.deleteRecursively(temporaryKeyDir));
      failures.addTo(failure);
    }
  }

  private static LocalControlPlane start(Builder s) {
    Parts p = new Parts();
    p.settings = s;
    try {
      SigningKey key = s.withPublisher ? publisherKey(s, p) : null;
      startBroker(s, p);
      if (s.withNodes) {
        startNodes(s, p);
      }
      startOrchestrator(s, p);
      if (s.withPublisher) {
        startPublisher(s, p, key);
      }
      if (s.withWorker) {
        for (int i = 1; i <= s.workerCount; i++) {
          p.workers.add(startWorkerOf(p.config, p.nodes, i == 1 ? WORKER_ID : WORKER_ID + "-" + i, s.workerLimits,
              s.workerTuning, s.grace, s.startupTimeout, key));
        }
      }
      return new LocalControlPlane(p);
    } catch (RuntimeException e) {
      p.closeAll(e);
      throw e;
    }
  }

  /**
   * The publisher's key first: a bad key file in the data directory is refused before anything starts. It lives with
   * the other files in the data directory, or in a temporary directory deleted on close like everything else.
   */
  private static SigningKey publisherKey(Builder s, Parts p) {
    try {
      if (s.dataDir != null) {
        p.keyDir = Files.createDirectories(s.dataDir);
      } else {
        p.keyDir = p.temporaryKeyDir = Files.createTempDirectory("ringshift-dev-key-");
      }
      if (s.signingKey != null) {
        s.signingKey.write(p.keyDir.resolve(KEY_FILE), p.keyDir.resolve(PUBLIC_KEY_FILE));
        return s.signingKey;
      }
      return publisherKey(p.keyDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the publisher's key: " + e.getMessage(), e);
    }
  }

  private static void startBroker(Builder s, Parts p) {
    if (s.existingBootstrap != null) {
      p.bootstrapServers = s.existingBootstrap;
      return;
    }
    EmbeddedKafka.Builder builder = EmbeddedKafka.builder().port(s.port).startupTimeout(s.startupTimeout);
    if (s.dataDir != null) {
      builder.dataDir(s.dataDir.resolve("kafka"));
    }
    try {
      p.kafka = builder.build().start();
    } catch (EmbeddedKafkaException e) {
      LocalPlaneException.Reason reason = switch (e.reason()) {
        case PORT_IN_USE -> LocalPlaneException.Reason.PORT_IN_USE;
        case INVALID_DATA_DIR -> LocalPlaneException.Reason.BAD_DATA_DIR;
        default -> LocalPlaneException.Reason.START_FAILED;
      };
      throw new LocalPlaneException(reason, reason.badInput() ? e.getMessage()
          : "the broker did not start: " + e.getMessage(), e);
    }
    p.bootstrapServers = p.kafka.bootstrapServers();
  }

  private static void startNodes(Builder s, Parts p) {
    PublishedRingView ring = PublishedRingView.none();
    if (s.withPublisher) {
      // The nodes follow the cluster's published ring, trusting this plane's publisher key.
      RingClientConfig.Builder follow = RingClientConfig.builder()
          .bootstrapServers(p.bootstrapServers)
          .clusterId(s.clusterId)
          .topic(s.topicPrefix + RingClientConfig.DEFAULT_TOPIC)
          .epochsTopic(s.topicPrefix + RingClientConfig.DEFAULT_EPOCHS_TOPIC)
          .participantsTopic(s.topicPrefix + RingClientConfig.DEFAULT_PARTICIPANTS_TOPIC)
          .reportAsNode("local-plane") // one view for every in-process node
          .trustedKeyFiles(p.keyDir.resolve(PUBLIC_KEY_FILE));
      if (s.dataDir != null) {
        follow.persistFile(s.dataDir.resolve("nodes").resolve("ring-snapshot.bin"));
      }
      ring = PublishedRingView.follow(follow.build());
    }
    try {
      p.nodes = s.nodeCount > 0 ? LocalNodes.startNumbered(s.nodeCount, s.spareCount, s.nodePort, s.dataDir, ring)
          : LocalNodes.in(s.dataDir, ring);
    } catch (io.ringshift.storage.StoreException e) {
      throw new LocalPlaneException(LocalPlaneException.Reason.START_FAILED, "the storage nodes did not start: "
          + e.getMessage(), e);
    }
  }

  private static void startOrchestrator(Builder s, Parts p) {
    // Created once the broker runs, so that a broker that cannot start (a port in use) leaves nothing behind.
    Path stateDir;
    try {
      if (s.dataDir != null) {
        stateDir = Files.createDirectories(s.dataDir.resolve("streams"));
      } else {
        stateDir = p.temporaryStateDir = Files.createTempDirectory("ringshift-streams-");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the orchestrator's state directory: " + e.getMessage(), e);
    }
    p.config = new OrchestratorConfig(p.bootstrapServers, s.applicationId, stateDir, Topics.withPrefix(s.topicPrefix),
        3, (short) 1, s.clusterBytes);
    p.orchestrator = new Orchestrator(p.config);
    try {
      if (s.dataDir != null && p.kafka != null) {
        removeStaleMembers(p.bootstrapServers, s.applicationId, s.startupTimeout);
      }
      p.orchestrator.start(s.startupTimeout);
    } catch (IllegalStateException e) {
      throw new LocalPlaneException(LocalPlaneException.Reason.START_FAILED, "the orchestrator did not start: "
          + e.getMessage(), e);
    }
  }

  private static void startPublisher(Builder s, Parts p, SigningKey key) {
    PublisherConfig config = PublisherConfig.of(p.bootstrapServers, key)
        .withTopics(p.config.topics())
        .withTimeout(s.startupTimeout)
        .withTransitionStages(s.transitionStages);
    if (!s.applicationId.equals(OrchestratorConfig.DEFAULT_APPLICATION_ID)) {
      // Planes sharing a broker (tests) each need their own transactional id, or they would fence each other.
      config = config.withTransactionalId(s.applicationId + "-publisher");
    }
    p.publisher = new SnapshotPublisher(config);
    try {
      p.publisher.start();
    } catch (RuntimeException e) {
      throw new LocalPlaneException(LocalPlaneException.Reason.START_FAILED, "the snapshot publisher did not start "
          + "against " + p.bootstrapServers + ": " + e.getMessage(), e);
    }
  }

  private static MigrationWorker startWorkerOf(OrchestratorConfig config, LocalNodes nodes, String workerId,
      Limits limits, TaskTuning tuning, Duration grace, Duration startupTimeout, SigningKey publisherKey) {
    WorkerConfig workerConfig = WorkerConfig.of(config.bootstrapServers(), workerId, nodes.directory())
        .withTopics(config.topics())
        .withLimits(limits)
        .withTuning(tuning)
        .withGrace(grace)
        .withStartTimeout(startupTimeout)
        .withTrustedKeys(publisherKey == null ? null : TrustedKeys.of(publisherKey.publicKey()))
        .withNodeSecret(nodes.secret());
    MigrationWorker worker = new MigrationWorker(workerConfig);
    try {
      worker.start();
    } catch (RuntimeException e) {
      worker.close();
      throw new LocalPlaneException(LocalPlaneException.Reason.START_FAILED, "the migration worker did not start "
          + "against " + config.bootstrapServers() + ": " + e.getMessage(), e);
    }
    return worker;
  }

  /**
   * Starts another worker with {@code config}, reaching the nodes of its directory over HTTP as deployed, on
   * {@code clock}; the plane owns it and closes it first.
   */
  public synchronized MigrationWorker startWorker(WorkerConfig workerConfig, Clock clock) {
    MigrationWorker started = new MigrationWorker(workerConfig,
        NodeStores.remote(workerConfig.nodes(), workerConfig.nodeSecret(), Duration.ofSeconds(10)), clock).start();
    laterWorkers.push(started);
    return started;
  }

  /**
   * The publisher's key in {@code dir}: read from {@value #KEY_FILE}, or made and written there with its public key
   * in {@value #PUBLIC_KEY_FILE} on the first start (the public file is written again if it is missing).
   *
   * @throws LocalPlaneException {@link LocalPlaneException.Reason#BAD_KEY_FILE} when {@value #KEY_FILE} exists but is
   *     not a signing key
   */
  public static SigningKey publisherKey(Path dir) throws IOException {
    Path keyFile = dir.resolve(KEY_FILE);
    Path publicFile = dir.resolve(PUBLIC_KEY_FILE);
    if (!Files.exists(keyFile)) {
      SigningKey key = SigningKey.generate();
      key.write(keyFile, publicFile);
      return key;
    }
    SigningKey key;
    try {
      key = SigningKey.read(keyFile);
    } catch (IllegalArgumentException e) {
      throw new LocalPlaneException(LocalPlaneException.Reason.BAD_KEY_FILE, e.getMessage() + "; it is the "
          + "publisher's key of this dev directory: restore it, or delete " + keyFile + " and " + publicFile
          + " to make a new one (clients then trust the new " + PUBLIC_KEY_FILE + ")", e);
    }
    if (!Files.exists(publicFile)) {
      key.write(keyFile, publicFile);
    }
    return key;
  }

  /**
   * Kafka Streams does not leave its consumer group when it closes (so that a quick restart keeps its tasks), so
   * after a restart on kept data the group still lists the previous run's member until its session times out
   * (45 s), and the new orchestrator waits that long for its first assignment. The broker was started a moment
   * ago by this process, so no live orchestrator can be in the group: its members are stale and are removed.
   */
  static void removeStaleMembers(String bootstrap, String groupId, Duration timeout) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      ConsumerGroupDescription group;
      try {
        group = admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId)
            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof GroupIdNotFoundException) {
          return; // never ran on this data
        }
        throw new IllegalStateException("cannot describe consumer group " + groupId + ": " + e.getCause(), e);
      }
      if (group.members().isEmpty()) {
        return;
      }
      RemoveMembersFromConsumerGroupOptions all = new RemoveMembersFromConsumerGroupOptions();
      all.reason("ringshift dev restarted; the previous orchestrator is gone");
      admin.removeMembersFromConsumerGroup(groupId, all).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("cannot remove the previous run's members from consumer group " + groupId
          + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while preparing consumer group " + groupId, e);
    }
  }

  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** The embedded broker's log directory, or empty on a broker given by address. */
  public Optional<Path> brokerDataDir() {
    return kafka == null ? Optional.empty() : Optional.of(kafka.dataDir());
  }

  public Path stateDir() {
    return config.stateDir().toAbsolutePath();
  }

  /** Whether everything lives in temporary directories that {@link #close} deletes. */
  public boolean temporary() {
    return settings.dataDir == null;
  }

  public Topics topics() {
    return config.topics();
  }

  /** The orchestrator's configuration (bootstrap, application id, topics). */
  public OrchestratorConfig orchestratorConfig() {
    return config;
  }

  /** The storage nodes, when the plane runs them. */
  public Optional<LocalNodes> nodes() {
    return Optional.ofNullable(nodes);
  }

  /** The snapshot publisher, when the plane runs one. */
  public Optional<SnapshotPublisher> publisher() {
    return Optional.ofNullable(publisher);
  }

  /** The publisher's signing key file (its public key is {@link #publicKeyFile()}), when a publisher runs. */
  public Path keyFile() {
    return keyDir.resolve(KEY_FILE).toAbsolutePath();
  }

  /** The publisher's public key file, which clients trust. */
  public Path publicKeyFile() {
    return keyDir.resolve(PUBLIC_KEY_FILE).toAbsolutePath();
  }

  /** The plane's own migration worker, when it runs one (the first, with {@link Builder#workers}). */
  public Optional<MigrationWorker> worker() {
    return Optional.ofNullable(worker);
  }

  /** The plane's own migration workers, the {@link #worker()} first; empty when it runs none. */
  public List<MigrationWorker> workers() {
    return workers;
  }

  /**
   * Stops the workers, the publisher, the orchestrator, the nodes and the broker, in that order, and deletes
   * temporary directories. Each part is stopped even when an earlier one fails to; the first failure is thrown after.
   * Idempotent, thread-safe.
   */
  @Override
  public synchronized void close() {
    if (stopped != null) {
      return;
    }
    Failures failures = new Failures();
    long[] millis = new long[5];
    Runnable[] steps = {
      () -> {
        while (!laterWorkers.isEmpty()) {
          failures.run(laterWorkers.pop()::close);
        }
        // In parallel: each waits for its tasks' last checkpoints, and one worker's wait need not add to another's.
        List<java.util.concurrent.CompletableFuture<Void>> closing = workers.stream()
            .map(w -> java.util.concurrent.CompletableFuture.runAsync(w::close)).toList();
        for (java.util.concurrent.CompletableFuture<Void> c : closing) {
          failures.run(() -> {
            try {
              c.join();
            } catch (java.util.concurrent.CompletionException e) {
              throw e.getCause() instanceof RuntimeException r ? r : e;
            }
          });
        }
      },
      () -> {
        if (publisher != null) {
          publisher.close();
        }
      },
      orchestrator::close,
      () -> {
        if (nodes != null) {
          nodes.close();
        }
      },
      () -> {
        if (kafka != null) {
          kafka.close();
        }
      }
    };
    for (int i = 0; i < steps.length; i++) {
      long start = System.nanoTime();
      failures.run(steps[i]);
      millis[i] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
    stopped = new Stopped(millis[0], millis[1], millis[2], millis[3], millis[4]);
    failures.run(() -> Directories.deleteRecursively(temporaryStateDir));
    failures.run(() -> Directories.deleteRecursively(temporaryKeyDir));
    failures.throwFirst();
  }

  /** How long each part took to stop, once {@link #close} has run; null before. */
  public synchronized Stopped stopped() {
    return stopped;
  }
}
